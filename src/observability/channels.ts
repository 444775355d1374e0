/**
 * The `node:diagnostics_channel` contract: channel names and what each publishes. Subscribe with
 * `diagnostics_channel.subscribe(name, fn)` or `diagnostics_channel.tracingChannel(name)`; the
 * names and the fields below are stable (a field may be added, none removed or changed).
 * Nothing is built or published while a channel has no subscriber.
 *
 * @module
 */
import { channel, tracingChannel, type Channel, type TracingChannel } from 'node:diagnostics_channel';
import type { ConnectionState } from '../client/types.js';
import type { CacheState } from '../cache/types.js';

/**
 * Names of the tracing channels, for `diagnostics_channel.tracingChannel(name)`: each publishes
 * `tracing:<name>:start`, `:end`, `:asyncStart`, `:asyncEnd` and `:error`, with one context
 * object across them (the start fields set at `start`, the end fields by `asyncEnd` or `error`).
 * @group Observability
 */
export const TRACING_CHANNELS = {
  /** Every `Mutex` acquisition (`acquire`, `tryAcquire`, `runExclusive`): {@link AcquireContext}. */
  mutexAcquire: 'zk-recipes.mutex.acquire',
  /** Every `Semaphore` acquisition: {@link AcquireContext}, `leases` is the count asked for. */
  semaphoreAcquire: 'zk-recipes.semaphore.acquire',
  /** Every `ReadWriteLock` acquisition, read or write (`mode`): {@link AcquireContext}. */
  rwlockAcquire: 'zk-recipes.rwlock.acquire',
  /**
   * Every leadership campaign of a `LeaderLatch` or `LeaderSelector`: from entering the election
   * to being elected (`acquired`) or leaving it unelected: {@link AcquireContext}.
   */
  leaderCampaign: 'zk-recipes.leader.campaign',
  /** Every `DistributedQueue` `put` / `putAll`: {@link QueuePutContext}. */
  queuePut: 'zk-recipes.queue.put',
  /** Every `DistributedQueue` `take` / `poll`: {@link QueueTakeContext}. */
  queueTake: 'zk-recipes.queue.take',
  /** Every item handled by `DistributedQueue.consume`, from claim to done: {@link QueueHandleContext}. */
  queueHandle: 'zk-recipes.queue.handle',
  /** Every request a `ZkSession` sends (each retry is a request of its own): {@link SessionRequestContext}. */
  sessionRequest: 'zk-recipes.session.request',
} as const;

/**
 * Names of the point channels, for `diagnostics_channel.subscribe(name, fn)`.
 * @group Observability
 */
export const CHANNELS = {
  /** A lock, lease or read/write lock was granted: {@link LockGrantedMessage}. */
  lockGranted: 'zk-recipes.lock.granted',
  /** A try-once acquisition found the lock busy: {@link LockMissMessage}. */
  lockMiss: 'zk-recipes.lock.miss',
  /** A held lock was released: {@link LockReleasedMessage}. */
  lockReleased: 'zk-recipes.lock.released',
  /** A held lock was lost: {@link LockLostMessage}. */
  lockLost: 'zk-recipes.lock.lost',
  /** A waiting acquisition's place in the queue changed: {@link AcquireProgress} (only while subscribed: costs a read per change of holder). */
  lockProgress: 'zk-recipes.lock.progress',
  /** A participant became leader: {@link LeaderElectedMessage}. */
  leaderElected: 'zk-recipes.leader.elected',
  /** A leader's term ended: {@link LeaderRevokedMessage}. */
  leaderRevoked: 'zk-recipes.leader.revoked',
  /** A session changed state: {@link SessionStateMessage}. */
  sessionState: 'zk-recipes.session.state',
  /** A queue item was moved to the dead letters: {@link DeadLetterMessage}. */
  queueDeadLetter: 'zk-recipes.queue.dead-letter',
  /** A cache changed state (started, synced, stale, closed): {@link CacheStateMessage}. */
  cacheState: 'zk-recipes.cache.state',
} as const;

/** The recipes whose acquisitions are traced. @group Observability */
export type AcquireRecipe = 'mutex' | 'semaphore' | 'rwlock' | 'leader';

/** What is acquired: one holder (`exclusive`), a lease among N (`shared`), a read or a write lock. @group Observability */
export type AcquireMode = 'exclusive' | 'shared' | 'read' | 'write';

/**
 * How an acquisition ended: granted, timed out, found busy by a try-once call (`miss`), given up
 * on the caller's signal or a close (`aborted`), or failed (`error`: see `errorCode`).
 * @group Observability
 */
