// The diagnostics channels, subscribed to for real runs on a real server: a contended mutex, a
// timeout, a miss, a lost lock (forced expiry), the other recipes' traces, session requests and
// states, queue and cache channels. Checks each event, their order and their context.
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawnSync } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import {
  CHANNELS,
  DistributedQueue,
  LeaderLatch,
  LockTimeoutError,
  Mutex,
  NotHeldError,
  ReadWriteLock,
  Semaphore,
  TRACING_CHANNELS,
  TreeCache,
  type AcquireContext,
  type AcquireProgress,
  type LockLostMessage,
  type SessionRequestContext,
} from '../../src/index.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

const SUB = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const;

interface Recorded {
  readonly channel: string;
  readonly message: unknown;
}

/** Records every message of the named channels, in publication order, until `stop()`. */
class Recorder {
  readonly events: Recorded[] = [];
  private readonly undo: (() => void)[] = [];

  constructor(tracingNames: readonly string[], pointNames: readonly string[]) {
    for (const name of tracingNames) {
      for (const sub of SUB) this.listen(`tracing:${name}:${sub}`);
    }
    for (const name of pointNames) this.listen(name);
  }

  private listen(channel: string): void {
    const fn = (message: unknown): void => void this.events.push({ channel, message });
    dc.subscribe(channel, fn);
    this.undo.push(() => dc.unsubscribe(channel, fn));
  }

  /** Events whose message has `path` (or `nodePath`/`itemPath` under it). */
  about(path: string): Recorded[] {
    return this.events.filter((e) => {
      const m = e.message as { path?: unknown };
      return typeof m.path === 'string' && (m.path === path || m.path.startsWith(`${path}/`));
    });
  }

  stop(): void {
    for (const u of this.undo.splice(0)) u();
  }
}

const ALL_TRACING = Object.values(TRACING_CHANNELS).filter((n) => n !== TRACING_CHANNELS.sessionRequest);
const ALL_POINTS = Object.values(CHANNELS);
const recorders: Recorder[] = [];
function record(tracingNames: readonly string[] = ALL_TRACING, pointNames: readonly string[] = ALL_POINTS): Recorder {
  const r = new Recorder(tracingNames, pointNames);
  recorders.push(r);
  return r;
}
after(() => {
  for (const r of recorders) r.stop();
});

const names = (events: readonly Recorded[]): string[] => events.map((e) => e.channel);

test('a contended mutex: both traces in order, one context per trace, queue position, token, progress with the holder', async () => {
  const path = uniquePath('obs-contended');
  const [a, b] = await fx.sessionsN(2);
  const rec = record();
  const ma = new Mutex(a!, path, { participantId: 'holder-a' });
  const mb = new Mutex(b!, path, { participantId: 'waiter-b' });
  const ha = await ma.acquire({ timeoutMs: 10_000 });
  const progress: AcquireProgress[] = [];
  const waiting = mb.acquire({ timeoutMs: 10_000, onProgress: (p) => progress.push(p) });
  await waitFor(() => progress.length === 1, { timeoutMs: 10_000, message: 'a progress report while waiting' });
  await ha.release();
  const hb = await waiting;
  await hb.release();
  await ma.close();
  await mb.close();
  rec.stop();

  const events = rec.about(path);
  const trace = (pid: string): Recorded[] => events.filter((e) => e.channel.startsWith('tracing:') && (e.message as AcquireContext).participantId === pid);
  const ta = trace('holder-a');
  const tb = trace('waiter-b');
  const acquire = TRACING_CHANNELS.mutexAcquire;
  assert.deepEqual(names(ta), [`tracing:${acquire}:start`, `tracing:${acquire}:end`, `tracing:${acquire}:asyncStart`, `tracing:${acquire}:asyncEnd`]);
  assert.deepEqual(names(tb), names(ta));
  // One context object across a trace's sub-channels.
  assert.ok(tb.every((e) => e.message === tb[0]!.message));
  const ca = ta[0]!.message as AcquireContext;
  const cb = tb[0]!.message as AcquireContext;
  assert.equal(ca.recipe, 'mutex');
  assert.equal(ca.mode, 'exclusive');
  assert.equal(ca.outcome, 'acquired');
  assert.equal(ca.queuePosition, 0);
  assert.equal(ca.nonblocking, false);
  assert.equal(ca.timeoutMs, 10_000);
  assert.equal(ca.leases, 1);
  assert.equal(ca.sessionId, a!.sessionId);
  assert.equal(ca.nodePath, ha.path);
  assert.equal(ca.fencingToken, ha.fencingToken);
  assert.equal(ca.result, ha);
  assert.equal(cb.outcome, 'acquired');
  assert.equal(cb.queuePosition, 1);
  assert.equal(cb.fencingToken, hb.fencingToken);
  assert.ok(cb.waitMs !== undefined && cb.waitMs > 0);

  // Point channels: A granted, B's progress, then A released and B granted (in either order:
  // B is told of A's deletion before A's delete reply comes), B released.
  const points = events.filter((e) => !e.channel.startsWith('tracing:'));
  const told = points.map((e) => `${e.channel} ${(e.message as { nodePath: string }).nodePath === ha.path ? 'A' : 'B'}`);
  assert.deepEqual(told.slice(0, 2), [`${CHANNELS.lockGranted} A`, `${CHANNELS.lockProgress} B`]);
  assert.deepEqual([...told.slice(2, 4)].sort(), [`${CHANNELS.lockGranted} B`, `${CHANNELS.lockReleased} A`]);
  assert.equal(told[4], `${CHANNELS.lockReleased} B`);
  assert.equal(told.length, 5);
  assert.deepEqual(progress, [points[1]!.message]);
  assert.deepEqual(progress[0], { recipe: 'mutex', mode: 'exclusive', path, nodePath: hb.path, position: 1, holderPath: ha.path, holderId: 'holder-a' });
  const released = points.find((e) => e.channel === CHANNELS.lockReleased)!.message as { holdMs: number; nodePath: string };
  assert.equal(released.nodePath, ha.path);
  assert.ok(released.holdMs > 0);
  // B's trace ended after its grant, which came after B's progress report.
  const grantedB = points.find((e) => e.channel === CHANNELS.lockGranted && (e.message as { nodePath: string }).nodePath === hb.path)!;
  assert.ok(events.indexOf(tb[3]!) > events.indexOf(grantedB));
});

