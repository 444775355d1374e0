// SharedValue and SharedCount against a real server: seed, compare-and-set, events both ways,
// a new session re-reads, bad input is refused, nothing left watching after close.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BadVersionError, SharedCount, SharedValue, IllegalStateError, InvalidArgumentError, ClosedError } from '../../src/index.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

test('a count: seed, trySet wins once, the loser re-reads; events reach the other instance', async () => {
  const path = uniquePath('count');
  const [a, b] = await fx.sessionsN(2);
  await using ca = new SharedCount(a!, path, 7);
  await using cb = new SharedCount(b!, path, 99);
  await ca.start({ timeoutMs: 10_000 });
  await cb.start({ timeoutMs: 10_000 });
  assert.equal(ca.count, 7);
  assert.equal(cb.count, 7);
  const raw = await fx.observer.getData(path);
  assert.deepEqual([...raw.data], [0, 0, 0, 7]);
  const seen: number[] = [];
  cb.on('changed', (v) => seen.push(v.value));
  const prevA = ca.get();
  const prevB = cb.get();
  assert.equal(await ca.trySet(8, prevA), true);
  assert.equal(await cb.trySet(9, prevB), false);
  assert.equal(cb.count, 8);
  await waitFor(() => seen.includes(8), { timeoutMs: 5000 });
  assert.equal(await cb.trySet(10, cb.get()), true);
  await waitFor(() => ca.count === 10, { timeoutMs: 5000 });
  await assert.rejects(ca.set(2 ** 31), InvalidArgumentError);
  await assert.rejects(ca.trySet(1, { value: 10, version: -1, zxid: ca.get().zxid }), IllegalStateError);
  await ca.close();
  await cb.close();
  assert.throws(() => ca.get(), ClosedError);
  await fx.waitNoWatches(a!, path);
  await fx.waitNoWatches(b!, path);
});

test('a value: bytes as they are, the iterator ends at close, a new session re-reads', async () => {
  const path = uniquePath('value');
  const proxy = await fx.proxy();
  const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
  const v = new SharedValue(s, path, 'seed');
  assert.throws(() => v.get(), IllegalStateError);
  await v.start({ timeoutMs: 10_000 });
  assert.equal(v.value.toString(), 'seed');
  const it = v.changes({ bufferSize: 2 });
  await fx.observer.setData(path, 'one');
  const first = await it.next();
  assert.equal(first.value?.value.toString(), 'one');
  const lost = nextState(s, 'LOST', 15_000);
  await expireSession(s, proxy);
  await lost;
  await fx.observer.setData(path, 'while-away');
  await waitFor(() => v.value.toString() === 'while-away', { timeoutMs: 15_000, message: 'the new session re-reads' });
  await fx.observer.setData(path, 'after');
  await waitFor(() => v.value.toString() === 'after', { timeoutMs: 5000, message: 'the watch is armed again' });
  await v.close();
  let n = 0;
  for await (const _ of it) n++;
  assert.ok(n <= 2);
  await fx.waitNoWatches(s, path);
});

test('a wrapped (negative) version is sent to the server and compared there, not refused locally', async () => {
  const path = uniquePath('negative-version');
  await fx.observer.create(path, { data: Buffer.alloc(4) });
  const sent = fx.observer.counters.setData;
  await assert.rejects(fx.observer.setData(path, Buffer.alloc(4), { version: -(2 ** 31) }), BadVersionError);
  await assert.rejects(fx.observer.setData(path, Buffer.alloc(4), { version: -2 }), BadVersionError);
  assert.equal(fx.observer.counters.setData, sent + 2, 'both were sent');
  await assert.rejects(fx.observer.setData(path, Buffer.alloc(4), { version: 2 ** 31 }), InvalidArgumentError);
  assert.equal((await fx.observer.getData(path)).stat.version, 0);
});
