/**
 * Public types of the caches: their options, events, states and the nodes they hold.
 *
 * @module
 */
import type { Stat } from '../client/types.js';
import type { BackoffOptions } from '../queue/options.js';

/**
 * Where a cache is in its life:
 * - `LATENT`: made, not started;
 * - `LOADING`: started, the first full read not finished;
 * - `SYNCED`: the copy follows the server (events arrive as changes happen);
 * - `STALE`: disconnected, or the session lost, or a re-read not finished: the copy may be
 *   behind, and is brought up to date by a full re-read once connected again;
 * - `CLOSED`: closed, by `close()` or for good (a limit crossed, the session closed).
 * @group Recipes
 */
export type CacheState = 'LATENT' | 'LOADING' | 'SYNCED' | 'STALE' | 'CLOSED';

/**
 * How a cache learns of changes:
 * - `persistent`: one persistent watch (recursive for a tree or children cache), ZooKeeper 3.6+;
 * - `one-shot`: a data and a child watch per node, set again after each fires (every server);
 * - `auto` (the default): `persistent`, falling back to `one-shot` on a server without
 *   persistent watches.
 * @group Recipes
 */
export type CacheWatchMode = 'auto' | 'persistent' | 'one-shot';

/** One node as a cache holds it. Immutable: a change replaces the object. @group Recipes */
export interface CachedNode {
  /** Full path (without the session's chroot). */
  readonly path: string;
  /** The node's metadata as last read. */
  readonly stat: Stat;
  /** The node's data as last read; `undefined` when the cache keeps stats only (`cacheData: false`). */
  readonly data: Buffer | undefined;
}

/** Options shared by every cache. @group Recipes */
export interface CacheOptions {
  /** Keep each node's data (default true); false keeps stats only (cheaper reads, no data in events). */
  cacheData?: boolean;
  /** How changes are learnt; see {@link CacheWatchMode}. Default `auto`. */
  watchMode?: CacheWatchMode;
  /** Reads in flight at once while loading or re-reading (default 64, at least 1). */
  concurrency?: number;
  /**
   * Most nodes held (default unbounded). Crossing it emits a `CacheLimitError` as `error` and
   * closes the cache: a partial copy would break what the cache promises.
   */
  maxNodes?: number;
  /** Most bytes held, paths and data counted (default unbounded). Crossing it does as `maxNodes`. */
  maxBytes?: number;
  /** Backoff of a failed read or watch registration, retried until `close()` (default 100 ms doubling to 5 s, jittered). */
  errorBackoff?: BackoffOptions;
}

/** Options of a {@link TreeCache}. @group Recipes */
export interface TreeCacheOptions extends CacheOptions {
  /** Levels below the root held (default unbounded; 0 holds the root only, 1 its children too). */
  maxDepth?: number;
}

/** Options of `start()` and `ready()`. @group Recipes */
export interface CacheWaitOptions {
  /** Gives up after this many ms (`OperationTimeoutError`). */
  timeoutMs?: number;
  /** Gives up when it aborts (its reason). */
  signal?: AbortSignal;
}

/** Options of a cache's async iterator ({@link Cache.events}). @group Recipes */
export interface CacheIteratorOptions {
  /**
   * Events kept for a slow consumer (default 10000). When full, the buffered events are dropped
   * for one `snapshot` item holding the whole copy at that moment: the consumer catches up from
   * it, and memory stays bounded.
   */
  bufferSize?: number;
  /** Begin with a `snapshot` of the copy as it is (default false). */
  snapshot?: boolean;
}

/** A node appeared in the copy. @group Recipes */
export interface CacheAdded {
  /** Discriminator. */
  readonly type: 'added';
  /** The node as read. */
  readonly node: CachedNode;
}

/** A node's data changed. @group Recipes */
export interface CacheChanged {
  /** Discriminator. */
  readonly type: 'changed';
  /** The node as now read. */
  readonly node: CachedNode;
  /** What the copy held before. */
  readonly previous: CachedNode;
}

/** A node left the copy. @group Recipes */
export interface CacheRemoved {
  /** Discriminator. */
  readonly type: 'removed';
  /** The node as last held. */
  readonly node: CachedNode;
}

/** A milestone of the copy: see {@link CacheEvents} for each. @group Recipes */
export interface CacheMilestone {
  /** Which one. */
  readonly type: 'initialized' | 'resynced' | 'stale';
}

/** The session was lost. @group Recipes */
export interface CacheSessionLost {
  /** Discriminator. */
  readonly type: 'sessionLost';
  /** The session's error. */
  readonly error: Error;
}

/** The whole copy at one moment: where an iterator begins, or what replaces events it had no room for. @group Recipes */
export interface CacheSnapshot {
  /** Discriminator. */
  readonly type: 'snapshot';
  /** Every node held. */
  readonly nodes: readonly CachedNode[];
}

/** What a cache's async iterator yields: one of its events, or a `snapshot`. @group Recipes */
export type CacheEvent = CacheAdded | CacheChanged | CacheRemoved | CacheMilestone | CacheSessionLost | CacheSnapshot;

/**
 * Typed events of a cache. Per node, `added`, `changed` and `removed` come in the server's
 * order (zxid), with no duplicate; nothing orders events of different nodes.
 * @group Recipes
 */
export interface CacheEvents {
  /** A node appeared in the copy (during the first load too). */
  added: (node: CachedNode) => void;
  /** A node's data changed (its `mzxid` moved); `previous` is what the copy held. */
  changed: (node: CachedNode, previous: CachedNode) => void;
  /** A node left the copy: deleted on the server (a deletion and re-creation is `removed` then `added`). */
  removed: (node: CachedNode) => void;
  /** The first full read after `start()` finished: exactly once per start, even for an absent or empty root. */
  initialized: () => void;
  /** A full re-read (after a reconnect or a new session) finished: the copy equals the server's as of that read. */
  resynced: () => void;
  /** Disconnected: the copy may fall behind until the next `resynced`. */
  stale: () => void;
  /** The session was lost (its watches with it); a new one is re-read in full, if the session renews. */
  sessionLost: (error: Error) => void;
  /** A read failed (retried with backoff), a listener threw, or a limit was crossed (then the cache closes). */
  error: (error: Error) => void;
}