export type AcquireOutcome = 'acquired' | 'timeout' | 'miss' | 'aborted' | 'error';

/** Why a held lock was lost. @group Observability */
export type LockLossReason =
  /** The session ended (expired, or the loss clock ran out without proof the leader heard of it). */
  | 'session'
  /** Our node was deleted by someone else (seen by a watch, `multi()` or at release). */
  | 'node-deleted'
  /** Given up at `SUSPENDED` under `lossPolicy: 'suspended'`. */
  | 'suspended';

/**
 * The context of one acquisition trace, the same object on every sub-channel. Fields marked
 * "end" are set before `asyncEnd` (and `error`) is published.
 * @group Observability
 */
export interface AcquireContext {
  /** The recipe. */
  readonly recipe: AcquireRecipe;
  /** What is acquired. */
  readonly mode: AcquireMode;
  /** The lock's (election's) directory. */
  readonly path: string;
  /** The participant id stored in our node. */
  readonly participantId: string;
  /** The session's id at the start (0n before it first connected). */
  readonly sessionId: bigint;
  /** The deadline asked for, ms (undefined: none). */
  readonly timeoutMs: number | undefined;
  /** A try-once call (`tryAcquire`). */
  readonly nonblocking: boolean;
  /** Leases asked for (1 but for a multi-lease semaphore acquisition). */
  readonly leases: number;
  /** End: how it ended. */
  outcome?: AcquireOutcome;
  /** End: ms from start to the outcome. */
  waitMs?: number;
  /** End: nodes ahead of ours in the first listing after our node was created (0: granted at once). */
  queuePosition?: number;
  /** End, when acquired: our node's full path. */
  nodePath?: string;
  /** End, when acquired: the fencing token. */
  fencingToken?: bigint;
  /** End, on `error` (and `timeout`/`aborted` caused by one): the error's stable code, e.g. `CONNECTION_LOSS`. */
  errorCode?: string;
  /** Set by the tracing channel at `error`: what the acquisition rejected with. */
  error?: unknown;
  /** Set by the tracing channel at `asyncEnd`: what it resolved to (the handle, or null for a miss). */
  result?: unknown;
}

/**
 * Where a waiting acquisition stands, given to `onProgress` and published on
 * {@link CHANNELS}.lockProgress each time it changes.
 * @group Observability
 */
export interface AcquireProgress {
  /** The recipe. */
  readonly recipe: AcquireRecipe;
  /** What is acquired. */
  readonly mode: AcquireMode;
  /** The lock's directory. */
  readonly path: string;
  /** Our node's full path. */
  readonly nodePath: string;
  /** Nodes ahead of ours in the queue. */
  readonly position: number;
  /** The first node of the queue (a holder), full path; undefined if ours is first. */
  readonly holderPath: string | undefined;
  /** That holder's participant id (read once per holder); undefined if it is gone meanwhile. */
  readonly holderId: string | undefined;
}

/** The fields every lock point message carries. @group Observability */
export interface LockMessageBase {
  /** The recipe. */
  readonly recipe: AcquireRecipe;
  /** What is acquired. */
  readonly mode: AcquireMode;
  /** The recipe's directory (the lock's, election's or queue's). */
  readonly path: string;
  /** The session's id. */
  readonly sessionId: bigint;
}

/** The fields of a message about a held lock: its node and fencing token. @group Observability */
export interface HeldLockMessage extends LockMessageBase {
  /** Our node's full path. */
  readonly nodePath: string;
  /** The fencing token (our node's czxid). */
  readonly fencingToken: bigint;
}

/** Published on {@link CHANNELS}.lockGranted. @group Observability */
export interface LockGrantedMessage extends HeldLockMessage {
  /** The participant id stored in our node. */
  readonly participantId: string;
  /** ms from the start of the acquisition to the grant. */
  readonly waitMs: number;
}

/** Published on {@link CHANNELS}.lockMiss. @group Observability */
export interface LockMissMessage extends LockMessageBase {
  /** The participant id stored in our node. */
  readonly participantId: string;
}

/** Published on {@link CHANNELS}.lockReleased. @group Observability */
export interface LockReleasedMessage extends HeldLockMessage {
  /** ms from the grant to the end of the release. */
  readonly holdMs: number;
}

/** Published on {@link CHANNELS}.lockLost. @group Observability */
export interface LockLostMessage extends HeldLockMessage {
  /** Why. */
  readonly reason: LockLossReason;
  /** The error the handle's signal aborted with. */
  readonly error: Error;
  /** ms from the grant to the loss. */
  readonly holdMs: number;
}