test('a timeout: the error sub-channel carries the LockTimeoutError, outcome timeout, nothing left behind', async () => {
  const path = uniquePath('obs-timeout');
  const [a, b] = await fx.sessionsN(2);
  const ma = new Mutex(a!, path);
  const mb = new Mutex(b!, path);
  const ha = await ma.acquire();
  const rec = record([TRACING_CHANNELS.mutexAcquire], []);
  await assert.rejects(mb.acquire({ timeoutMs: 300 }), LockTimeoutError);
  rec.stop();
  const events = rec.about(path);
  const acquire = TRACING_CHANNELS.mutexAcquire;
  assert.deepEqual(names(events), [`tracing:${acquire}:start`, `tracing:${acquire}:end`, `tracing:${acquire}:error`, `tracing:${acquire}:asyncStart`, `tracing:${acquire}:asyncEnd`]);
  const ctx = events[0]!.message as AcquireContext;
  assert.equal(ctx.outcome, 'timeout');
  assert.equal(ctx.errorCode, 'LOCK_TIMEOUT');
  assert.ok(ctx.error instanceof LockTimeoutError);
  assert.equal(ctx.queuePosition, 1);
  assert.ok(ctx.waitMs !== undefined && ctx.waitMs >= 300);
  assert.deepEqual(await fx.children(path), [ha.path.slice(path.length + 1)]);
  await ha.release();
  await ma.close();
  await mb.close();
});

test('a miss: tryAcquire on a busy lock ends with outcome miss, a null result and the miss point', async () => {
  const path = uniquePath('obs-miss');
  const [a, b] = await fx.sessionsN(2);
  const ma = new Mutex(a!, path);
  const mb = new Mutex(b!, path, { participantId: 'trier' });
  const ha = await ma.acquire();
  const rec = record([TRACING_CHANNELS.mutexAcquire], [CHANNELS.lockMiss]);
  assert.equal(await mb.tryAcquire(), null);
  rec.stop();
  const events = rec.about(path);
  const ctx = events[0]!.message as AcquireContext;
  assert.equal(ctx.nonblocking, true);
  assert.equal(ctx.timeoutMs, undefined);
  assert.equal(ctx.outcome, 'miss');
  assert.equal(ctx.result, null);
  const miss = events.filter((e) => e.channel === CHANNELS.lockMiss);
  assert.equal(miss.length, 1);
  assert.deepEqual(miss[0]!.message, { recipe: 'mutex', mode: 'exclusive', path, participantId: 'trier', sessionId: b!.sessionId });
  // The miss is published before the trace ends.
  assert.ok(events.indexOf(miss[0]!) < events.findIndex((e) => e.channel.endsWith(':asyncEnd')));
  await ha.release();
  await ma.close();
  await mb.close();
});

