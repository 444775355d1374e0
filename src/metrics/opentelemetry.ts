/**
 * The OpenTelemetry metrics adapter: `zk_recipes.*` instruments of the `Meter` you pass, from
 * the channels. `@opentelemetry/api` is not imported: the types below are the part of its
 * `Meter` used here.
 *
 * @module
 */
import type { AcquireContext, SessionRequestContext } from '../observability/channels.js';
import { checkBoolean, checkOptionalFunction, checkOptions, optionKeys } from '../client/validate.js';
import { checkApi, checkBuckets, DEFAULT_BUCKETS, queueDepths, SESSION_STATES, sessionCounter, subscribeFeed, type TrackableQueue } from './feed.js';

/** Attributes of one data point (`@opentelemetry/api`'s `Attributes`, as used here). @group Metrics */
export type OtelAttributes = Record<string, string | number | boolean>;

/** Options of an instrument, as used here (`@opentelemetry/api`'s `MetricOptions`). @group Metrics */
export interface OtelInstrumentOptions {
  /** What it measures. */
  description?: string;
  /** Its unit (UCUM: `s`, or an annotation such as `{lock}`). */
  unit?: string;
  /** Advice to the SDK: a histogram's bucket boundaries. */
  advice?: {
    /** A histogram's bucket boundaries. */
    explicitBucketBoundaries?: number[];
  };
}

/** The part of an OpenTelemetry `Histogram` used here. @group Metrics */
export interface OtelHistogram {
  /** Records `value` with `attributes`. */
  record(value: number, attributes?: OtelAttributes): void;
}

/** The part of an OpenTelemetry `Counter` or `UpDownCounter` used here. @group Metrics */
export interface OtelCounter {
  /** Adds `value` (negative for an up/down counter going down) with `attributes`. */
  add(value: number, attributes?: OtelAttributes): void;
}

/** What an observable instrument's callback is given. @group Metrics */
export interface OtelObservableResult {
  /** Reports `value` with `attributes`. */
  observe(value: number, attributes?: OtelAttributes): void;
}

/** The part of an OpenTelemetry `ObservableGauge` used here. @group Metrics */
export interface OtelObservableGauge {
  /** Adds a callback called at each collection. */
  addCallback(callback: (result: OtelObservableResult) => void | Promise<void>): void;
  /** Removes it. */
  removeCallback(callback: (result: OtelObservableResult) => void | Promise<void>): void;
}

/** The part of an OpenTelemetry `Meter` used here (`metrics.getMeter(name)` or an SDK's `MeterProvider.getMeter`). @group Metrics */
export interface OtelMeter {
  /** Makes a histogram. */
  createHistogram(name: string, options?: OtelInstrumentOptions): OtelHistogram;
  /** Makes a counter. */
  createCounter(name: string, options?: OtelInstrumentOptions): OtelCounter;
  /** Makes an up/down counter. */
  createUpDownCounter(name: string, options?: OtelInstrumentOptions): OtelCounter;
  /** Makes an observable gauge. */
  createObservableGauge(name: string, options?: OtelInstrumentOptions): OtelObservableGauge;
}

/** Options of {@link openTelemetryMetrics}. @group Metrics */
export interface OpenTelemetryMetricsOptions {
  /** The meter to make the instruments with. */
  meter: OtelMeter;
  /**
   * Maps a lock, election or queue path to an attribute value (`zk_recipes.path`): keep it to a
   * few templates. Without it, paths are not attributes.
   */
  label?: (path: string) => string;
  /** Record every session request's duration (`zk_recipes.session.request.duration`); off by default. */
  sessionRequests?: boolean;
  /** Histogram bucket boundaries, seconds (advice to the SDK; a view may override it). */
  buckets?: readonly number[];
}

const OPTION_KEYS = optionKeys<OpenTelemetryMetricsOptions>({ meter: true, label: true, sessionRequests: true, buckets: true });

/** What {@link openTelemetryMetrics} returns. @group Metrics */
export interface OpenTelemetryMetrics {
  /** Reads the queue's depth at each collection (`zk_recipes.queue.depth`); returns a function that stops it. */
  trackQueue(queue: TrackableQueue): () => void;
  /** Unsubscribes from every channel and stops reading queue depths. */
  close(): void;
}

/**
 * Subscribes to zk-recipes' channels and records OpenTelemetry metrics with `meter`: acquire and
 * hold duration histograms (seconds), waiting and held up/down counters, lost locks by reason,
 * misses, leadership, sessions by state, queue puts, takes, handling, dead letters and depth.
 * Names are `zk_recipes.*` (OpenTelemetry's dotted, snake_case style; a Prometheus exporter shows
 * them as `zk_recipes_*` with the unit as a suffix), attributes `zk_recipes.*` and `error.type`.
 * Each call subscribes once; `close()` ends it. Bad options: `InvalidArgumentError`.
 *
 * @example
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * import { openTelemetryMetrics } from 'zk-recipes/metrics';
 *
 * const zkMetrics = openTelemetryMetrics({ meter: metrics.getMeter('zk-recipes') });
 * shutdown.addEventListener('abort', () => zkMetrics.close());
 * ```
 * @group Metrics
 */
