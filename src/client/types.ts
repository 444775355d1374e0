/**
 * Plain data types of the session layer: node metadata, modes, ACLs, watch events and
 * transaction operations.
 *
 * @module
 */

/**
 * How a znode is created. Container and TTL nodes are not offered: the underlying
 * node-zookeeper-client silently creates them as persistent nodes.
 * @group Sessions
 */
export type CreateMode = 'PERSISTENT' | 'EPHEMERAL' | 'PERSISTENT_SEQUENTIAL' | 'EPHEMERAL_SEQUENTIAL' | 'CONTAINER' | 'PERSISTENT_WITH_TTL' | 'PERSISTENT_SEQUENTIAL_WITH_TTL';

/** The wire values of each {@link CreateMode}. @group Sessions */
export const CREATE_MODE_FLAGS: Readonly<Record<CreateMode, number>> = {
  PERSISTENT: 0,
  EPHEMERAL: 1,
  PERSISTENT_SEQUENTIAL: 2,
  EPHEMERAL_SEQUENTIAL: 3,
  CONTAINER: 4,
  PERSISTENT_WITH_TTL: 5,
  PERSISTENT_SEQUENTIAL_WITH_TTL: 6,
};

/** Permission bits of an ACL entry (combine with `|`). @group Sessions */
export const Perms = {
  /** May read data and list children. */
  READ: 1,
  /** May set data. */
  WRITE: 2,
  /** May create children. */
  CREATE: 4,
  /** May delete children. */
  DELETE: 8,
  /** May set the ACL. */
  ADMIN: 16,
  /** All of the above. */
  ALL: 31,
} as const;

/** One ACL entry: a permission mask granted to an identity (`scheme` + `id`). @group Sessions */
export interface Acl {
  /** Bit mask of {@link Perms}. */
  perms: number;
  /** The auth scheme, e.g. `world`, `auth`, `digest`, `ip`. */
  scheme: string;
  /** The identity within the scheme, e.g. `anyone` for `world`. */
  id: string;
}

/** Ready-made ACLs. @group Sessions */
export const Acls = {
  /** Anyone may do anything (ZooKeeper's `OPEN_ACL_UNSAFE`; the default). */
  OPEN: [{ perms: Perms.ALL, scheme: 'world', id: 'anyone' }] as readonly Acl[],
  /** Only the creator's authenticated identities (requires auth info on the session). */
  CREATOR_ALL: [{ perms: Perms.ALL, scheme: 'auth', id: '' }] as readonly Acl[],
  /** Anyone may read, nobody may write. */
  READ_ONLY: [{ perms: Perms.READ, scheme: 'world', id: 'anyone' }] as readonly Acl[],
} as const;

/** A znode's metadata, with zxids as `bigint` and times as epoch milliseconds. @group Sessions */
export interface Stat {
  /** zxid of the transaction that created the node; unique and ordered across the ensemble. */
  czxid: bigint;
  /** zxid of the last data change. */
  mzxid: bigint;
  /** zxid of the last change to the children list. */
  pzxid: bigint;
  /** Creation time, epoch ms. */
  ctime: number;
  /** Last modification time, epoch ms. */
  mtime: number;
  /** Number of data changes. */
  version: number;
  /** Number of changes to the children. */
  cversion: number;
  /** Number of ACL changes. */
  aversion: number;
  /** Session id of the owner for an ephemeral node, `0n` otherwise. */
  ephemeralOwner: bigint;
  /** Length of the data in bytes. */
  dataLength: number;
  /** Number of children. */
  numChildren: number;
}

/** What a watch reports. @group Sessions */
export type WatchEventType = 'NODE_CREATED' | 'NODE_DELETED' | 'NODE_DATA_CHANGED' | 'NODE_CHILDREN_CHANGED';

/** A fired one-shot watch. @group Sessions */
export interface WatchEvent {
  /** What happened to the node. */
  type: WatchEventType;
  /** The watched path (without chroot). */
  path: string;
}

/** A read that also set a one-shot watch, registered atomically with the read. @group Sessions */
export interface Watched<T> {
  /** The read's result. */
  result: T;
  /**
   * Settles when the watch fires. Rejects with `SessionExpiredError` when the session is lost,
   * `ClosedError` on close, or the abort reason when the read's `signal` aborts (the server-side
   * watch is then removed too).
   */
  changed: Promise<WatchEvent>;
}

/** Result of `getData`. @group Sessions */
export interface DataResult {
  /** The node's data (empty when none). */
  data: Buffer;
  /** The node's metadata. */
  stat: Stat;
}

/** Result of `getAcl`. @group Sessions */
export interface AclResult {
  /** The node's ACL. */
  acl: Acl[];
  /** The node's metadata (its `aversion` is the ACL's version). */
  stat: Stat;
}