/** Published on {@link CHANNELS}.leaderElected. @group Observability */
export interface LeaderElectedMessage {
  /** The election's directory. */
  readonly path: string;
  /** Our node's full path. */
  readonly nodePath: string;
  /** The term's fencing token (our node's czxid). */
  readonly term: bigint;
  /** The session's id. */
  readonly sessionId: bigint;
  /** The participant id stored in our node. */
  readonly participantId: string;
}

/** Published on {@link CHANNELS}.leaderRevoked. @group Observability */
export interface LeaderRevokedMessage {
  /** The recipe's directory (the lock's, election's or queue's). */
  readonly path: string;
  /** The term's fencing token. */
  readonly term: bigint;
  /** The session's id. */
  readonly sessionId: bigint;
  /** The participant id stored in our node. */
  readonly participantId: string;
  /** `closed` when the participant left; otherwise why the term ended. */
  readonly reason: LockLossReason | 'closed';
  /** Set by the tracing channel at `error` (or the error of the message): what it failed with. */
  readonly error: Error;
  /** ms the term lasted. */
  readonly leadMs: number;
}

/** Published on {@link CHANNELS}.sessionState. @group Observability */
export interface SessionStateMessage {
  /** The session id (0n before the first connection; the new one after a renewal). */
  readonly sessionId: bigint;
  /** The new state. */
  readonly state: ConnectionState;
  /** The state before. */
  readonly previous: ConnectionState;
  /** The connect string the session was created with. */
  readonly connectString: string;
}

/** Published on {@link CHANNELS}.queueDeadLetter. @group Observability */
export interface DeadLetterMessage {
  /** The queue's directory. */
  readonly path: string;
  /** The dead letter's full path. */
  readonly letterPath: string;
  /** How many times the item was handed out. */
  readonly attempts: number;
  /** Why (the handler's error message, or the delivery limit). */
  readonly reason: string;
}

/** Published on {@link CHANNELS}.cacheState. @group Observability */
export interface CacheStateMessage {
  /** The kind of cache. */
  readonly cache: 'node' | 'children' | 'tree';
  /** The recipe's directory (the lock's, election's or queue's). */
  readonly path: string;
  /** The new state. */
  readonly state: CacheState;
  /** The state before. */
  readonly previous: CacheState;
}

/** The context of a queue put trace. @group Observability */
export interface QueuePutContext {
  /** The queue's directory. */
  readonly path: string;
  /** Items put (1 for `put`). */
  readonly items: number;
  /** The items' priority. */
  readonly priority: number;
  /** The session's id. */
  readonly sessionId: bigint;
  /** End: `ok` or `error` (see `errorCode`), `aborted`. */
  outcome?: 'ok' | 'aborted' | 'error';
  /** End: the items' node paths. */
  itemPaths?: readonly string[];
  /** End, on error: the error's stable code (e.g. `CONNECTION_LOSS`). */
  errorCode?: string;
  /** End: ms the operation took. */
  durationMs?: number;
  /** Set by the tracing channel at `error` (or the error of the message): what it failed with. */
  error?: unknown;
  /** Set by the tracing channel at `asyncEnd`: what the operation resolved to. */
  result?: unknown;
}

/** The context of a queue take trace. @group Observability */
export interface QueueTakeContext {
  /** The recipe's directory (the lock's, election's or queue's). */
  readonly path: string;
  /** A `poll` (never waits). */
  readonly nonblocking: boolean;
  /** The deadline asked for, ms (undefined: none). */
  readonly timeoutMs: number | undefined;
  /** The session's id. */
  readonly sessionId: bigint;
  /** End: `taken`, `empty` (a poll found nothing), `timeout`, `aborted` or `error`. */
  outcome?: 'taken' | 'empty' | 'timeout' | 'aborted' | 'error';
  /** End: ms from start to the outcome. */
  waitMs?: number;
  /** End, on error: the error's stable code (e.g. `CONNECTION_LOSS`). */
  errorCode?: string;
  /** Set by the tracing channel at `error` (or the error of the message): what it failed with. */
  error?: unknown;
  /** Set by the tracing channel at `asyncEnd`: what the operation resolved to. */
  result?: unknown;
}

