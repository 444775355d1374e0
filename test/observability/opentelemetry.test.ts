// zk-recipes/metrics' OpenTelemetry adapters on a real server: the data points an SDK meter
// exports and the spans an SDK tracer records after a contended run, a timeout, a miss, a lock
// lost by a forced session expiry, the other recipes and a queue; a throwing tracer or meter
// never breaks an acquisition.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, DataPointType, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DistributedQueue, InvalidArgumentError, LeaderLatch, LockTimeoutError, Mutex, ReadWriteLock, Semaphore } from '../../src/index.js';
import { openTelemetryMetrics, openTelemetryTracing, type OtelMeter, type OtelTracer } from '../../src/metrics/index.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

const contextManager = new AsyncLocalStorageContextManager();
before(() => {
  context.setGlobalContextManager(contextManager.enable());
});
after(() => {
  context.disable();
});

/** A meter whose data points are read by exporting them (cumulative). */
class Meters {
  readonly exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  readonly reader = new PeriodicExportingMetricReader({ exporter: this.exporter, exportIntervalMillis: 3_600_000 });
  readonly provider = new MeterProvider({ readers: [this.reader] });
  readonly meter = this.provider.getMeter('test');

  /** The data points of `name` as last exported. */
  async points(name: string): Promise<{ attributes: Record<string, unknown>; value: unknown }[]> {
    this.exporter.reset();
    await this.reader.forceFlush();
    const metrics = this.exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    const metric = metrics.find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value }));
  }

  /** The value of the point with exactly these attributes (a histogram's count), 0 when absent. */
  async value(name: string, attributes: Record<string, string | number>): Promise<number> {
    const point = (await this.points(name)).find((p) => JSON.stringify(sorted(p.attributes)) === JSON.stringify(sorted(attributes)));
    if (point === undefined) return 0;
    return typeof point.value === 'number' ? point.value : (point.value as Histogram).count;
  }

  async unit(name: string): Promise<string | undefined> {
    await this.reader.forceFlush();
    return this.exporter
      .getMetrics()
      .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      .find((m) => m.descriptor.name === name)?.descriptor.unit;
  }
}

function sorted(o: Record<string, unknown>): [string, unknown][] {
  return Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1));
}

test('metrics: a contended run, a timeout, a miss and a lock lost by session expiry give the right data points', async () => {
  const m = new Meters();
  const path = uniquePath('otel-metrics');
  // Only this test's paths are `orders`: another session of the file is `other`.
  const metrics = openTelemetryMetrics({ meter: m.meter, label: (p) => (p === path ? 'orders' : 'other') });
  try {
    const mutex = { 'zk_recipes.recipe': 'mutex', 'zk_recipes.mode': 'exclusive', 'zk_recipes.path': 'orders' };
    const [a, b] = await fx.sessionsN(2);
    const ma = new Mutex(a!, path);
    const mb = new Mutex(b!, path);
    const ha = await ma.acquire();
    assert.equal(await m.value('zk_recipes.held', mutex), 1);
    const waiting = mb.acquire({ timeoutMs: 10_000 });
    await waitFor(async () => (await m.value('zk_recipes.waiting', mutex)) === 1, { timeoutMs: 10_000, message: 'one waiting' });
    await ha.release();
    await (await waiting).release();
    const hc = await ma.acquire();
    await assert.rejects(mb.acquire({ timeoutMs: 200 }), LockTimeoutError);
    assert.equal(await mb.tryAcquire(), null);
    await hc.release();
    const count = (outcome: string, extra: Record<string, string> = {}): Promise<number> => m.value('zk_recipes.acquire.duration', { ...mutex, 'zk_recipes.outcome': outcome, ...extra });
    assert.equal(await count('acquired'), 3);
    assert.equal(await count('timeout', { 'error.type': 'LOCK_TIMEOUT' }), 1);
    assert.equal(await count('miss'), 1);
    assert.equal(await m.value('zk_recipes.lock.miss', mutex), 1);
    assert.equal(await m.value('zk_recipes.hold.duration', mutex), 3);
    assert.equal(await m.value('zk_recipes.held', mutex), 0);
    assert.equal(await m.value('zk_recipes.waiting', mutex), 0);
    // Seconds: the timed-out wait took at least its 200 ms, and far less than a minute.
    const timeout = (await m.points('zk_recipes.acquire.duration')).find((p) => p.attributes['zk_recipes.outcome'] === 'timeout')!.value as Histogram;
    assert.ok(timeout.sum! >= 0.2 && timeout.sum! < 60, String(timeout.sum));
    assert.equal(await m.unit('zk_recipes.acquire.duration'), 's');
    // Nothing is left in ZooKeeper by the timeout and the miss.
    assert.deepEqual(await fx.children(path), []);

    const proxy = await fx.proxy();
    const victim = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
    assert.equal(await m.value('zk_recipes.sessions', { 'zk_recipes.session.state': 'CONNECTED' }), 3);
    const mv = new Mutex(victim, path);
    const hv = await mv.acquire();
    assert.equal(await m.value('zk_recipes.held', mutex), 1);
    await expireSession(victim, proxy);
    await waitFor(() => hv.signal.aborted, { timeoutMs: 15_000, message: 'the lock lost' });
    assert.equal(await m.value('zk_recipes.lock.lost', { 'zk_recipes.recipe': 'mutex', 'zk_recipes.reason': 'session', 'zk_recipes.path': 'orders' }), 1);
    assert.equal(await m.value('zk_recipes.held', mutex), 0);
    assert.equal(await m.value('zk_recipes.hold.duration', mutex), 4);
    // Through the loss (and the renewal), each session is counted in one state: ours and the one
    // expireSession opened and closed with the victim's id.
    const states = await m.points('zk_recipes.sessions');
    assert.equal(states.reduce((sum, p) => sum + (p.value as number), 0), 4, JSON.stringify(states));
    assert.equal(await m.value('zk_recipes.sessions', { 'zk_recipes.session.state': 'CLOSED' }), 1);
    assert.equal(states.length, 6);
    await Promise.all([ma.close(), mb.close(), mv.close()]);
  } finally {
    metrics.close();
    await m.provider.shutdown();
  }
});

