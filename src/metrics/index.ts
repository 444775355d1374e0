/**
 * Metrics for zk-recipes from its `node:diagnostics_channel` contract: a prom-client adapter that
 * registers `zk_recipes_*` series into the registry you pass. prom-client is not a dependency:
 * you pass its module, and the types below are structural, so code without prom-client compiles.
 *
 * @module
 */
import { subscribe, unsubscribe, tracingChannel } from 'node:diagnostics_channel';
import {
  CHANNELS,
  TRACING_CHANNELS,
  type AcquireContext,
  type DeadLetterMessage,
  type LeaderElectedMessage,
  type LeaderRevokedMessage,
  type LockGrantedMessage,
  type LockLostMessage,
  type LockReleasedMessage,
  type QueueHandleContext,
  type QueuePutContext,
  type QueueTakeContext,
  type SessionRequestContext,
  type SessionStateMessage,
} from '../observability/channels.js';

/** Label values of one series. @group Metrics */
export type Labels = Record<string, string>;

/** The part of a prom-client `Counter` used here. @group Metrics */
export interface PromCounter {
  /** Adds `value` (1 when omitted) to the series of `labels`. */
  inc(labels: Labels, value?: number): void;
}

/** The part of a prom-client `Gauge` used here. @group Metrics */
export interface PromGauge {
  /** Adds to the series of `labels`. */
  inc(labels: Labels, value?: number): void;
  /** Subtracts from the series of `labels`. */
  dec(labels: Labels, value?: number): void;
  /** Sets the series of `labels`. */
  set(labels: Labels, value: number): void;
}

/** The part of a prom-client `Histogram` used here. @group Metrics */
export interface PromHistogram {
  /** Records `value` in the series of `labels`. */
  observe(labels: Labels, value: number): void;
}

/** Options of a prom-client metric constructor, as used here. @group Metrics */
export interface PromMetricOptions {
  /** The metric's name. */
  name: string;
  /** Its help text. */
  help: string;
  /** Its label names. */
  labelNames: readonly string[];
  /** The registries it goes to. */
  registers: readonly PromRegistry[];
  /** Histogram buckets, seconds. */
  buckets?: readonly number[];
}

/** Options of a prom-client `Gauge` constructor, as used here. @group Metrics */
export interface PromGaugeOptions extends PromMetricOptions {
  /** Called at scrape time. */
  collect?: (this: PromGauge) => void | Promise<void>;
}

/** The part of a prom-client `Registry` used here. @group Metrics */
export interface PromRegistry {
  /** The registered metric of that name, if any. */
  getSingleMetric(name: string): unknown;
}

/** A prom-client metric class. @group Metrics */
export interface PromClass<M> {
  /** Makes and registers a metric; called with a {@link PromMetricOptions} ({@link PromGaugeOptions} for a gauge). */
  new (options: never): M;
}

/** The part of the prom-client module used here (`import * as promClient from 'prom-client'`). @group Metrics */
export interface PromClientModule {
  // Parameters typed `never` so that prom-client's own (stricter, generic) constructors fit; they
  // are called with a PromMetricOptions (a PromGaugeOptions for the gauge).
  /** prom-client's `Counter` class. */
  Counter: PromClass<PromCounter>;
  /** prom-client's `Gauge` class. */
  Gauge: PromClass<PromGauge>;
  /** prom-client's `Histogram` class. */
  Histogram: PromClass<PromHistogram>;
}

/** A queue whose depth is read at scrape time: `DistributedQueue` has `size()`. @group Metrics */
export interface TrackableQueue {
  /** The queue's directory. */
  readonly path: string;
  /** Items waiting now. */
  size(): Promise<number>;
}

/** Options of {@link prometheusMetrics}. @group Metrics */
export interface PrometheusMetricsOptions {
  /** The prom-client module. */
  client: PromClientModule;
  /** The registry to register into (never the global one unless you pass it). */
  registry: PromRegistry;
  /**
   * Maps a lock, election or queue path to a label value: keep it to a few templates. Without
   * it, paths are not labels (the `path` label is absent).
   */
  label?: (path: string) => string;
  /** Record every session request's duration (`zk_recipes_session_request_duration_seconds`); off by default. */
  sessionRequests?: boolean;
  /** Histogram buckets, seconds. */
  buckets?: readonly number[];
}

/** What {@link prometheusMetrics} returns. @group Metrics */
export interface PrometheusMetrics {
  /** Reads the queue's depth at each scrape (`zk_recipes_queue_depth`); returns a function that stops it. */
  trackQueue(queue: TrackableQueue): () => void;
  /** Unsubscribes from every channel (the series stay in the registry). */
  close(): void;
}

