// participants() and leader() read the queue (a listing and a read per node): like every wait
// they take { timeoutMs, signal }. Cut off from the server, they reject at their deadline with
// OperationTimeoutError, or with the signal's reason, instead of retrying for the retry policy's
// 30 s; connected, they answer; bad options are refused before anything is sent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError, LeaderLatch, LeaderSelector, Mutex, OperationTimeoutError, Semaphore } from '../../src/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

test('participants() and leader() answer when connected, and keep the caller\'s deadline and signal when cut off', async () => {
  const base = uniquePath('participants');
  const proxy = await fx.proxy();
  const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 10_000 });
  await using mutex = new Mutex(s, `${base}/m`, { participantId: 'm1' });
  await using semaphore = new Semaphore(s, `${base}/s`, { maxLeases: 2, participantId: 's1' });
  await using latch = new LeaderLatch(s, `${base}/l`, { participantId: 'l1' });
  await using selector = new LeaderSelector(s, `${base}/sel`, { participantId: 'x' });
  const held = await mutex.acquire({ timeoutMs: 10_000 });
  const lease = await semaphore.acquire(1, { timeoutMs: 10_000 });
  latch.start();
  await latch.awaitLeadership({ timeoutMs: 10_000 });
  assert.deepEqual((await mutex.participants({ timeoutMs: 5000 })).map((p) => p.id), ['m1']);
  assert.deepEqual((await semaphore.participants()).map((p) => p.id), ['s1']);
  assert.equal((await latch.leader({ timeoutMs: 5000 }))?.id, 'l1');
  assert.deepEqual(await selector.participants({ timeoutMs: 5000 }), [], 'nobody in that election');

  proxy.blackhole();
  const calls: [string, (o: { timeoutMs?: number; signal?: AbortSignal }) => Promise<unknown>][] = [
    ['mutex.participants', (o) => mutex.participants(o)],
    ['semaphore.participants', (o) => semaphore.participants(o)],
    ['latch.participants', (o) => latch.participants(o)],
    ['latch.leader', (o) => latch.leader(o)],
    ['selector.participants', (o) => selector.participants(o)],
  ];
  for (const [name, call] of calls) {
    const t0 = performance.now();
    await assert.rejects(call({ timeoutMs: 300 }), OperationTimeoutError, name);
    const took = Math.round(performance.now() - t0);
    assert.ok(took < 1500, `${name}: at its deadline (${took} ms)`);
    const stop = new AbortController();
    const p = call({ signal: stop.signal });
    stop.abort(new Error(`${name} given up`));
    await assert.rejects(p, new RegExp(`${name} given up`));
    await assert.rejects(call({ timeoutMs: -1 }), InvalidArgumentError, `${name}: bad timeout`);
    await assert.rejects(call({ wait: 1 } as never), InvalidArgumentError, `${name}: unknown option`);
  }
  proxy.pass();
  assert.deepEqual((await mutex.participants({ timeoutMs: 15_000 })).map((p) => p.id), ['m1'], 'answers again once connected');
  await held.release();
  await lease.release();
});