/** The context of one handled item of `consume`. @group Observability */
export interface QueueHandleContext {
  /** The recipe's directory (the lock's, election's or queue's). */
  readonly path: string;
  /** The claimed item's full path. */
  readonly itemPath: string;
  /** How many times it was handed out before, this one excluded. */
  readonly previousAttempts: number;
  /** End: `done` (handled and deleted), `failed` (the handler threw: retried later or dead-lettered), `lost` (the claim was lost). */
  outcome?: 'done' | 'failed' | 'lost';
  /** End: ms the operation took. */
  durationMs?: number;
  /** Set by the tracing channel at `error` (or the error of the message): what it failed with. */
  error?: unknown;
  /** Set by the tracing channel at `asyncEnd`: what the operation resolved to. */
  result?: unknown;
}

/** The context of one session request trace. @group Observability */
export interface SessionRequestContext {
  /** The request: `create`, `getData`, `multi`, `addWatch`, ... */
  readonly op: string;
  /** Its path (the first op's for a `multi`); undefined where none. */
  readonly path: string | undefined;
  /** The session's id. */
  readonly sessionId: bigint;
  /** The server it was sent to, `host:port` (`server.address`/`server.port` of a span). */
  readonly server: string | undefined;
  /** End: `ok` or `error`. */
  outcome?: 'ok' | 'error';
  /** End, on error: the error's stable code (`NO_NODE`, `CONNECTION_LOSS`, ...). */
  errorCode?: string;
  /** End: ms from send to reply. */
  durationMs?: number;
  /** Set by the tracing channel at `error` (or the error of the message): what it failed with. */
  error?: unknown;
  /** Set by the tracing channel at `asyncEnd`: what the operation resolved to. */
  result?: unknown;
}

// ---- internal: the channel objects the library publishes on --------------------------------

/** @internal */
export const tracing = {
  mutexAcquire: tracingChannel<AcquireContext, AcquireContext>(TRACING_CHANNELS.mutexAcquire),
  semaphoreAcquire: tracingChannel<AcquireContext, AcquireContext>(TRACING_CHANNELS.semaphoreAcquire),
  rwlockAcquire: tracingChannel<AcquireContext, AcquireContext>(TRACING_CHANNELS.rwlockAcquire),
  leaderCampaign: tracingChannel<AcquireContext, AcquireContext>(TRACING_CHANNELS.leaderCampaign),
  queuePut: tracingChannel<QueuePutContext, QueuePutContext>(TRACING_CHANNELS.queuePut),
  queueTake: tracingChannel<QueueTakeContext, QueueTakeContext>(TRACING_CHANNELS.queueTake),
  queueHandle: tracingChannel<QueueHandleContext, QueueHandleContext>(TRACING_CHANNELS.queueHandle),
  sessionRequest: tracingChannel<SessionRequestContext, SessionRequestContext>(TRACING_CHANNELS.sessionRequest),
} as const;

/** The acquisition channel of each recipe. @internal */
export const acquireTracing: Readonly<Record<AcquireRecipe, TracingChannel<AcquireContext, AcquireContext>>> = {
  mutex: tracing.mutexAcquire,
  semaphore: tracing.semaphoreAcquire,
  rwlock: tracing.rwlockAcquire,
  leader: tracing.leaderCampaign,
};

/** @internal */
export const points = {
  lockGranted: channel(CHANNELS.lockGranted) as Channel<LockGrantedMessage>,
  lockMiss: channel(CHANNELS.lockMiss) as Channel<LockMissMessage>,
  lockReleased: channel(CHANNELS.lockReleased) as Channel<LockReleasedMessage>,
  lockLost: channel(CHANNELS.lockLost) as Channel<LockLostMessage>,
  lockProgress: channel(CHANNELS.lockProgress) as Channel<AcquireProgress>,
  leaderElected: channel(CHANNELS.leaderElected) as Channel<LeaderElectedMessage>,
  leaderRevoked: channel(CHANNELS.leaderRevoked) as Channel<LeaderRevokedMessage>,
  sessionState: channel(CHANNELS.sessionState) as Channel<SessionStateMessage>,
  queueDeadLetter: channel(CHANNELS.queueDeadLetter) as Channel<DeadLetterMessage>,
  cacheState: channel(CHANNELS.cacheState) as Channel<CacheStateMessage>,
} as const;

/**
 * Whether anyone subscribed to any of a tracing channel's sub-channels (Node 20.13+ has
 * `hasSubscribers` on the tracing channel itself; earlier 20.x do not).
 * @internal
 */
export function traced(t: TracingChannel<object, object>): boolean {
  return t.start.hasSubscribers || t.end.hasSubscribers || t.asyncStart.hasSubscribers || t.asyncEnd.hasSubscribers || t.error.hasSubscribers;
}