test('metrics: leadership, queue depth read at collection, dead letters; close() unsubscribes', async () => {
  const m = new Meters();
  const base = uniquePath('otel-metrics-more');
  const metrics = openTelemetryMetrics({ meter: m.meter, label: (p) => (p.startsWith(base) ? p.slice(base.length) : 'other') });
  try {
    const [a] = await fx.sessionsN(1);
    const latch = new LeaderLatch(a!, `${base}/leader`);
    await latch.start();
    await latch.awaitLeadership({ timeoutMs: 10_000 });
    assert.equal(await m.value('zk_recipes.leader', { 'zk_recipes.path': '/leader' }), 1);
    await latch.close();
    assert.equal(await m.value('zk_recipes.leader', { 'zk_recipes.path': '/leader' }), 0);

    const q = new DistributedQueue(a!, `${base}/jobs`);
    const untrack = metrics.trackQueue(q);
    await q.put('one');
    await q.put('two');
    assert.equal(await m.value('zk_recipes.queue.depth', { 'zk_recipes.path': '/jobs' }), 2);
    assert.equal(await m.value('zk_recipes.queue.put', { 'zk_recipes.outcome': 'ok', 'zk_recipes.path': '/jobs' }), 2);
    const stop = new AbortController();
    const consuming = q.consume(
      async () => {
        throw new Error('cannot handle it');
      },
      { maxDeliveries: 1, signal: stop.signal },
    );
    await waitFor(async () => (await m.value('zk_recipes.queue.dead_letters', { 'zk_recipes.path': '/jobs' })) === 2, { timeoutMs: 15_000, message: 'two dead letters' });
    stop.abort();
    await consuming;
    assert.equal(await m.value('zk_recipes.queue.depth', { 'zk_recipes.path': '/jobs' }), 0);
    assert.equal(await m.value('zk_recipes.queue.handle.duration', { 'zk_recipes.outcome': 'failed', 'zk_recipes.path': '/jobs' }), 2);
    untrack();
    await q.close();

    // After close, acquisitions are not counted.
    metrics.close();
    const mutex = new Mutex(a!, `${base}/after`);
    await (await mutex.acquire()).release();
    await mutex.close();
    assert.equal(await m.value('zk_recipes.acquire.duration', { 'zk_recipes.recipe': 'mutex', 'zk_recipes.mode': 'exclusive', 'zk_recipes.outcome': 'acquired', 'zk_recipes.path': '/after' }), 0);
  } finally {
    metrics.close();
    await m.provider.shutdown();
  }
});