test('a lost lock (forced expiry): lock.lost with reason session, the signal reason, and the session states', async () => {
  const path = uniquePath('obs-lost');
  const proxy = await fx.proxy();
  const victim = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000, renewOnLoss: false });
  const id = victim.sessionId;
  const m = new Mutex(victim, path);
  const h = await m.acquire();
  const rec = record([], [CHANNELS.lockLost, CHANNELS.sessionState]);
  await expireSession(victim, proxy);
  await waitFor(() => h.signal.aborted, { timeoutMs: 15_000, message: 'the handle lost' });
  rec.stop();
  const lost = rec.events.filter((e) => e.channel === CHANNELS.lockLost).map((e) => e.message as LockLostMessage);
  assert.equal(lost.length, 1);
  assert.equal(lost[0]!.reason, 'session');
  assert.equal(lost[0]!.error, h.signal.reason);
  assert.equal(lost[0]!.nodePath, h.path);
  assert.equal(lost[0]!.fencingToken, h.fencingToken);
  assert.equal(lost[0]!.sessionId, id);
  const states = rec.events.filter((e) => e.channel === CHANNELS.sessionState).map((e) => e.message as { state: string; sessionId: bigint; connectString: string });
  assert.ok(states.some((s) => s.state === 'LOST' && s.sessionId === id && s.connectString === victim.connectString), JSON.stringify(states.map((s) => s.state)));
  await m.close();
});

test('a handle ends once on the channels: a lock lost to a deleted node, then released, is lost and not released, and so is one released just after its node was deleted', async () => {
  const path = uniquePath('obs-once');
  const [s, other] = await fx.sessionsN(2);
  const m = new Mutex(s!, path, { watchOwnNode: true });
  const rec = record([], [CHANNELS.lockLost, CHANNELS.lockReleased]);
  // Noticed by the watch on our node, then released.
  const h1 = await m.acquire();
  await other!.delete(h1.path);
  await waitFor(() => h1.signal.aborted, { timeoutMs: 10_000, message: 'the handle lost' });
  await assert.rejects(h1.release(), NotHeldError);
  // A normal release, for contrast.
  const h2 = await m.acquire();
  await h2.release();
  // Released right after the deletion: the watch or the release finds the node gone, either way one loss.
  const h3 = await m.acquire();
  await other!.delete(h3.path);
  await assert.rejects(h3.release(), NotHeldError);
  rec.stop();
  const ends = rec.events.map((e) => `${e.channel} ${(e.message as LockLostMessage).nodePath}`);
  assert.deepEqual(ends, [`${CHANNELS.lockLost} ${h1.path}`, `${CHANNELS.lockReleased} ${h2.path}`, `${CHANNELS.lockLost} ${h3.path}`]);
  await m.close();
});

test('an AsyncLocalStorage bound to the start channel is visible in asyncEnd', async () => {
  const path = uniquePath('obs-store');
  const [a] = await fx.sessionsN(1);
  const als = new AsyncLocalStorage<string>();
  const ch = dc.tracingChannel<string, AcquireContext>(TRACING_CHANNELS.mutexAcquire);
  ch.start.bindStore(als, (ctx) => `span-for-${ctx.path}`);
  const seen: (string | undefined)[] = [];
  const onEnd = (): void => void seen.push(als.getStore());
  dc.subscribe(`tracing:${TRACING_CHANNELS.mutexAcquire}:asyncEnd`, onEnd);
  try {
    const m = new Mutex(a!, path);
    await als.run('outside', async () => {
      const h = await m.acquire();
      // The caller's own context is untouched after the acquisition.
      assert.equal(als.getStore(), 'outside');
      await h.release();
    });
    await m.close();
  } finally {
    dc.unsubscribe(`tracing:${TRACING_CHANNELS.mutexAcquire}:asyncEnd`, onEnd);
    ch.start.unbindStore(als);
  }
  assert.deepEqual(seen, [`span-for-${path}`]);
});

