/**
 * The history of a chaos run: what every client did and believed, what the nemesis did, and
 * what was left at the end; and {@link HistoryRecorder}, which collects it.
 *
 * Every event carries `t`, milliseconds on {@link chaosNow}'s clock (shared by every process
 * on the host), and `client`, who recorded it (`nemesis` for faults and members).
 *
 * @module
 */
import { chaosNow } from './clock.js';
import { checkName, checkObject, checkOptionalFunction, describe, need, optionKeys } from './validate.js';

/** How a lock-like workload is held: a lease count for semaphores, a side for read-write locks. */
export type LockMode = 'exclusive' | 'read' | 'write' | 'lease';

/** Fields every event has. */
export interface EventBase {
  /** When, in ms on the {@link chaosNow} clock. */
  t: number;
  /** Who recorded it: a client's name, `nemesis`, or `resource`. */
  client: string;
}

/** A client asked for a lock, lease, read or write lock, or leadership (`acquire` invoked). */
export interface WaitEvent extends EventBase {
  /** Discriminator. */
  type: 'wait';
  /** The workload's name (see {@link WorkloadSpec}). */
  workload: string;
  /** Identifies this acquisition within the client (ties wait, grant and end together). */
  attempt: string;
  /** Leases asked for (1 except for multi-lease semaphore requests). */
  leases: number;
  /** What is asked for. */
  mode: LockMode;
  /** For a multi-lock: its member lock paths, in acquisition order (sorted). */
  members?: string[];
  /** The acquisition's timeout, ms, if it has one (the `deadlock` check bounds the wait by it). */
  timeoutMs?: number;
}

/** An acquisition gave up without a grant (timeout, typed error). */
export interface WaitFailEvent extends EventBase {
  /** Discriminator. */
  type: 'wait-fail';
  /** The workload's name. */
  workload: string;
  /** The acquisition. */
  attempt: string;
  /** The error's `code` or name, and message. */
  error: string;
}

/**
 * A grant: from this instant the client believes it holds. `lostAtGrant` is true when the
 * handle's signal was already aborted when the client got it: it never believed it held.
 */
export interface GrantEvent extends EventBase {
  /** Discriminator. */
  type: 'grant';
  /** The workload's name. */
  workload: string;
  /** The acquisition. */
  attempt: string;
  /** The fencing token, as a decimal string (a bigint). */
  token: string;
  /** Leases held. */
  leases: number;
  /** What is held. */
  mode: LockMode;
  /** For a read-write lock downgrade: the attempt of the write lock it was taken from. */
  downgradeOf?: string;
  /** The session that holds it (`0x...`). */
  sessionId: string;
  /** The handle's signal was already aborted at the grant. */
  lostAtGrant: boolean;
  /** For a multi-lock: each member lock's path and fencing token (decimal string), in acquisition order; `token` is the first's. */
  members?: MultiLockMember[];
}

/** One member lock of a multi-lock grant. */
export interface MultiLockMember {
  /** The member lock's path. */
  path: string;
  /** Its fencing token, as a decimal string (a bigint). */
  token: string;
}

/** The client stops believing it holds: it is about to release, or it was told it lost. */
export interface EndEvent extends EventBase {
  /** Discriminator. */
  type: 'end';
  /** The workload's name. */
  workload: string;
  /** The acquisition. */
  attempt: string;
  /** `release`: recorded just before calling release(); `lost`: the signal aborted now. */
  why: 'release' | 'lost';
  /** The abort reason, for `lost`. */
  error?: string;
}

/**
 * An increment of a counter kept in ZooKeeper (written with `handle.multi`): `invoke` before,
 * `ok` when the transaction committed (acknowledged), `fail` when it certainly did not, `info`
 * when the outcome is unknown (the reply was lost).
 */