/** Result of `getChildren`. @group Sessions */
export interface ChildrenResult {
  /** Child names (not full paths), in the server's (unspecified) order. */
  children: string[];
  /** The parent's metadata. */
  stat: Stat;
}

/** Authentication sent on every (re)connect. @group Sessions */
export interface AuthInfo {
  /** The scheme, e.g. `digest`. */
  scheme: string;
  /** The scheme's credentials, e.g. `user:password` for `digest`. */
  credentials: string;
}

/** Data accepted by writes: bytes, or a string written as UTF-8. @group Sessions */
export type NodeData = Uint8Array | string;

/** Options of `create`. @group Sessions */
export interface CreateOptions {
  /** Node data; empty by default. */
  data?: NodeData;
  /**
   * Creation mode; `PERSISTENT` by default. `CONTAINER` (ZooKeeper 3.5.3+): the server deletes
   * the node some time after its last child is gone (its container check, every minute by
   * default). `PERSISTENT_WITH_TTL` and `PERSISTENT_SEQUENTIAL_WITH_TTL` (3.5.3+, where the
   * server runs with `zookeeper.extendedTypesEnabled=true`): deleted once unchanged and
   * childless for `ttlMs`. Not in a transaction.
   */
  mode?: CreateMode;
  /** Time to live of a `*_WITH_TTL` node, ms (required for those modes, refused for the others). */
  ttlMs?: number;
  /** ACL; {@link Acls.OPEN} by default. */
  acl?: readonly Acl[];
}

/** Transaction op: create a node. @group Sessions */
export interface CreateOp extends CreateOptions {
  /** Discriminator. */
  type: 'create';
  /** Path of the node to create. */
  path: string;
}

/** Transaction op: delete a node (at `version`, or any version when -1 or omitted). @group Sessions */
export interface DeleteOp {
  /** Discriminator. */
  type: 'delete';
  /** Path of the node to delete. */
  path: string;
  /** Expected version; -1 or omitted for any. */
  version?: number;
}

/** Transaction op: set a node's data (at `version`, or any version when -1 or omitted). @group Sessions */
export interface SetDataOp {
  /** Discriminator. */
  type: 'setData';
  /** Path of the node. */
  path: string;
  /** New data. */
  data: NodeData;
  /** Expected version; -1 or omitted for any. */
  version?: number;
}

/** Transaction op: require that a node exists (at `version`, if given). @group Sessions */
export interface CheckOp {
  /** Discriminator. */
  type: 'check';
  /** Path of the node. */
  path: string;
  /** Expected version; -1 or omitted for any. */
  version?: number;
}

/** One operation of a transaction (`multi`). @group Sessions */
export type Op = CreateOp | DeleteOp | SetDataOp | CheckOp;

/** Result of a create op: the actual path (with sequence suffix for sequential modes). @group Sessions */
export interface CreateResult {
  /** Discriminator. */
  type: 'create';
  /** The created node's path. */
  path: string;
}

/** Result of `createWithStat`: the created path and the new node's metadata. @group Sessions */
export interface CreatedNode extends CreateResult {
  /** The new node's metadata (its czxid is the creating transaction's zxid). */
  stat: Stat;
}

/** Result of a setData op. @group Sessions */
export interface SetDataResult {
  /** Discriminator. */
  type: 'setData';
  /** The node's new metadata. */
  stat: Stat;
}

/** The result of one operation of a successful transaction, in the order of the ops. @group Sessions */
export type OpResult = CreateResult | DeleteResult | SetDataResult | CheckResult;

/** Result of a delete op. @group Sessions */
export interface DeleteResult {
  /** Discriminator. */
  type: 'delete';
}

/** Result of a check op. @group Sessions */
export interface CheckResult {
  /** Discriminator. */
  type: 'check';
}

/**
 * Connection states, as in Curator 5.
 *
 * - `CONNECTING`: not yet connected for the first time (or for a new session after `LOST`).
 * - `CONNECTED`: a session was established (first time, or a new session after `LOST`).
 * - `SUSPENDED`: disconnected; the session may still be alive. Locks are *possibly* lost.
 * - `RECONNECTED`: the same session is back after `SUSPENDED`.
 * - `LOST`: the session expired, or was disconnected for the whole session timeout so the server
 *   may have expired it. Everything ephemeral is lost; a new session is started.
 * - `READ_ONLY`: connected to a read-only server. Never emitted with node-zookeeper-client, which
 *   does not request read-only mode; kept for API parity with Curator.
 * - `CLOSED`: `close()` was called.
 * @group Sessions
 */
export type ConnectionState =
  | 'CONNECTING'
  | 'CONNECTED'
  | 'SUSPENDED'
  | 'RECONNECTED'
  | 'LOST'
  | 'READ_ONLY'
  | 'CLOSED';
