/**
 * What the metrics adapters share: one subscription to the channels they read, each handler
 * guarded (a metrics failure never reaches `diagnostics_channel`, which would make it an
 * uncaught exception), each trace's end seen once, and only the channels a handler is given for.
 *
 * @module
 */
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { describe } from '../client/validate.js';
import { InvalidArgumentError } from '../errors.js';
import {
  CHANNELS,
  TRACING_CHANNELS,
  type AcquireContext,
  type DeadLetterMessage,
  type LeaderElectedMessage,
  type LeaderRevokedMessage,
  type LockGrantedMessage,
  type LockLostMessage,
  type LockMissMessage,
  type LockReleasedMessage,
  type QueueHandleContext,
  type QueuePutContext,
  type QueueTakeContext,
  type SessionRequestContext,
  type SessionStateMessage,
} from '../observability/channels.js';

/** The handlers of a feed; a channel is subscribed to only when its handler is given. @internal */
export interface Feed {
  acquireStart?(c: AcquireContext): void;
  /** Once per acquisition, at `error` or `asyncEnd`. */
  acquireEnd?(c: AcquireContext): void;
  granted?(m: LockGrantedMessage): void;
  released?(m: LockReleasedMessage): void;
  lost?(m: LockLostMessage): void;
  miss?(m: LockMissMessage): void;
  elected?(m: LeaderElectedMessage): void;
  revoked?(m: LeaderRevokedMessage): void;
  sessionState?(m: SessionStateMessage): void;
  requestEnd?(c: SessionRequestContext): void;
  putEnd?(c: QueuePutContext): void;
  takeEnd?(c: QueueTakeContext): void;
  handleEnd?(c: QueueHandleContext): void;
  deadLetter?(m: DeadLetterMessage): void;
}

/** The acquisition channels, one per recipe. @internal */
export const ACQUIRE_CHANNELS = [TRACING_CHANNELS.mutexAcquire, TRACING_CHANNELS.semaphoreAcquire, TRACING_CHANNELS.rwlockAcquire, TRACING_CHANNELS.leaderCampaign] as const;

/** Runs a handler so that nothing it throws reaches diagnostics_channel. @internal */
export function guard<T>(fn: (m: T) => void): (m: unknown) => void {
  return (m) => {
    try {
      fn(m as T);
    } catch {
      // An observer's failure must never break a recipe.
    }
  };
}

/** Subscribes the feed's handlers; returns the function that unsubscribes them all. @internal */
export function subscribeFeed(feed: Feed): () => void {
  const off: (() => void)[] = [];
  const on = <T>(name: string, fn: ((m: T) => void) | undefined): void => {
    if (!fn) return;
    const h = guard(fn);
    subscribe(name, h);
    off.push(() => unsubscribe(name, h));
  };
  // A context seen at error is not ended again at asyncEnd (a rejected promise publishes both).
  const ended = new WeakSet<object>();
  const onTrace = <C extends object>(name: string, start: ((c: C) => void) | undefined, end: ((c: C) => void) | undefined): void => {
    if (!start && !end) return;
    const t = tracingChannel<C, C>(name);
    const once = (c: C): void => {
      if (ended.has(c)) return;
      ended.add(c);
      end?.(c);
    };
    const handlers = { start: guard(start ?? (() => {})), asyncEnd: guard(once), error: guard(once) } as never;
    t.subscribe(handlers);
    off.push(() => t.unsubscribe(handlers));
  };
  for (const name of ACQUIRE_CHANNELS) onTrace<AcquireContext>(name, feed.acquireStart?.bind(feed), feed.acquireEnd?.bind(feed));
  on(CHANNELS.lockGranted, feed.granted?.bind(feed));
  on(CHANNELS.lockReleased, feed.released?.bind(feed));
  on(CHANNELS.lockLost, feed.lost?.bind(feed));
  on(CHANNELS.lockMiss, feed.miss?.bind(feed));
  on(CHANNELS.leaderElected, feed.elected?.bind(feed));
  on(CHANNELS.leaderRevoked, feed.revoked?.bind(feed));
  on(CHANNELS.sessionState, feed.sessionState?.bind(feed));
  onTrace<SessionRequestContext>(TRACING_CHANNELS.sessionRequest, undefined, feed.requestEnd?.bind(feed));
  onTrace<QueuePutContext>(TRACING_CHANNELS.queuePut, undefined, feed.putEnd?.bind(feed));
  onTrace<QueueTakeContext>(TRACING_CHANNELS.queueTake, undefined, feed.takeEnd?.bind(feed));
  onTrace<QueueHandleContext>(TRACING_CHANNELS.queueHandle, undefined, feed.handleEnd?.bind(feed));
  on(CHANNELS.queueDeadLetter, feed.deadLetter?.bind(feed));
  return () => {
    for (const f of off.splice(0)) f();
  };
}

/** Histogram buckets, seconds, unless given. @internal */
export const DEFAULT_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The session states, each counted (0 included) from the start. @internal */
export const SESSION_STATES = ['CONNECTING', 'CONNECTED', 'SUSPENDED', 'RECONNECTED', 'LOST', 'CLOSED'] as const;

/**
 * Counts this process's sessions in each state from their state messages, and tells `change`
 * each new count with its difference. A session's id changes on renewal, so a session is not
 * followed by id: one moves out of the previous state, if anything was counted there, into the
 * new one.
 * @internal
 */
export function sessionCounter(change: (state: string, count: number, delta: number) => void): (m: SessionStateMessage) => void {
  const counts = new Map<string, number>();
  return (m) => {
    const before = counts.get(m.previous) ?? 0;
    if (before > 0 && m.previous !== m.state) {
      counts.set(m.previous, before - 1);
      change(m.previous, before - 1, -1);
    }
    if (before > 0 && m.previous === m.state) return;
    const now = (counts.get(m.state) ?? 0) + 1;
    counts.set(m.state, now);
    change(m.state, now, 1);
  };
}

/** A queue whose depth is read when metrics are collected: `DistributedQueue` has `size()`. @group Metrics */
export interface TrackableQueue {
  /** The queue's directory. */
  readonly path: string;
  /** Items waiting now. */
  size(): Promise<number>;
}

/** The depth of each queue (undefined where its read failed). @internal */
export async function queueDepths(queues: Iterable<TrackableQueue>): Promise<{ queue: TrackableQueue; depth: number | undefined }[]> {
  const list = [...queues];
  const sizes = await Promise.all(list.map((q) => q.size().catch(() => undefined)));
  return list.map((queue, i) => ({ queue, depth: sizes[i] }));
}

/** Validates a structural API passed in (a meter, a tracer, prom-client): an object with these methods. @internal */
export function checkApi<T>(value: T | undefined, what: string, methods: readonly string[]): T {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) throw new InvalidArgumentError(`${what} must be an object with ${methods.join(', ')}, got ${describe(value)}`);
  for (const m of methods) {
    if (typeof (value as Record<string, unknown>)[m] !== 'function') throw new InvalidArgumentError(`${what} must have a ${m} function, got ${describe((value as Record<string, unknown>)[m])}`);
  }
  return value as T;
}

/** Validates histogram buckets: finite numbers, increasing; undefined when not given. @internal */
export function checkBuckets(value: unknown, what: string): readonly number[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || value.some((b, i) => typeof b !== 'number' || !Number.isFinite(b) || (i > 0 && b <= (value[i - 1] as number)))) {
    throw new InvalidArgumentError(`${what} must be a non-empty array of increasing finite numbers, got ${describe(value)}`);
  }
  return [...(value as number[])];
}