export interface CounterEvent extends EventBase {
  /** Discriminator. */
  type: 'counter';
  /** Phase of the operation. */
  phase: 'invoke' | 'ok' | 'fail' | 'info';
  /** The workload's name. */
  workload: string;
  /** The acquisition under which it is written. */
  attempt: string;
  /** Unique id of this write. */
  op: string;
  /** The value written (read + 1). */
  value: number;
  /** Error, for `fail` and `info`. */
  error?: string;
}

/** What the fenced resource did with a write; recorded by the resource itself, not the client. */
export interface ResourceEvent extends EventBase {
  /** Discriminator. */
  type: 'resource';
  /** The register written (one per workload). */
  register: string;
  /** The client that sent the write. */
  writer: string;
  /** The token the write carried (decimal string). */
  token: string;
  /** The value written. */
  value: number;
  /** Whether the resource accepted it (token not below the highest accepted so far). */
  accepted: boolean;
  /** The highest token accepted before this write (decimal string, `-1` when none). */
  highest: string;
}

/** A queue put: `invoke`, then `ok` (acknowledged) or `fail` (outcome unknown: it may be there). */
export interface PutEvent extends EventBase {
  /** Discriminator. */
  type: 'put';
  /** Phase. */
  phase: 'invoke' | 'ok' | 'fail';
  /** The workload's name. */
  workload: string;
  /** The item's payload: unique per put. */
  item: string;
  /** Error, for `fail`. */
  error?: string;
}

/** An at-most-once take returned `item` (`ok`), or failed (`fail`: an item may have been lost). */
export interface TakeEvent extends EventBase {
  /** Discriminator. */
  type: 'take';
  /** Phase. */
  phase: 'ok' | 'fail';
  /** The workload's name. */
  workload: string;
  /** The payload returned, for `ok`. */
  item?: string;
  /** Error, for `fail`. */
  error?: string;
}

/** An at-least-once handler was called (`deliver`) or settled (`handled`). */
export interface DeliveryEvent extends EventBase {
  /** Discriminator. */
  type: 'deliver' | 'handled';
  /** The workload's name. */
  workload: string;
  /** The payload delivered. */
  item: string;
  /** The delivery count the queue reported. */
  redeliveries: number;
  /** The item node's path (one put must make one node). */
  path?: string;
  /** For `handled`: whether the handler resolved (the item may be acknowledged) or threw. */
  outcome?: 'resolved' | 'threw';
}

/**
 * A write of the cache workload's writers (or the runner's creation of the cache root):
 * `invoke` before, `ok` with the node's resulting stat (for a create or setData), `fail` when it
 * certainly was not applied (the server refused it, or it was never sent), `info` when the
 * outcome is unknown (the reply was lost: it may have been applied). Payloads are unique per
 * write, so a state a cache reports can be traced to the write that made it.
 */
export interface CacheWriteEvent extends EventBase {
  /** Discriminator. */
  type: 'cache-write';
  /** Phase of the operation. */
  phase: 'invoke' | 'ok' | 'fail' | 'info';
  /** The workload's name. */
  workload: string;
  /** Unique id of this write (per client). */
  op: string;
  /** What it does. */
  kind: 'create' | 'set' | 'delete';
  /** The node written. */
  path: string;
  /** The payload written (create and set), unique per write. */
  data?: string;
  /** For `ok` of a create or set: the node's czxid after it (decimal string). */
  czxid?: string;
  /** For `ok` of a create or set: the node's mzxid after it (decimal string). */
  mzxid?: string;
  /** For `ok` of a create or set: the node's data version after it. */
  version?: number;
  /** Error, for `fail` and `info`. */
  error?: string;
}

/** One node as a cache held it, or as the server had it (zxids as decimal strings). */
export interface CacheNodeRecord {
  /** The node's path. */
  path: string;
  /** Its czxid. */
  czxid: string;
  /** Its mzxid. */
  mzxid: string;
  /** Its data version. */
  version: number;
  /** Its data (utf8); absent when the cache keeps stats only. */
  data?: string;
}

