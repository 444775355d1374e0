/**
 * The prom-client adapter: `zk_recipes_*` series in the registry you pass, from the channels.
 *
 * @module
 */
import type { SessionRequestContext } from '../observability/channels.js';
import { checkBoolean, checkOptionalFunction, checkOptions, optionKeys } from '../client/validate.js';
import { checkApi, checkBuckets, DEFAULT_BUCKETS, queueDepths, SESSION_STATES, sessionCounter, subscribeFeed, type TrackableQueue } from './feed.js';

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

const OPTION_KEYS = optionKeys<PrometheusMetricsOptions>({ client: true, registry: true, label: true, sessionRequests: true, buckets: true });

/** What {@link prometheusMetrics} returns. @group Metrics */
export interface PrometheusMetrics {
  /** Reads the queue's depth at each scrape (`zk_recipes_queue_depth`); returns a function that stops it. */
  trackQueue(queue: TrackableQueue): () => void;
  /** Unsubscribes from every channel (the series stay in the registry). */
  close(): void;
}

/**
 * Subscribes to zk-recipes' channels and keeps prom-client metrics in `registry`: acquire and
 * hold duration histograms, waiting and held gauges, lost locks, leadership, sessions by state,
 * queue puts, takes, handling, dead letters and depth. Calling it twice with one registry reuses
 * the registered metrics (no duplicate-name error); each call subscribes once, `close()` ends it.
 * @group Metrics
 */
export function prometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const o = checkOptions(options, 'prometheusMetrics', OPTION_KEYS);
  const client = checkApi(o.client, 'prometheusMetrics: client', ['Counter', 'Gauge', 'Histogram']);
  const registry = checkApi(o.registry, 'prometheusMetrics: registry', ['getSingleMetric']);
  const label = checkOptionalFunction(o.label, 'prometheusMetrics: label');
  const buckets = checkBuckets(o.buckets, 'prometheusMetrics: buckets') ?? DEFAULT_BUCKETS;
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
  const requests = checkBoolean(o.sessionRequests, 'prometheusMetrics: sessionRequests', false)
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
      for (const { queue, depth } of await queueDepths(queues)) {
        if (depth !== undefined) this.set({ queue: label === undefined ? 'queue' : label(queue.path) }, depth);
      }
    },
  });
  void depth;
  for (const s of SESSION_STATES) sessions.inc({ state: s }, 0);

  const kind = (m: { recipe: string; mode: string; path: string }): Labels => withPath({ recipe: m.recipe, mode: m.mode }, m.path);
  const unsubscribe = subscribeFeed({
    acquireStart: (c) => waiting.inc(kind(c)),
    acquireEnd: (c) => {
      waiting.dec(kind(c));
      acquire.observe(withPath({ recipe: c.recipe, mode: c.mode, outcome: c.outcome ?? 'error' }, c.path), (c.waitMs ?? 0) / 1000);
    },
    granted: (m) => held.inc(kind(m)),
    released: (m) => {
      held.dec(kind(m));
      hold.observe(kind(m), m.holdMs / 1000);
    },
    lost: (m) => {
      held.dec(kind(m));
      hold.observe(kind(m), m.holdMs / 1000);
      lost.inc(withPath({ recipe: m.recipe, reason: m.reason }, m.path));
    },
    miss: (m) => misses.inc(kind(m)),
    elected: (m) => leader.inc(withPath({}, m.path)),
    revoked: (m) => leader.dec(withPath({}, m.path)),
    sessionState: sessionCounter((state, count) => sessions.set({ state }, count)),
    ...(requests && { requestEnd: (c: SessionRequestContext) => requests.observe({ op: c.op, outcome: c.outcome ?? 'error' }, (c.durationMs ?? 0) / 1000) }),
    putEnd: (c) => puts.inc(withPath({ outcome: c.outcome ?? 'error' }, c.path), c.outcome === 'ok' ? c.items : 1),
    takeEnd: (c) => takes.inc(withPath({ outcome: c.outcome ?? 'error' }, c.path)),
    handleEnd: (c) => handle.observe(withPath({ outcome: c.outcome ?? 'failed' }, c.path), (c.durationMs ?? 0) / 1000),
    deadLetter: (m) => dead.inc(withPath({}, m.path)),
  });

  return {
    trackQueue(queue) {
      queues.add(queue);
      return () => queues.delete(queue);
    },
    close() {
      unsubscribe();
      queues.clear();
    },
  };
}