/** A tracer provider recording every span in memory. */
function recorder(): { exporter: InMemorySpanExporter; provider: BasicTracerProvider; tracer: ReturnType<BasicTracerProvider['getTracer']> } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer('test') };
}

const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan): string => s.spanContext().spanId;

test('spans: the caller\'s span parents each acquisition, a waiting one has a wait child, requests are CLIENT children with the server\'s port', async () => {
  const { exporter, provider, tracer } = recorder();
  const tracing = openTelemetryTracing({ tracer, context, trace });
  const path = uniquePath('otel-spans');
  try {
    const [a, b] = await fx.sessionsN(2);
    const ma = new Mutex(a!, path);
    const mb = new Mutex(b!, path);
    const root = tracer.startSpan('request');
    let token = '';
    await context.with(trace.setSpan(context.active(), root), async () => {
      const ha = await ma.acquire();
      let waitingNow!: () => void;
      const reported = new Promise<void>((resolve) => (waitingNow = resolve));
      const waiting = mb.acquire({ timeoutMs: 10_000, onProgress: () => waitingNow() });
      await reported;
      await ha.release();
      const hb = await waiting;
      token = hb.fencingToken.toString();
      await hb.release();
      const hc = await ma.acquire();
      await assert.rejects(mb.acquire({ timeoutMs: 200 }), LockTimeoutError);
      assert.equal(await mb.tryAcquire(), null);
      await hc.release();
    });
    root.end();
    assert.deepEqual(await fx.children(path), []);
    const spans = exporter.getFinishedSpans();
    const acquisitions = spans.filter((s) => s.name === 'zk_recipes.mutex.acquire');
    assert.deepEqual(
      acquisitions.map((s) => [s.attributes['zk_recipes.outcome'], s.attributes['zk_recipes.queue.position'], s.attributes['error.type'], s.status.code]),
      [
        ['acquired', 0, undefined, SpanStatusCode.UNSET],
        ['acquired', 1, undefined, SpanStatusCode.UNSET],
        ['acquired', 0, undefined, SpanStatusCode.UNSET],
        ['timeout', 1, 'LOCK_TIMEOUT', SpanStatusCode.ERROR],
        ['miss', 1, undefined, SpanStatusCode.UNSET],
      ],
    );
    for (const s of acquisitions) {
      assert.equal(parentOf(s), idOf(root as unknown as ReadableSpan), 'the caller\'s span is the parent');
      assert.equal(s.kind, SpanKind.INTERNAL);
      assert.equal(s.attributes['zk_recipes.recipe'], 'mutex');
      assert.equal(s.attributes['zk_recipes.path'], path);
    }
    const contended = acquisitions[1]!;
    assert.equal(contended.attributes['zk_recipes.fencing_token'], token);
    const waits = spans.filter((s) => s.name === 'wait');
    // The contended acquisition and the timed-out one waited; nothing else did.
    assert.deepEqual(
      waits.map((w) => parentOf(w)),
      [idOf(contended), idOf(acquisitions[3]!)],
    );
    const w = waits[0]!;
    const ns = (t: [number, number]): bigint => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
    // Within its acquisition, to the SDK's precision: each span anchors its clock on Date.now() (ms).
    const slack = 2_000_000n;
    assert.ok(ns(w.startTime) + slack >= ns(contended.startTime) && ns(w.endTime) <= ns(contended.endTime) + slack, 'the wait lies within its acquisition');
    assert.ok(ns(w.endTime) - ns(w.startTime) <= ns(contended.endTime) - ns(contended.startTime), 'the wait is no longer than its acquisition');
    assert.equal(w.attributes['zk_recipes.queue.position'], 1);
    assert.equal(waits[1]!.attributes['zk_recipes.outcome'], 'timeout');
    // Session requests: CLIENT spans, each acquisition's own as its children, with the server's address.
    const requests = spans.filter((s) => s.kind === SpanKind.CLIENT);
    const mine = requests.filter((r) => parentOf(r) === idOf(contended));
    assert.ok(mine.some((r) => r.name === 'zookeeper.create' && String(r.attributes['zk_recipes.path']).startsWith(`${path}/`)), mine.map((r) => r.name).join());
    for (const r of requests) {
      assert.equal(r.attributes['server.port'], fx.server.port);
      assert.equal(r.attributes['server.address'], '127.0.0.1');
    }
    // A request outside an acquisition is the active context's child (here: none, a root).
    await a!.exists(path);
    const lone = exporter.getFinishedSpans().at(-1)!;
    assert.equal(lone.name, 'zookeeper.exists');
    assert.equal(parentOf(lone), undefined);
    await Promise.all([ma.close(), mb.close()]);
  } finally {
    tracing.close();
    await provider.shutdown();
  }
});

