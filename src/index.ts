/**
 * zk-recipes: ZooKeeper coordination recipes for Node.js (mutex, semaphore, read-write lock,
 * leader election, queue, caches) over one session layer. Node layout is compatible with Apache
 * Curator, so Java and Node services can share lock paths.
 *
 * Guides: [sessions](../docs/sessions.md),
 * [mutex](../docs/recipes/mutex.md), [semaphore](../docs/recipes/semaphore.md),
 * [read-write lock](../docs/recipes/rwlock.md), [leader election](../docs/recipes/leader.md),
 * [queue](../docs/recipes/queue.md), [caches](../docs/recipes/cache.md),
 * [atomic numbers](../docs/recipes/atomic.md), [group membership](../docs/recipes/group.md), [testing](../docs/testing.md).
 *
 * Test utilities (real ZooKeeper servers, ensembles, a fault-injecting proxy, forced session
 * expiry) live in the `zk-recipes/testing` export.
 *
 * Only the public API is exported here. The helpers recipes share (predicates, node-name
 * parsing, path joins, the lock recipe base class) are internal: import them from their
 * `src/` modules inside this repository, never from the package.
 *
 * @packageDocumentation
 * @module zk-recipes
 */
export * from './errors.js';

// Sessions: the one object that talks to ZooKeeper.
export { ZkSession } from './client/session.js';
export type {
  AddWatchOptions,
  CallOptions,
  CreateCallOptions,
  MkdirpOptions,
  SessionCounters,
  SessionCredentials,
  SessionEvents,
  SessionInfo,
  SessionOptions,
  WaitOptions,
  WatchOptions,
} from './client/session.js';
// TLS to a secureClientPort (the session's `tls` option).
export { tlsFromFiles, type TlsFiles, type TlsMaterial, type TlsOptions } from './client/tls.js';
export { PersistentWatch, type PersistentWatchEvents, type PersistentWatchItem, type PersistentWatchIteratorOptions, type PersistentWatchReset } from './client/persistent-watch.js';
export { DEFAULT_RETRY, type RetryPolicy } from './client/retry.js';
export { Acls, Perms } from './client/types.js';
export { saslAcl, type SaslOptions } from './client/sasl.js';
export { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, digestAcl, digestAuth, digestId, type AclProvider } from './client/acl.js';
export type {
  Acl,
  AclResult,
  AuthInfo,
  CheckOp,
  CheckResult,
  ChildrenResult,
  ConnectionState,
  CreatedNode,
  CreateMode,
  CreateOp,
  CreateOptions,
  CreateResult,
  DataResult,
  DeleteOp,
  DeleteResult,
  NodeData,
  Op,
  OpResult,
  SetDataOp,
  SetDataResult,
  Stat,
  Watched,
  WatchEvent,
  WatchEventType,
} from './client/types.js';

// What every lock-like recipe shares: the handle, options, events and participants.
export { LockHandle } from './driver/handle.js';
export type { AcquireOptions, LockEvents, LockOptions, LossPolicy, Participant, TryAcquireOptions } from './driver/lock-recipe.js';

// Recipes.
export * from './mutex/index.js';
export * from './semaphore/index.js';
export * from './rwlock/index.js';
export * from './leader/index.js';
export * from './queue/index.js';
export * from './cache/index.js';
export * from './nodes/index.js';
// Shared values and counts (Curator's SharedValue, SharedCount).
export * from './shared/index.js';
// Atomic numbers (Curator's DistributedAtomicLong).
export * from './atomic/index.js';
export * from './barrier/index.js';
export * from './multilock/index.js';
// Group membership (Curator's GroupMember).
export * from './group/index.js';

// Observability: the diagnostics channels and what they publish.
export * from './observability/index.js';