const STATES = ['CONNECTING', 'CONNECTED', 'SUSPENDED', 'RECONNECTED', 'LOST', 'CLOSED'] as const;
const DEFAULT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Runs a handler so that nothing it throws reaches diagnostics_channel (which would make it an uncaught exception). */
function guard<T>(fn: (m: T) => void): (m: unknown) => void {
  return (m) => {
    try {
      fn(m as T);
    } catch {
      // A metrics failure must never break a recipe.
    }
  };
}

/**
 * Subscribes to zk-recipes' channels and keeps prom-client metrics in `registry`: acquire and
 * hold duration histograms, waiting and held gauges, lost locks, leadership, sessions by state,
 * queue puts, takes, handling, dead letters and depth. Calling it twice with one registry reuses
 * the registered metrics (no duplicate-name error); each call subscribes once, `close()` ends it.
 * @group Metrics
 */
export function prometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const { client, registry, label } = options;
  const buckets = options.buckets ?? DEFAULT_BUCKETS;
  const withPath = (labels: Labels, path: string): Labels => (label === undefined ? labels : { ...labels, path: label(path) });
  const pathNames = label === undefined ? [] : ['path'];
  function metric<M>(Kind: new (o: never) => M, o: Omit<PromGaugeOptions, 'registers'>): M {
    const existing = registry.getSingleMetric(o.name);
    if (existing !== undefined) return existing as M;
    const Make = Kind as unknown as new (o: PromGaugeOptions) => M;
    return new Make({ ...o, registers: [registry] });
  }
  const acquire = metric(client.Histogram, {
    name: 'zk_recipes_acquire_duration_seconds',
    help: 'Time from the start of an acquisition to its outcome.',
    labelNames: ['recipe', 'mode', 'outcome', ...pathNames],
    buckets,
  });
  const hold = metric(client.Histogram, {
    name: 'zk_recipes_hold_duration_seconds',
    help: 'Time a lock was held, from grant to release or loss.',
    labelNames: ['recipe', 'mode', ...pathNames],
    buckets,
  });
  const waiting = metric(client.Gauge, { name: 'zk_recipes_waiting', help: 'Acquisitions waiting now.', labelNames: ['recipe', 'mode', ...pathNames] });
  const held = metric(client.Gauge, { name: 'zk_recipes_held', help: 'Locks held now by this process.', labelNames: ['recipe', 'mode', ...pathNames] });
  const lost = metric(client.Counter, { name: 'zk_recipes_lock_lost_total', help: 'Held locks lost, by reason.', labelNames: ['recipe', 'reason', ...pathNames] });
  const misses = metric(client.Counter, { name: 'zk_recipes_lock_miss_total', help: 'Try-once acquisitions that found the lock busy.', labelNames: ['recipe', 'mode', ...pathNames] });
  const leader = metric(client.Gauge, { name: 'zk_recipes_leader', help: 'Elections this process leads now.', labelNames: pathNames });
  const sessions = metric(client.Gauge, { name: 'zk_recipes_sessions', help: 'Sessions of this process in each state.', labelNames: ['state'] });
  const requests = options.sessionRequests === true
    ? metric(client.Histogram, { name: 'zk_recipes_session_request_duration_seconds', help: 'Session requests, send to reply.', labelNames: ['op', 'outcome'], buckets })
    : undefined;
  const puts = metric(client.Counter, { name: 'zk_recipes_queue_put_total', help: 'Items put, by outcome.', labelNames: ['outcome', ...pathNames] });
  const takes = metric(client.Counter, { name: 'zk_recipes_queue_take_total', help: 'Takes and polls, by outcome.', labelNames: ['outcome', ...pathNames] });
  const handle = metric(client.Histogram, { name: 'zk_recipes_queue_handle_duration_seconds', help: 'Items handled by consume, claim to done.', labelNames: ['outcome', ...pathNames], buckets });
  const dead = metric(client.Counter, { name: 'zk_recipes_queue_dead_letter_total', help: 'Items moved to the dead letters.', labelNames: pathNames });
  const queues = new Set<TrackableQueue>();
  const depth = metric(client.Gauge, {
    name: 'zk_recipes_queue_depth',
    help: 'Items waiting in the tracked queues, read at scrape time.',
    labelNames: ['queue'],
    async collect(this: PromGauge) {
      const list = [...queues];
      const sizes = await Promise.all(list.map((q) => q.size().catch(() => undefined)));
      list.forEach((q, i) => {
        const n = sizes[i];
        if (n !== undefined) this.set({ queue: label === undefined ? 'queue' : label(q.path) }, n);
      });
    },
  });
  void depth;
  for (const s of STATES) sessions.inc({ state: s }, 0);

  const off: (() => void)[] = [];
  const on = <T>(name: string, fn: (m: T) => void): void => {
    const h = guard(fn);
    subscribe(name, h);
    off.push(() => unsubscribe(name, h));
  };
  const onTrace = <C extends object>(name: string, start: (c: C) => void, end: (c: C) => void): void => {
    const t = tracingChannel<C, C>(name);
    const handlers = { start: guard(start), asyncEnd: guard(end), error: guard(end) } as never;
    t.subscribe(handlers);
    off.push(() => t.unsubscribe(handlers));
  };
  // A context seen at error is not counted again at asyncEnd (a rejected promise publishes both).
  const ended = new WeakSet<object>();
  for (const name of [TRACING_CHANNELS.mutexAcquire, TRACING_CHANNELS.semaphoreAcquire, TRACING_CHANNELS.rwlockAcquire, TRACING_CHANNELS.leaderCampaign]) {
    onTrace<AcquireContext>(
      name,
      (c) => waiting.inc(withPath({ recipe: c.recipe, mode: c.mode }, c.path)),
      (c) => {
        if (ended.has(c)) return;
        ended.add(c);
        waiting.dec(withPath({ recipe: c.recipe, mode: c.mode }, c.path));
        acquire.observe(withPath({ recipe: c.recipe, mode: c.mode, outcome: c.outcome ?? 'error' }, c.path), (c.waitMs ?? 0) / 1000);
      },
    );
  }
  on<LockGrantedMessage>(CHANNELS.lockGranted, (m) => held.inc(withPath({ recipe: m.recipe, mode: m.mode }, m.path)));
  on<LockReleasedMessage>(CHANNELS.lockReleased, (m) => {
    held.dec(withPath({ recipe: m.recipe, mode: m.mode }, m.path));
    hold.observe(withPath({ recipe: m.recipe, mode: m.mode }, m.path), m.holdMs / 1000);
  });
  on<LockLostMessage>(CHANNELS.lockLost, (m) => {
    held.dec(withPath({ recipe: m.recipe, mode: m.mode }, m.path));
    hold.observe(withPath({ recipe: m.recipe, mode: m.mode }, m.path), m.holdMs / 1000);
    lost.inc(withPath({ recipe: m.recipe, reason: m.reason }, m.path));
  });
  on<{ recipe: string; mode: string; path: string }>(CHANNELS.lockMiss, (m) => misses.inc(withPath({ recipe: m.recipe, mode: m.mode }, m.path)));
  on<LeaderElectedMessage>(CHANNELS.leaderElected, (m) => leader.inc(withPath({}, m.path)));
  on<LeaderRevokedMessage>(CHANNELS.leaderRevoked, (m) => leader.dec(withPath({}, m.path)));
  // One series per state, counting sessions in it (a session's id changes on renewal, so count
  // moves: out of the previous state, if anything was counted there, into the new one).
  const counts = new Map<string, number>();
  on<SessionStateMessage>(CHANNELS.sessionState, (m) => {
    const before = counts.get(m.previous) ?? 0;
    if (before > 0 && m.previous !== m.state) {
      counts.set(m.previous, before - 1);
      sessions.set({ state: m.previous }, before - 1);
    }
    if (before > 0 && m.previous === m.state) return;
    const now = (counts.get(m.state) ?? 0) + 1;
    counts.set(m.state, now);
    sessions.set({ state: m.state }, now);
  });
  if (requests !== undefined) {
    onTrace<SessionRequestContext>(TRACING_CHANNELS.sessionRequest, () => {}, (c) => {
      if (ended.has(c)) return;
      ended.add(c);
      requests.observe({ op: c.op, outcome: c.outcome ?? 'error' }, (c.durationMs ?? 0) / 1000);
    });
  }
  onTrace<QueuePutContext>(TRACING_CHANNELS.queuePut, () => {}, (c) => {
    if (ended.has(c)) return;
    ended.add(c);
    puts.inc(withPath({ outcome: c.outcome ?? 'error' }, c.path), c.outcome === 'ok' ? c.items : 1);
  });
  onTrace<QueueTakeContext>(TRACING_CHANNELS.queueTake, () => {}, (c) => {
    if (ended.has(c)) return;
    ended.add(c);
    takes.inc(withPath({ outcome: c.outcome ?? 'error' }, c.path));
  });
  onTrace<QueueHandleContext>(TRACING_CHANNELS.queueHandle, () => {}, (c) => {
    if (ended.has(c)) return;
    ended.add(c);
    handle.observe(withPath({ outcome: c.outcome ?? 'failed' }, c.path), (c.durationMs ?? 0) / 1000);
  });
  on<DeadLetterMessage>(CHANNELS.queueDeadLetter, (m) => dead.inc(withPath({}, m.path)));

  return {
    trackQueue(queue) {
      queues.add(queue);
      return () => queues.delete(queue);
    },
    close() {
      for (const f of off.splice(0)) f();
      queues.clear();
    },
  };
}
