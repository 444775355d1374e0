export { MultiLock, MultiLockHandle, type MultiLockEvents, type MultiLockOptions } from './multilock.js';