export function openTelemetryMetrics(options: OpenTelemetryMetricsOptions): OpenTelemetryMetrics {
  const o = checkOptions(options, 'openTelemetryMetrics', OPTION_KEYS);
  const meter = checkApi(o.meter, 'openTelemetryMetrics: meter', ['createHistogram', 'createCounter', 'createUpDownCounter', 'createObservableGauge']);
  const label = checkOptionalFunction(o.label, 'openTelemetryMetrics: label');
  const sessionRequests = checkBoolean(o.sessionRequests, 'openTelemetryMetrics: sessionRequests', false);
  const buckets = [...(checkBuckets(o.buckets, 'openTelemetryMetrics: buckets') ?? DEFAULT_BUCKETS)];
  const withPath = (attrs: OtelAttributes, path: string): OtelAttributes => (label === undefined ? attrs : { ...attrs, 'zk_recipes.path': label(path) });
  const kind = (m: { recipe: string; mode: string; path: string }): OtelAttributes => withPath({ 'zk_recipes.recipe': m.recipe, 'zk_recipes.mode': m.mode }, m.path);
  const seconds = (description: string): OtelInstrumentOptions => ({ description, unit: 's', advice: { explicitBucketBoundaries: buckets } });

  const acquire = meter.createHistogram('zk_recipes.acquire.duration', seconds('Time from the start of an acquisition to its outcome.'));
  const hold = meter.createHistogram('zk_recipes.hold.duration', seconds('Time a lock was held, from grant to release or loss.'));
  const waiting = meter.createUpDownCounter('zk_recipes.waiting', { description: 'Acquisitions waiting now.', unit: '{acquisition}' });
  const held = meter.createUpDownCounter('zk_recipes.held', { description: 'Locks held now by this process.', unit: '{lock}' });
  const lost = meter.createCounter('zk_recipes.lock.lost', { description: 'Held locks lost, by reason.', unit: '{lock}' });
  const misses = meter.createCounter('zk_recipes.lock.miss', { description: 'Try-once acquisitions that found the lock busy.', unit: '{acquisition}' });
  const leader = meter.createUpDownCounter('zk_recipes.leader', { description: 'Elections this process leads now.', unit: '{election}' });
  const sessions = meter.createUpDownCounter('zk_recipes.sessions', { description: 'Sessions of this process in each state.', unit: '{session}' });
  const requests = sessionRequests ? meter.createHistogram('zk_recipes.session.request.duration', seconds('Session requests, send to reply.')) : undefined;
  const puts = meter.createCounter('zk_recipes.queue.put', { description: 'Items put, by outcome.', unit: '{item}' });
  const takes = meter.createCounter('zk_recipes.queue.take', { description: 'Takes and polls, by outcome.', unit: '{take}' });
  const handle = meter.createHistogram('zk_recipes.queue.handle.duration', seconds('Items handled by consume, claim to done.'));
  const dead = meter.createCounter('zk_recipes.queue.dead_letters', { description: 'Items moved to the dead letters.', unit: '{item}' });
  const depth = meter.createObservableGauge('zk_recipes.queue.depth', { description: 'Items waiting in the tracked queues, read at collection.', unit: '{item}' });

  const queues = new Set<TrackableQueue>();
  const collectDepth = async (result: OtelObservableResult): Promise<void> => {
    // Queues mapped to one attribute set (all of them, without `label`) report their sum.
    const sums = new Map<string, number>();
    for (const { queue, depth: n } of await queueDepths(queues)) {
      if (n === undefined) continue;
      const key = label === undefined ? '' : label(queue.path);
      sums.set(key, (sums.get(key) ?? 0) + n);
    }
    for (const [key, n] of sums) result.observe(n, label === undefined ? {} : { 'zk_recipes.path': key });
  };
  depth.addCallback(collectDepth);
  for (const s of SESSION_STATES) sessions.add(0, { 'zk_recipes.session.state': s });

  const outcome = (c: AcquireContext | SessionRequestContext, fallback: string): OtelAttributes => ({
    'zk_recipes.outcome': c.outcome ?? fallback,
    ...(c.errorCode !== undefined && { 'error.type': c.errorCode }),
  });
  const unsubscribe = subscribeFeed({
    acquireStart: (c) => waiting.add(1, kind(c)),
    acquireEnd: (c) => {
      waiting.add(-1, kind(c));
      acquire.record((c.waitMs ?? 0) / 1000, { ...kind(c), ...outcome(c, 'error') });
    },
    granted: (m) => held.add(1, kind(m)),
    released: (m) => {
      held.add(-1, kind(m));
      hold.record(m.holdMs / 1000, kind(m));
    },
    lost: (m) => {
      held.add(-1, kind(m));
      hold.record(m.holdMs / 1000, kind(m));
      lost.add(1, withPath({ 'zk_recipes.recipe': m.recipe, 'zk_recipes.reason': m.reason }, m.path));
    },
    miss: (m) => misses.add(1, kind(m)),
    elected: (m) => leader.add(1, withPath({}, m.path)),
    revoked: (m) => leader.add(-1, withPath({}, m.path)),
    sessionState: sessionCounter((state, _count, delta) => sessions.add(delta, { 'zk_recipes.session.state': state })),
    ...(requests && { requestEnd: (c: SessionRequestContext) => requests.record((c.durationMs ?? 0) / 1000, { 'zk_recipes.op': c.op, ...outcome(c, 'error') }) }),
    putEnd: (c) => puts.add(c.outcome === 'ok' ? c.items : 1, withPath({ 'zk_recipes.outcome': c.outcome ?? 'error' }, c.path)),
    takeEnd: (c) => takes.add(1, withPath({ 'zk_recipes.outcome': c.outcome ?? 'error' }, c.path)),
    handleEnd: (c) => handle.record((c.durationMs ?? 0) / 1000, withPath({ 'zk_recipes.outcome': c.outcome ?? 'failed' }, c.path)),
    deadLetter: (m) => dead.add(1, withPath({}, m.path)),
  });

  return {
    trackQueue(queue) {
      queues.add(queue);
      return () => queues.delete(queue);
    },
    close() {
      unsubscribe();
      depth.removeCallback(collectDepth);
      queues.clear();
    },
  };
}
