// The loss clock (issue 9.3): a holder is told it lost its session strictly before anyone else
// can be granted what it held, because SUSPENDED and LOST count from the send time of the last
// request the server answered, and the session heartbeats on its own schedule whatever it
// receives. Real server, real partitions (ChaosProxy), real notifications.
import assert from 'node:assert/strict';
import { setTimeout as pace } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import { LockTimeoutError } from '../../src/errors.js';
import { LeaderLatch } from '../../src/leader/index.js';
import { Mutex } from '../../src/mutex/index.js';
import { withTimeout } from '../../src/testing/index.js';
import { nextState, recordStates, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** `count` nodes under `dir`, each with a data watch set by `session`; resolves their `changed`. */
async function watchedNodes(session: ZkSession, dir: string, count: number): Promise<{ paths: string[]; changed: Promise<unknown>[] }> {
  await fx.observer.mkdirp(dir);
  const paths = await Promise.all(Array.from({ length: count }, (_, i) => fx.observer.create(`${dir}/n${i}`)));
  const watched = await Promise.all(paths.map((p) => session.getDataWatch(p)));
  return { paths, changed: watched.map((w) => w.changed) };
}

/**
 * Makes `session` receive one notification every T/4 and send nothing itself: its socket is
 * never idle for T/3, so node-zookeeper-client alone would never ping. Returns when `until`
 * settles or the nodes run out.
 */
async function notifyEvery(session: ZkSession, nodes: { paths: string[]; changed: Promise<unknown>[] }, until: Promise<unknown>): Promise<number> {
  let settled = false;
  void until.then(
    () => (settled = true),
    () => (settled = true),
  );
  let sent = 0;
  for (const [i, path] of nodes.paths.entries()) {
    if (settled) break;
    await fx.observer.setData(path, 'x');
    await withTimeout(nodes.changed[i] as Promise<unknown>, session.timeoutMs, `notification ${i}`);
    sent += 1;
    // Pacing of the workload (not synchronization): a quarter of the session timeout.
    await pace(session.timeoutMs / 4);
  }
  return sent;
}

/** The time `signal` aborts (performance.now()). */
function abortTime(signal: AbortSignal): Promise<number> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(performance.now()), { once: true }));
}

describe('loss clock: counts from what the server heard', () => {
  test('a holder that only receives notifications stays alive (heartbeats) and is never overtaken', async () => {
    const T = 2000;
    const [holder, waiter] = (await fx.sessionsN(2, { sessionTimeoutMs: T })) as [ZkSession, ZkSession];
    const base = uniquePath('notified-holder');
    const nodes = await watchedNodes(holder, `${base}/w`, 16);
    const held = await new Mutex(holder, `${base}/lock`).acquire({ timeoutMs: 5000 });
    const id = holder.sessionId;
    const states = recordStates(holder);
    const heartbeats = holder.counters.heartbeat;
    // Longer than the session timeout, so without heartbeats the server would expire the holder.
    const waiting = new Mutex(waiter, `${base}/lock`).acquire({ timeoutMs: 3 * T });
    waiting.catch(() => undefined);
    const sent = await notifyEvery(holder, nodes, waiting);
    await assert.rejects(waiting, LockTimeoutError, 'the waiter was never granted the held lock');
    assert.ok(sent >= 8, `notifications kept coming (${sent})`);
    assert.ok(holder.counters.heartbeat > heartbeats, 'the holder sent heartbeats of its own');
    assert.deepEqual(states, [], 'the holder stayed CONNECTED');
    assert.equal(holder.sessionId, id);
    assert.equal(held.isHeld, true);
    assert.ok(await fx.observer.exists(held.path), 'its node is still there');
    await held.release();
    await fx.observer.deleteRecursive(base);
  });

  test('a notification just before a partition: the holder is told before the next waiter is granted', async () => {
    const T = 3000;
    const proxy = await fx.proxy();
    const holder = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: T });
    const [waiter] = (await fx.sessionsN(1, { sessionTimeoutMs: T })) as [ZkSession];
    const base = uniquePath('notified-partition');
    const nodes = await watchedNodes(holder, `${base}/w`, 1);
    const lastAnswered = performance.now();
    const held = await new Mutex(holder, `${base}/lock`).acquire({ timeoutMs: 5000 });
    const lostAt = abortTime(held.signal);
    const waiting = new Mutex(waiter, `${base}/lock`).acquire({ timeoutMs: 4 * T }).then((h) => ({ h, at: performance.now() }));
    // Just before a third of the timeout has passed in silence, a notification arrives; then the
    // holder is cut off. Counting from that notification would tell the holder about T/3 late.
    await pace(Math.max(0, lastAnswered + 0.28 * T - performance.now()));
    await fx.observer.setData(nodes.paths[0] as string, 'x');
    await withTimeout(nodes.changed[0] as Promise<unknown>, T, 'notification');
    proxy.blackhole();
    const granted = await withTimeout(waiting, 5 * T, 'the waiter is granted once the holder expires');
    const lost = await withTimeout(lostAt, T, 'the holder is told');
    assert.ok(lost < granted.at, `holder told at ${lost.toFixed(1)}, waiter granted at ${granted.at.toFixed(1)}: told ${(granted.at - lost).toFixed(1)} ms before`);
    const renewed = nextState(holder, 'CONNECTED', 4 * T);
    proxy.pass();
    await renewed;
    await granted.h.release();
    await fx.observer.deleteRecursive(base);
  });

  for (const policy of ['suspended', 'lost'] as const) test(`LeaderLatch (policy '${policy}'): notifications keep a leader alive, and after a partition two leaders never overlap`, async () => {
    const T = 2000;
    const proxy = await fx.proxy();
    const first = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: T });
    const [second] = (await fx.sessionsN(1, { sessionTimeoutMs: T })) as [ZkSession];
    const base = uniquePath('latch-overlap');
    const nodes = await watchedNodes(first, `${base}/w`, 10);
    const a = new LeaderLatch(first, `${base}/election`, { participantId: 'a', policy });
    const b = new LeaderLatch(second, `${base}/election`, { participantId: 'b', policy });
    a.start();
    await a.awaitLeadership({ timeoutMs: 5000 });
    const aEnded = abortTime(a.leadershipSignal as AbortSignal);
    b.start();
    const bElected = new Promise<number>((resolve) => b.once('elected', () => resolve(performance.now())));
    const aToken = a.fencingToken as bigint;
    let bEarly = false;
    void bElected.then(() => (bEarly = proxy.mode === 'pass'));
    // 2.5 T of notifications only: without heartbeats the server would expire the leader.
    const phase = pace(2.5 * T);
    await notifyEvery(first, nodes, phase);
    assert.equal(a.hasLeadership, true, 'still leader after notifications only');
    proxy.blackhole();
    const elected = await withTimeout(bElected, 5 * T, 'b elected');
    const ended = await withTimeout(aEnded, T, 'a told');
    assert.equal(bEarly, false, 'b was not elected before the partition');
    assert.ok(ended < elected, `a stepped down at ${ended.toFixed(1)}, b elected at ${elected.toFixed(1)}`);
    assert.ok((b.fencingToken as bigint) > aToken, 'the new term has a larger fencing token');
    const renewed = nextState(first, 'CONNECTED', 4 * T);
    proxy.pass();
    await renewed;
    await Promise.all([a.close(), b.close()]);
    await fx.observer.deleteRecursive(base);
  });
});