test('semaphore, read and write locks, leadership: their recipe, mode, leases, and leader elected/revoked', async () => {
  const base = uniquePath('obs-recipes');
  const [a, b] = await fx.sessionsN(2);
  const rec = record();
  const sem = new Semaphore(a!, `${base}/sem`, { maxLeases: 3 });
  const lease = await sem.acquire(2);
  await lease.release();
  const rw = new ReadWriteLock(a!, `${base}/rw`);
  const r = await rw.readLock().acquire();
  await r.release();
  const w = await rw.writeLock().acquire();
  await w.release();
  const first = new LeaderLatch(a!, `${base}/leader`, { participantId: 'first' });
  const second = new LeaderLatch(b!, `${base}/leader`, { participantId: 'second' });
  await first.start();
  await first.awaitLeadership({ timeoutMs: 10_000 });
  await second.start();
  await first.close();
  await second.awaitLeadership({ timeoutMs: 10_000 });
  await second.close();
  await sem.close();
  await rw.close();
  rec.stop();

  const ends = rec.about(base).filter((e) => e.channel.endsWith(':asyncEnd'));
  const summary = ends.map((e) => {
    const c = e.message as AcquireContext;
    return `${e.channel.split(':')[1]} ${c.recipe}/${c.mode} x${c.leases} ${c.outcome} @${c.queuePosition}`;
  });
  assert.deepEqual(summary, [
    `${TRACING_CHANNELS.semaphoreAcquire} semaphore/shared x2 acquired @0`,
    `${TRACING_CHANNELS.rwlockAcquire} rwlock/read x1 acquired @0`,
    `${TRACING_CHANNELS.rwlockAcquire} rwlock/write x1 acquired @0`,
    `${TRACING_CHANNELS.leaderCampaign} leader/exclusive x1 acquired @0`,
    `${TRACING_CHANNELS.leaderCampaign} leader/exclusive x1 acquired @1`,
  ]);
  const leader = rec.about(`${base}/leader`).filter((e) => e.channel === CHANNELS.leaderElected || e.channel === CHANNELS.leaderRevoked);
  const told = leader.map((e) => `${e.channel} ${(e.message as { participantId: string }).participantId} ${(e.message as { reason?: string }).reason ?? ''}`.trim());
  assert.deepEqual(told, [`${CHANNELS.leaderElected} first`, `${CHANNELS.leaderRevoked} first closed`, `${CHANNELS.leaderElected} second`, `${CHANNELS.leaderRevoked} second closed`]);
  const elected = leader[2]!.message as { term: bigint; nodePath: string; sessionId: bigint };
  assert.equal(elected.sessionId, b!.sessionId);
  assert.ok(elected.nodePath.startsWith(`${base}/leader/`));
});

test('session requests: one trace per request with op, path, server and the error code', async () => {
  const path = uniquePath('obs-request');
  const [a] = await fx.sessionsN(1);
  const rec = record([TRACING_CHANNELS.sessionRequest], []);
  await a!.create(path, { data: 'x' });
  await assert.rejects(a!.getData(`${path}/missing`));
  rec.stop();
  const ends = rec.about(path).filter((e) => e.channel.endsWith(':asyncEnd')).map((e) => e.message as SessionRequestContext);
  assert.deepEqual(
    ends.map((c) => [c.op, c.path, c.outcome, c.errorCode]),
    [
      ['create', path, 'ok', undefined],
      ['getData', `${path}/missing`, 'error', 'NO_NODE'],
    ],
  );
  for (const c of ends) {
    assert.equal(c.server, `127.0.0.1:${fx.server.port}`);
    assert.equal(c.sessionId, a!.sessionId);
    assert.ok(c.durationMs !== undefined && c.durationMs >= 0);
  }
});