/** The kinds of cache the cache workload runs. */
export type CacheKind = 'tree' | 'children' | 'node';

/**
 * What a cache emitted, in the tick it emitted it: a node `added`, `changed` (with the mzxid of
 * the node it replaced) or `removed` (the node it held), or a change of its life: `initialized`,
 * `resynced`, `stale`, `sessionLost`, `error` (a retried read, or a limit crossed), and `closed`
 * when it closed without being told to.
 */
export interface CacheObservedEvent extends EventBase {
  /** Discriminator. */
  type: 'cache';
  /** The workload's name. */
  workload: string;
  /** The cache, unique in the run (`<client>/<label>`). */
  cache: string;
  /** What it emitted. */
  event: 'added' | 'changed' | 'removed' | 'initialized' | 'resynced' | 'stale' | 'sessionLost' | 'error' | 'closed';
  /** For node events: the node's path. */
  path?: string;
  /** For node events: its czxid (decimal string). */
  czxid?: string;
  /** For node events: its mzxid (decimal string). */
  mzxid?: string;
  /** For node events: its data version. */
  version?: number;
  /** For node events: its data (utf8), when the cache keeps data. */
  data?: string;
  /** For `changed`: the mzxid of the node it replaced (decimal string). */
  previousMzxid?: string;
  /** For `sessionLost` and `error`. */
  error?: string;
}

/** A cache was started: its kind, root, options and session. */
export interface CacheStartEvent extends EventBase {
  /** Discriminator. */
  type: 'cache-start';
  /** The workload's name. */
  workload: string;
  /** The cache (`<client>/<label>`). */
  cache: string;
  /** Tree, children or node cache. */
  kind: CacheKind;
  /** The path it was made on. */
  root: string;
  /** The watch mode asked for. */
  watchMode: 'auto' | 'persistent' | 'one-shot';
  /** Whether it keeps data. */
  cacheData: boolean;
  /** `ok` once start() resolved (initialized), with the watch mode it resolved to; `fail` if it rejected. */
  phase: 'invoke' | 'ok' | 'fail';
  /** The watch mode in effect, for `ok`. */
  resolvedWatchMode?: string;
  /** Error, for `fail`. */
  error?: string;
}

/**
 * A cache at the end of the run, once everything was healed and writers had stopped: its state
 * after waiting for it to be SYNCED, what it held, and a fresh read of its subtree from the
 * server (after a `sync`) taken when the two were compared (the last comparison, if the cache
 * did not catch up within the deadline).
 */
export interface CacheFinalEvent extends EventBase {
  /** Discriminator. */
  type: 'cache-final';
  /** The workload's name. */
  workload: string;
  /** The cache. */
  cache: string;
  /** Tree, children or node cache. */
  kind: CacheKind;
  /** The path it was made on. */
  root: string;
  /** Its state when compared. */
  state: string;
  /** Why it is not SYNCED, when `ready()` failed. */
  error?: string;
  /** What it held, in path order. */
  nodes: CacheNodeRecord[];
  /** Every node of its root's subtree on the server (root included when present), in path order; null if it could not be read. */
  server: CacheNodeRecord[] | null;
}

/** A connection-state change of a client's session. */
export interface SessionEvent extends EventBase {
  /** Discriminator. */
  type: 'session';
  /** The new state (CONNECTED, SUSPENDED, RECONNECTED, LOST, CLOSED). */
  state: string;
  /** The session id at that moment (`0x...`; `0x0` before the first connection). */
  sessionId: string;
}

/** Kinds of fault the {@link Nemesis} injects. */
export type FaultKind =
  | 'kill-leader'
  | 'kill-follower'
  | 'stop-leader'
  | 'stop-follower'
  | 'partition'
  | 'expire'
  | 'drop'
  | 'latency'
  | 'pause'
  | 'isolate-follower'
  | 'minority-partition'
  | 'slow-follower'
  | 'delete-waiter';

