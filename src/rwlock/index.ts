/**
 * The distributed read-write lock recipe.
 *
 * @module
 */
export { ReadLock, ReadWriteLock, WriteLock, type ReadWriteLockOptions } from './rwlock.js';