test('queue: put, take, an empty poll, handled items and a dead letter', async () => {
  const path = uniquePath('obs-queue');
  const [a] = await fx.sessionsN(1);
  const q = new DistributedQueue(a!, path);
  const rec = record();
  const [itemPath] = [await q.put('one')];
  assert.equal((await q.take({ timeoutMs: 10_000 })).toString(), 'one');
  assert.equal(await q.poll(), null);
  await q.put('good');
  await q.put('bad');
  const stop = new AbortController();
  const handled: string[] = [];
  const consuming = q.consume(
    async (data) => {
      handled.push(data.toString());
      if (data.toString() === 'bad') throw new Error('cannot handle bad');
    },
    { maxDeliveries: 1, signal: stop.signal },
  );
  await waitFor(() => rec.events.some((e) => e.channel === CHANNELS.queueDeadLetter) && handled.includes('good'), { timeoutMs: 15_000, message: 'good handled and bad dead-lettered' });
  await waitFor(() => rec.about(path).filter((e) => e.channel === `tracing:${TRACING_CHANNELS.queueHandle}:asyncEnd`).length === 2, { timeoutMs: 10_000, message: 'two handle traces ended' });
  stop.abort();
  await consuming;
  await q.close();
  rec.stop();
  const events = rec.about(path);
  const ends = (name: string): Record<string, unknown>[] => events.filter((e) => e.channel === `tracing:${name}:asyncEnd`).map((e) => e.message as Record<string, unknown>);
  const puts = ends(TRACING_CHANNELS.queuePut);
  assert.equal(puts.length, 3);
  assert.deepEqual(puts[0]!.itemPaths, [itemPath]);
  assert.ok(puts.every((p) => p.outcome === 'ok' && p.items === 1));
  assert.deepEqual(
    ends(TRACING_CHANNELS.queueTake).map((t) => [t.nonblocking, t.outcome]),
    [
      [false, 'taken'],
      [true, 'empty'],
    ],
  );
  const handles = ends(TRACING_CHANNELS.queueHandle).map((h) => h.outcome);
  assert.deepEqual([...handles].sort(), ['done', 'failed']);
  const letters = events.filter((e) => e.channel === CHANNELS.queueDeadLetter).map((e) => e.message as { path: string; letterPath: string; attempts: number; reason: string });
  assert.equal(letters.length, 1);
  assert.equal(letters[0]!.path, path);
  assert.ok(letters[0]!.letterPath.startsWith(`${path}/dead/`));
  assert.equal(letters[0]!.attempts, 1);
  assert.match(letters[0]!.reason, /cannot handle bad/);
});

test('cache states: LOADING, SYNCED, CLOSED', async () => {
  const path = uniquePath('obs-cache');
  const [a] = await fx.sessionsN(1);
  await a!.mkdirp(`${path}/x`);
  const rec = record([], [CHANNELS.cacheState]);
  const cache = new TreeCache(a!, path);
  await cache.start({ timeoutMs: 10_000 });
  await cache.ready({ timeoutMs: 10_000 });
  await cache.close();
  rec.stop();
  const states = rec.about(path).map((e) => e.message as { cache: string; state: string; previous: string });
  assert.deepEqual(
    states.map((s) => `${s.cache} ${s.previous}->${s.state}`),
    ['tree LATENT->LOADING', 'tree LOADING->SYNCED', 'tree SYNCED->CLOSED'],
  );
});

test('without a progress listener a wait reads nothing for it; with one, one read per holder', async () => {
  const path = uniquePath('obs-cost');
  const [a, b] = await fx.sessionsN(2);
  const ma = new Mutex(a!, path);
  const mb = new Mutex(b!, path);
  const reads = async (onProgress?: (p: AcquireProgress) => void): Promise<number> => {
    const ha = await ma.acquire();
    const before = b!.counters.getData;
    const waiting = mb.acquire({ timeoutMs: 10_000, ...(onProgress && { onProgress }) });
    // Our node is in the queue (its listing is read) before the holder lets go.
    await waitFor(async () => (await fx.children(path)).length === 2, { timeoutMs: 10_000, message: 'the waiter queued' });
    if (onProgress) await waitFor(() => seen > 0, { timeoutMs: 10_000, message: 'progress reported' });
    await ha.release();
    await (await waiting).release();
    return b!.counters.getData - before;
  };
  let seen = 0;
  const without = await reads();
  const withListener = await reads(() => void seen++);
  assert.equal(withListener - without, 1, `getData requests without a listener ${without}, with ${withListener}`);
  await ma.close();
  await mb.close();
});

test('a subscriber that throws does not break an acquisition (Node reports its error as uncaught)', () => {
  const script = fileURLToPath(new URL('./throwing-subscriber.js', import.meta.url));
  const out = spawnSync(process.execPath, [script], { env: { ...process.env, ZK_CONNECT: fx.server.connectString, LOCK_PATH: uniquePath('obs-throw') }, encoding: 'utf8', timeout: 60_000 });
  assert.equal(out.status, 0, out.stderr);
  const result = JSON.parse(out.stdout.trim().split('\n').pop() as string) as { acquired: boolean; released: boolean; uncaught: string[] };
  assert.equal(result.acquired, true);
  assert.equal(result.released, true);
  assert.ok(result.uncaught.length >= 2 && result.uncaught.every((m) => m === 'subscriber bug'), JSON.stringify(result.uncaught));
});
