/**
 * The session layer: a typed, promise-based ZooKeeper session over node-zookeeper-client.
 *
 * @module
 */
export { ZkSession } from './session.js';
export type { AddWatchOptions, CallOptions, CreateCallOptions, MkdirpOptions, SessionOptions, SessionCredentials, SessionInfo, SessionEvents, SessionCounters, WaitOptions, WatchOptions } from './session.js';
export { tlsFromFiles } from './tls.js';
export type { TlsFiles, TlsMaterial, TlsOptions } from './tls.js';
export { PersistentWatch } from './persistent-watch.js';
export type { PersistentWatchEvents, PersistentWatchItem, PersistentWatchIteratorOptions, PersistentWatchReset } from './persistent-watch.js';
export { DEFAULT_RETRY, backoffDelay } from './retry.js';
export type { RetryPolicy } from './retry.js';
export { Acls, Perms } from './types.js';
export { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, digestAcl, digestAuth, digestId, type AclProvider } from './acl.js';
export type { Acl, AclResult, AuthInfo, CheckOp, CheckResult, DeleteResult, ChildrenResult, ConnectionState, CreateMode, CreateOp, CreateOptions, CreateResult, CreatedNode, DataResult, DeleteOp, NodeData, Op, OpResult, SetDataOp, SetDataResult, Stat, WatchEvent, WatchEventType, Watched } from './types.js';
export { validatePath, joinPath, parentOf } from './validate.js';