/** A fault began (`start`) or was healed (`end`). */
export interface FaultEvent extends EventBase {
  /** Discriminator. */
  type: 'fault';
  /** Phase. */
  phase: 'start' | 'end';
  /** Ties start and end together. */
  id: number;
  /** What kind of fault. */
  fault: FaultKind;
  /** Its target: `member-N` or a client's name (for `delete-waiter`, the waiter's client, or the lock's path). */
  target: string;
  /** Free text: durations, signals, outcomes. */
  detail?: string;
}

/** An ensemble member went down or came back (nemesis). */
export interface MemberEvent extends EventBase {
  /** Discriminator. */
  type: 'member';
  /** The member's server id. */
  member: number;
  /** Its new state. */
  state: 'up' | 'down';
}

/** The ensemble's leader as last seen (nemesis polls it); `null` while there is none. */
export interface LeaderEvent extends EventBase {
  /** Discriminator. */
  type: 'leader';
  /** Server id of the leader. */
  member: number | null;
}

/** Something a person should know that is not an operation: a client crashed, a phase began. */
export interface NoteEvent extends EventBase {
  /** Discriminator. */
  type: 'note';
  /** `error` marks a harness problem (a client crashed): the run's result is suspect. */
  level: 'info' | 'error';
  /** What happened. */
  message: string;
}

/**
 * A double-barrier participant's `enter` or `leave` of one round (one barrier path): `invoke`
 * before the call, `ok` when it returned, `fail` when it rejected (timeout, abort, session end).
 */
export interface BarrierEvent extends EventBase {
  /** Discriminator. */
  type: 'barrier';
  /** Phase of the call. */
  phase: 'invoke' | 'ok' | 'fail';
  /** The workload's name. */
  workload: string;
  /** Which call. */
  op: 'enter' | 'leave';
  /** The round's barrier path. */
  round: string;
  /** Error, for `fail`. */
  error?: string;
}

/**
 * A shared-count client's compare-and-set increment: `invoke` before the trySet, `ok` when it
 * was applied, `fail` when it certainly was not (refused, or never sent), `info` when its outcome
 * is unknown (sent, no reply).
 */
export interface SharedCountEvent extends EventBase {
  /** Discriminator. */
  type: 'shared-count';
  /** Phase of the call. */
  phase: 'invoke' | 'ok' | 'fail' | 'info';
  /** The workload's name. */
  workload: string;
  /** Unique id of this increment. */
  op: string;
  /** The value written (the value seen + 1). */
  value: number;
  /** For `ok`: the zxid of the write, as a decimal string. */
  zxid?: string;
  /** Error, for `fail` and `info` (absent for a refused version). */
  error?: string;
}

/** A value a shared-count client's `SharedCount` emitted as `changed`. */
export interface SharedSeenEvent extends EventBase {
  /** Discriminator. */
  type: 'shared-seen';
  /** The workload's name. */
  workload: string;
  /** The count. */
  value: number;
  /** The zxid of the write that produced it, as a decimal string. */
  zxid: string;
}

/**
 * A persistent-node client's record: its own node's `created` and `deleted` events and the
 * start of its `closing`, each with the node's path; a `probe` (a `sync` and a listing of the
 * workload's directory by any client: `present` lists the child names seen); a `delete` of
 * another client's node (the workload's own fault).
 */
export interface PersistentNodeEvent extends EventBase {
  /** Discriminator. */
  type: 'pnode';
  /** The workload's name. */
  workload: string;
  /** What happened. */
  op: 'created' | 'deleted' | 'closing' | 'probe' | 'delete';
  /** The node's path (for `probe`, the directory listed). */
  node: string;
  /** For `probe`: the child names listed. */
  present?: string[];
}

/**
 * An `AtomicNumber` update of the `atomic` workload: `invoke` before the call, `ok` when
 * it resolved (acknowledged: applied once), `fail` when it rejected in a way that applied
 * nothing (retries spent, a read failed, a deadline before the write), `info` when the outcome
 * is unknown (`OutcomeUnknownError`: applied once or not at all).
 */