test('spans: semaphore, read/write lock and leader campaigns; a failed request has error.type; queue spans on the messaging conventions', async () => {
  const { exporter, provider, tracer } = recorder();
  const tracing = openTelemetryTracing({ tracer, context, trace });
  const base = uniquePath('otel-recipes');
  try {
    const [a, b] = await fx.sessionsN(2);
    const sem = new Semaphore(a!, `${base}/sem`, { maxLeases: 3 });
    await (await sem.acquire(2)).release();
    const rw = new ReadWriteLock(a!, `${base}/rw`);
    await (await rw.readLock().acquire()).release();
    await (await rw.writeLock().acquire()).release();
    const first = new LeaderLatch(a!, `${base}/leader`, { participantId: 'first' });
    const second = new LeaderLatch(b!, `${base}/leader`, { participantId: 'second' });
    await first.start();
    await first.awaitLeadership({ timeoutMs: 10_000 });
    await second.start();
    await first.close();
    await second.awaitLeadership({ timeoutMs: 10_000 });
    await second.close();
    await Promise.all([sem.close(), rw.close()]);
    await assert.rejects(a!.getData(`${base}/missing`));

    const q = new DistributedQueue(a!, `${base}/jobs`);
    await q.put('one');
    assert.equal((await q.take({ timeoutMs: 10_000 })).toString(), 'one');
    assert.equal(await q.poll(), null);
    await q.put('two');
    const stop = new AbortController();
    const consuming = q.consume(async () => stop.abort(), { signal: stop.signal });
    await consuming;
    await q.close();

    const spans = exporter.getFinishedSpans();
    const summary = spans
      .filter((s) => s.name.startsWith('zk_recipes.'))
      .map((s) => `${s.name} ${s.attributes['zk_recipes.mode']} x${s.attributes['zk_recipes.leases']} ${s.attributes['zk_recipes.outcome']} @${s.attributes['zk_recipes.queue.position']}`);
    assert.deepEqual(summary, [
      'zk_recipes.semaphore.acquire shared x2 acquired @0',
      'zk_recipes.rwlock.acquire read x1 acquired @0',
      'zk_recipes.rwlock.acquire write x1 acquired @0',
      'zk_recipes.leader.campaign exclusive x1 acquired @0',
      'zk_recipes.leader.campaign exclusive x1 acquired @1',
    ]);
    for (const s of spans.filter((x) => x.name.startsWith('zk_recipes.'))) assert.match(String(s.attributes['zk_recipes.fencing_token']), /^\d+$/);
    // The second candidate waited for the first one's term to end.
    const campaigns = spans.filter((x) => x.name === 'zk_recipes.leader.campaign');
    assert.deepEqual(
      spans.filter((x) => x.name === 'wait').map((w) => parentOf(w)),
      [idOf(campaigns[1]!)],
    );
    const missing = spans.find((s) => s.name === 'zookeeper.getData' && s.attributes['zk_recipes.path'] === `${base}/missing`)!;
    assert.equal(missing.attributes['error.type'], 'NO_NODE');
    assert.equal(missing.status.code, SpanStatusCode.ERROR);

    const messaging = spans.filter((s) => s.attributes['messaging.system'] === 'zookeeper');
    assert.deepEqual(
      messaging.map((s) => [s.name, s.kind, s.attributes['messaging.operation.type'], s.attributes['messaging.destination.name'], s.attributes['zk_recipes.outcome']]),
      [
        [`put ${base}/jobs`, SpanKind.PRODUCER, 'send', `${base}/jobs`, 'ok'],
        [`take ${base}/jobs`, SpanKind.CLIENT, 'receive', `${base}/jobs`, 'taken'],
        [`poll ${base}/jobs`, SpanKind.CLIENT, 'receive', `${base}/jobs`, 'empty'],
        [`put ${base}/jobs`, SpanKind.PRODUCER, 'send', `${base}/jobs`, 'ok'],
        [`process ${base}/jobs`, SpanKind.CONSUMER, 'process', `${base}/jobs`, 'done'],
      ],
    );
    const [put, , , , processed] = messaging;
    assert.match(String(put!.attributes['messaging.message.id']), /\d{10}$/);
    assert.match(String(processed!.attributes['messaging.message.id']), /\d{10}$/);
    // The queue's own requests are the children of its spans.
    assert.ok(spans.some((s) => s.kind === SpanKind.CLIENT && parentOf(s) === idOf(put!)), 'put has request children');
  } finally {
    tracing.close();
    await provider.shutdown();
  }
});