export interface AtomicEvent extends EventBase {
  /** Discriminator. */
  type: 'atomic';
  /** Phase of the call. */
  phase: 'invoke' | 'ok' | 'fail' | 'info';
  /** The workload's name. */
  workload: string;
  /** Unique id of this call within the client. */
  op: string;
  /** What it adds (positive). */
  delta: number;
  /** For `ok`: the value it found and the one it wrote (decimal strings: bigints). */
  pre?: string;
  /** For `ok`: the value it wrote. */
  post?: string;
  /** For `ok`: whether it went through the promoted lock. */
  promoted?: boolean;
  /** Error, for `fail` and `info`. */
  error?: string;
}

/**
 * A group member's `start` or `close` (the `group` workload): `invoke` before the call, `ok`
 * when it returned, `fail` when it rejected. Each member id is used once: a member that closed
 * has left for good.
 */
export interface GroupOpEvent extends EventBase {
  /** Discriminator. */
  type: 'group';
  /** Phase of the call. */
  phase: 'invoke' | 'ok' | 'fail';
  /** The workload's name. */
  workload: string;
  /** Which call. */
  op: 'start' | 'close';
  /** The member's id. */
  member: string;
  /** Error, for `fail`. */
  error?: string;
}

/** A group member's view changed (its `members` event), or its last view before it closed (`final`). */
export interface GroupViewEvent extends EventBase {
  /** Discriminator. */
  type: 'group-view';
  /** The workload's name. */
  workload: string;
  /** The member whose view this is. */
  member: string;
  /** The ids in its view, sorted. */
  members: string[];
  /** Whether its view followed the server then. */
  synced: boolean;
  /** Recorded just before its close, at the end of the run. */
  final?: boolean;
}

/**
 * A service discovery call of the `discovery` workload: `invoke` before the call, `ok` when it
 * resolved, `fail` when it rejected (an update's or unregister's write may still land). Each
 * instance id is registered once; `version` is the payload's `v` the call writes (0 at register).
 */
export interface DiscoveryOpEvent extends EventBase {
  /** Discriminator. */
  type: 'discovery';
  /** Phase of the call. */
  phase: 'invoke' | 'ok' | 'fail';
  /** The workload's name. */
  workload: string;
  /** Which call. */
  op: 'register' | 'update' | 'unregister';
  /** The instance's id. */
  instance: string;
  /** The payload version written (register and update). */
  version?: number;
  /** Error, for `fail`. */
  error?: string;
}

/** A client's service cache changed (or was first loaded, or is read one last time: `final`): each instance id with its payload version. */
export interface DiscoveryViewEvent extends EventBase {
  /** Discriminator. */
  type: 'discovery-view';
  /** The workload's name. */
  workload: string;
  /** Instance id to the payload version the cache holds. */
  instances: Record<string, number>;
  /** Whether the cache followed the server then. */
  synced: boolean;
  /** Recorded just before the client closed its cache, at the end of the run. */
  final?: boolean;
}

/** One event of a chaos history. */
export type ChaosEvent =
  | DiscoveryOpEvent
  | DiscoveryViewEvent
  | GroupOpEvent
  | GroupViewEvent
  | AtomicEvent
  | SharedCountEvent
  | SharedSeenEvent
  | BarrierEvent
  | PersistentNodeEvent
  | WaitEvent
  | WaitFailEvent
  | GrantEvent
  | EndEvent
  | CounterEvent
  | ResourceEvent
  | PutEvent
  | TakeEvent
  | DeliveryEvent
  | SessionEvent
  | CacheWriteEvent
  | CacheObservedEvent
  | CacheStartEvent
  | CacheFinalEvent
  | FaultEvent
  | MemberEvent
  | LeaderEvent
  | NoteEvent;

/** An event without its stamp (`t`, `client`): what a recorder is given. */
export type ChaosEventBody = ChaosEvent extends infer E ? (E extends ChaosEvent ? Omit<E, 't' | 'client'> : never) : never;

/** The kinds of recipe a workload exercises. */
export type WorkloadKind = 'mutex' | 'semaphore' | 'rwlock' | 'latch' | 'selector' | 'queue-at-most-once' | 'queue-at-least-once' | 'cache' | 'zkr' | 'double-barrier' | 'shared-count' | 'persistent-node' | 'atomic' | 'group' | 'multilock' | 'discovery';

/** A workload of a run: its name (unique), kind, ZooKeeper path and limits. */
export interface WorkloadSpec {
  /** Unique name, used in events. */
  name: string;
  /** The recipe exercised. */
  kind: WorkloadKind;
  /** The recipe's path in ZooKeeper. */
  path: string;
  /** Leases a semaphore allows (1 for exclusive locks and leadership). */
  maxLeases: number;
  /** Path of the counter node written under the lock, if any. */
  counterPath?: string;
  /** Name of the fenced register written under the lock, if any. */
  register?: string;
  /** For a double barrier: how many participants each round waits for. */
  memberCount?: number;
  /** For the atomic workload: the `AtomicNumber`'s node (its promotion lock is `path`). */
  numberPath?: string;
  /** For the multilock workload: the member lock paths its multi-locks are drawn from (each its own mutex). */
  members?: string[];
}

/** What a client of the cache workload does: write the subtree, run caches on it, or both (a workload of one client). */
export type CacheRole = 'writer' | 'reader' | 'both';

/** Facts about the run that the checker and the report need. */
export interface RunMeta {
  /** The nemesis seed. */
  seed: number;
  /** How long faults were injected, seconds. */
  seconds: number;
  /** When the run started and ended (chaos clock). */
  startedAt: number;
  /** When the run ended (chaos clock). */
  endedAt: number;
  /** The clients' negotiated-for session timeout, ms. */
  sessionTimeoutMs: number;
  /** Every client: its name and workload. */
  clients: {
    /** The client's name. */
    name: string;
    /** Its workload's name. */
    workload: string;
    /** Its sessions (2: flow `b` on a session of its own); absent means 1. */
    sessions?: number;
    /** For the cache workload: whether it writes the subtree, runs caches on it, or both. */
    role?: CacheRole;
  }[];
  /** Every workload. */
  workloads: WorkloadSpec[];
  /** Server ids of the ensemble members. */
  members: number[];
}

/** What one ensemble member reported at the end (four-letter words). */
export interface MemberLeftovers {
  /** Server id. */
  member: number;
  /** `mntr` zk_watch_count after every client released and closed its recipes (null: no answer). */
  watches: number | null;
  /** Session ids (`0x...`) of client sessions still connected (`cons`) after the clients exited. */
  clientConnections: string[];
  /** `mntr` zk_ephemerals_count after the clients exited (null: no answer). */
  ephemerals: number | null;
  /**
   * On the leader: the sessions (`0x...`) the ensemble still tracks after the clients exited
   * (`dump`), connected or not, besides the harness's own; null on followers (or no answer).
   */
  trackedSessions: string[] | null;
  /**
   * On the leader: `mntr` zk_global_sessions (sessions in its data tree) less the harness's
   * sessions; above the tracked count when the data tree keeps sessions its tracker dropped.
   */
  globalSessions: number | null;
}

/** What was left at the end of a run. */
export interface FinalState {
  /** Each counter's final value, by workload (null: could not be read). */
  counters: Record<string, number | null>;
  /** Each atomic number's final value (a decimal string), by workload (null: could not be read); absent in histories without one. */
  numbers?: Record<string, string | null>;
  /** Items still in each queue after the drain, by workload (payloads). */
  queueItems: Record<string, string[]>;
  /** Ephemeral nodes under the run's base path after every client closed (path and owner). */
  ephemerals: {
    /** The node's path. */
    path: string;
    /** Its owner session (`0x...`). */
    owner: string;
  }[];
  /** Per member. */
  members: MemberLeftovers[];
}