test('a tracer or a meter that throws loses spans and points, never an acquisition, and reaches no uncaughtException', async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => void uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  const bug = (): never => {
    throw new Error('observer bug');
  };
  const badSpan = { setAttribute: bug, setStatus: bug, end: bug };
  let spansStarted = 0;
  // Every other span start throws; the spans it returns throw on every call.
  const tracer: OtelTracer = {
    startSpan: () => {
      if (spansStarted++ % 2 === 0) bug();
      return badSpan;
    },
  };
  const tracing = openTelemetryTracing({ tracer, context, trace: { setSpan: bug } });
  let armed = false;
  const maybe = (): void => {
    if (armed) bug();
  };
  const instrument = { record: maybe, add: maybe, addCallback: () => {}, removeCallback: () => {} };
  const meter: OtelMeter = { createHistogram: () => instrument, createCounter: () => instrument, createUpDownCounter: () => instrument, createObservableGauge: () => instrument };
  const metrics = openTelemetryMetrics({ meter, label: (p) => (armed ? bug() : p) });
  armed = true;
  try {
    const path = uniquePath('otel-throwing');
    const [a, b] = await fx.sessionsN(2);
    const ma = new Mutex(a!, path);
    const mb = new Mutex(b!, path);
    const ha = await ma.acquire({ timeoutMs: 10_000 });
    assert.equal(ha.isHeld, true);
    await assert.rejects(mb.acquire({ timeoutMs: 200 }), LockTimeoutError);
    await ha.release();
    const hb = await mb.acquire({ timeoutMs: 10_000 });
    await hb.release();
    await Promise.all([ma.close(), mb.close()]);
    assert.deepEqual(await fx.children(path), []);
    assert.ok(spansStarted > 4, String(spansStarted));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(uncaught, []);
  } finally {
    tracing.close();
    metrics.close();
    process.off('uncaughtException', onUncaught);
  }
});

test('bad options: a typed error before anything subscribes', async () => {
  const m = new Meters();
  const { meter } = m;
  const { tracer, provider } = recorder();
  const bad: [() => unknown, RegExp][] = [
    [() => openTelemetryMetrics(undefined as never), /meter must be an object/],
    [() => openTelemetryMetrics({ meter: {} as never }), /meter must have a createHistogram function/],
    [() => openTelemetryMetrics({ meter, label: 'orders' as never }), /label must be a function/],
    [() => openTelemetryMetrics({ meter, buckets: [1, 0.5] }), /buckets must be a non-empty array of increasing/],
    [() => openTelemetryMetrics({ meter, sessionRequests: 'yes' as never }), /sessionRequests/],
    [() => openTelemetryMetrics({ meter, lable: () => 'x' } as never), /unknown option 'lable'.*label/],
    [() => openTelemetryTracing({ tracer, context, trace: {} as never }), /trace must have a setSpan function/],
    [() => openTelemetryTracing({ tracer: undefined as never, context, trace }), /tracer must be an object/],
    [() => openTelemetryTracing({ tracer, context, trace, queue: 1 as never }), /queue/],
  ];
  for (const [call, message] of bad) assert.throws(call, (err: unknown) => err instanceof InvalidArgumentError && message.test(err.message), String(message));
  await Promise.all([m.provider.shutdown(), provider.shutdown()]);
});