/** A whole chaos history: meta, events in recording order, and the final state. */
export interface ChaosHistory {
  /** Format version. */
  version: 1;
  /** Facts about the run. */
  meta: RunMeta;
  /** Every event. */
  events: ChaosEvent[];
  /** What was left at the end (absent when the run did not get that far). */
  final?: FinalState;
}

/** Options of a {@link HistoryRecorder}. */
export interface HistoryRecorderOptions {
  /** Name stamped on events recorded through {@link HistoryRecorder.record}. */
  client: string;
  /** Called with every event (e.g. to forward it to another process); events are kept too unless `keep` is false. */
  onEvent?: (event: ChaosEvent) => void;
  /** Keep events in {@link HistoryRecorder.events}. Default true. */
  keep?: boolean;
}

/** The keys of {@link HistoryRecorderOptions}. @internal */
export const HISTORY_RECORDER_OPTION_KEYS = optionKeys<HistoryRecorderOptions>({ client: true, onEvent: true, keep: true });

/**
 * Collects the events of a chaos run. A client records its own operations with
 * {@link HistoryRecorder.record} (stamped with {@link chaosNow} and its name, at the instant of
 * the call: record a belief change in the same tick as it happens); a collector adds events
 * stamped elsewhere with {@link HistoryRecorder.add}.
 *
 * @example
 * ```ts
 * import { HistoryRecorder } from 'zk-recipes/testing';
 *
 * const recorder = new HistoryRecorder({ client: 'svc-1' });
 * recorder.record({ type: 'wait', workload: 'mutex', attempt: 'a1', leases: 1, mode: 'exclusive' });
 * ```
 */
export class HistoryRecorder {
  /** The name stamped on recorded events. */
  readonly client: string;
  /** Events kept so far, in recording order. */
  readonly events: ChaosEvent[] = [];
  readonly #onEvent: ((event: ChaosEvent) => void) | undefined;
  readonly #keep: boolean;

  /** Creates a recorder. */
  constructor(options: HistoryRecorderOptions) {
    need(options !== undefined, 'HistoryRecorder: options are required ({ client })');
    const o = checkObject(options, 'new HistoryRecorder', HISTORY_RECORDER_OPTION_KEYS);
    this.client = checkName(o.client, 'HistoryRecorder options.client');
    this.#onEvent = checkOptionalFunction(o.onEvent, 'HistoryRecorder options.onEvent');
    need(o.keep === undefined || typeof o.keep === 'boolean', `HistoryRecorder options.keep must be a boolean, got ${describe(o.keep)}`);
    this.#keep = o.keep ?? true;
  }

  /** Records `body` now, as this recorder's client; returns the stamped event. */
  record(body: ChaosEventBody, t: number = chaosNow()): ChaosEvent {
    need(body !== null && typeof body === 'object' && typeof (body as { type?: unknown }).type === 'string', `record: body must be an event without t and client, got ${describe(body)}`);
    need(typeof t === 'number' && Number.isFinite(t), `record: t must be a finite number, got ${describe(t)}`);
    const event = { ...body, t, client: this.client } as ChaosEvent;
    this.add(event);
    return event;
  }

  /** Adds an event stamped elsewhere (another process, the resource). */
  add(event: ChaosEvent): void {
    need(event !== null && typeof event === 'object' && typeof event.type === 'string' && typeof event.t === 'number' && typeof event.client === 'string', `add: event must have a type, t and client, got ${describe(event)}`);
    if (this.#keep) this.events.push(event);
    this.#onEvent?.(event);
  }

  /** The kept events sorted by time (stable: recording order breaks ties). */
  sorted(): ChaosEvent[] {
    return [...this.events].sort((a, b) => a.t - b.t);
  }
}
