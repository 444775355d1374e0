// SharedValue / SharedCount under real faults, one server behind a ChaosProxy per session:
// a write whose reply is lost after the server applied it (OutcomeUnknownError, applied once,
// never re-sent), a blackhole during a write (the deadline and the signal are honoured; a write
// never sent leaves the node as it was), a dropped connection while another session writes (the
// change is re-read on reconnect and emitted exactly once), an expired session (a new one is
// armed, the change made meanwhile is seen once, compare-and-set works on it). Bad input and use
// after close are typed errors; nothing is left watching afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClosedError, IllegalStateError, InvalidArgumentError, OutcomeUnknownError, SharedCount, SharedValue, type ZkSession } from '../../src/index.js';
import { expireSession, waitFor, type ChaosProxy } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** A session through a fresh proxy (its only route to the server). */
async function proxied(sessionTimeoutMs = 4000): Promise<{ s: ZkSession; proxy: ChaosProxy }> {
  const proxy = await fx.proxy();
  const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs });
  return { s, proxy };
}

/** The node's version and count as the server has them now. */
async function onServer(path: string): Promise<{ version: number; count: number }> {
  await fx.observer.sync(path);
  const { data, stat } = await fx.observer.getData(path);
  return { version: stat.version, count: data.readInt32BE(0) };
}

test('a set and a trySet whose replies are lost: OutcomeUnknownError, applied exactly once, the copy catches up', async () => {
  const path = uniquePath('lost-reply');
  const { s, proxy } = await proxied();
  await using count = new SharedCount(s, path, 0);
  await count.start({ timeoutMs: 10_000 });
  const seen: number[] = [];
  count.on('changed', (v) => seen.push(v.value));

  const lost = proxy.loseReply({ op: 'setData', path });
  const err = await count.set(1).then(
    () => assert.fail('the set resolved although its reply was lost'),
    (e: unknown) => e,
  );
  await lost;
  assert.ok(err instanceof OutcomeUnknownError, String(err));
  assert.deepEqual(await onServer(path), { version: 1, count: 1 }, 'applied once, not re-sent');
  await waitFor(() => count.count === 1, { timeoutMs: 10_000, message: 'the copy re-reads after the reconnect' });

  const previous = count.get();
  const lostTry = proxy.loseReply({ op: 'setData', path });
  await assert.rejects(count.trySet(2, previous), OutcomeUnknownError);
  await lostTry;
  assert.deepEqual(await onServer(path), { version: 2, count: 2 });
  await waitFor(() => count.count === 2, { timeoutMs: 10_000, message: 'the copy has the applied trySet' });
  // The caller's retry with the old previous is refused: no double increment.
  assert.equal(await count.trySet(2, previous), false);
  assert.deepEqual(await onServer(path), { version: 2, count: 2 });
  assert.deepEqual(seen, [1, 2], 'each value once, in order');
  await count.close();
  await fx.waitNoWatches(s, path);
});

test('blackhole: a write never sent times out or aborts with the reason and writes nothing; one sent is an unknown outcome at the deadline', async () => {
  const path = uniquePath('blackhole');
  // Long enough that the server keeps the session while the client notices the hole (2/3 of it).
  const { s, proxy } = await proxied(8000);
  await using count = new SharedCount(s, path, 10);
  await count.start({ timeoutMs: 10_000 });
  const before = await onServer(path);

  // Sent into the hole while the session still believes it is connected.
  proxy.blackhole();
  const t0 = performance.now();
  const unknown = await count.set(11, { timeoutMs: 300 }).then(
    () => assert.fail('resolved through a blackhole'),
    (e: unknown) => e,
  );
  const took = performance.now() - t0;
  assert.ok(unknown instanceof OutcomeUnknownError, String(unknown));
  assert.equal((unknown.cause as Error).name, 'TimeoutError');
  assert.ok(took < 2000, `the deadline was honoured (${Math.round(took)} ms)`);

  // Now the session has noticed: a write is held until a connection comes, and never sent.
  await nextState(s, 'SUSPENDED', 10_000);
  await assert.rejects(count.set(12, { timeoutMs: 200 }), (e: Error) => e.name === 'TimeoutError');
  const ac = new AbortController();
  const aborted = count.trySet(13, count.get(), { signal: ac.signal });
  ac.abort(new Error('caller gave up'));
  await assert.rejects(aborted, /caller gave up/);
  await assert.rejects(count.set(14, { signal: AbortSignal.abort(new Error('already')) }), /already/);

  const back = nextState(s, 'RECONNECTED', 15_000);
  proxy.pass();
  await back;
  // The first write may have gone through when the hole healed (that is what "unknown" means);
  // the three never sent did not.
  await waitFor(async () => (await onServer(path)).count === count.count, { timeoutMs: 10_000, message: 'the copy agrees with the server' });
  const after = await onServer(path);
  assert.ok([10, 11].includes(after.count), `only the unknown write may have landed: ${after.count}`);
  assert.ok(after.version - before.version <= 1, `at most one write: version ${before.version} → ${after.version}`);
  await count.close();
  await fx.waitNoWatches(s, path);
});

test('blackhole with no deadline: a write sent ends as an unknown outcome once the session notices, never hangs', async () => {
  const path = uniquePath('blackhole-nodeadline');
  const { s, proxy } = await proxied(4000);
  await using count = new SharedCount(s, path, 0);
  await count.start({ timeoutMs: 10_000 });
  proxy.blackhole();
  const t0 = performance.now();
  const err = await count.set(1).then(
    () => assert.fail('resolved through a blackhole'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof OutcomeUnknownError, String(err));
  assert.ok(performance.now() - t0 < 8000, 'within the session timeout and a margin');
  proxy.pass();
  await waitFor(async () => s.state === 'CONNECTED' || s.state === 'RECONNECTED', { timeoutMs: 15_000, message: 'connected again' });
  await waitFor(async () => (await onServer(path)).count === count.count, { timeoutMs: 15_000, message: 'the copy agrees with the server' });
  assert.ok((await onServer(path)).version <= 1);
  await count.close();
  await fx.waitNoWatches(s, path);
});

test('a dropped connection: the change made meanwhile is re-read on reconnect and emitted exactly once', async () => {
  const path = uniquePath('dropped');
  const { s, proxy } = await proxied(8000);
  await using value = new SharedValue(s, path, 'seed');
  await value.start({ timeoutMs: 10_000 });
  const seen: string[] = [];
  value.on('changed', (v) => seen.push(v.value.toString()));
  const states: string[] = [];
  value.on('state', (st) => states.push(st));
  const it = value.changes();

  const suspended = nextState(s, 'SUSPENDED', 10_000);
  proxy.reject(true);
  proxy.dropAll();
  await suspended;
  await fx.observer.setData(path, 'meanwhile');
  const back = nextState(s, 'RECONNECTED', 15_000);
  proxy.reject(false);
  await back;
  await waitFor(() => seen.includes('meanwhile'), { timeoutMs: 10_000, message: 'the change made while away' });
  // A later write marks the end: anything the reconnect produced came before it.
  await fx.observer.setData(path, 'after');
  await waitFor(() => seen.includes('after'), { timeoutMs: 10_000, message: 'the watch is armed again' });
  assert.deepEqual(seen, ['meanwhile', 'after']);
  assert.deepEqual(states, ['SUSPENDED', 'RECONNECTED']);
  assert.equal((await it.next()).value?.value.toString(), 'meanwhile');
  assert.equal((await it.next()).value?.value.toString(), 'after');
  await value.close();
  assert.deepEqual(await it.next(), { value: undefined, done: true });
  await fx.waitNoWatches(s, path);
});

test('an expired session: re-armed on the new one, the change made meanwhile once, compare-and-set works there', async () => {
  const path = uniquePath('expired');
  const { s, proxy } = await proxied();
  await using count = new SharedCount(s, path, 0);
  await count.start({ timeoutMs: 10_000 });
  const seen: number[] = [];
  count.on('changed', (v) => seen.push(v.value));
  const oldSession = s.sessionId;
  const stale = count.get();
  await expireSession(s, proxy);
  await fx.observer.setData(path, Buffer.from([0, 0, 0, 5]));
  await waitFor(() => count.count === 5, { timeoutMs: 15_000, message: 'the new session re-reads' });
  assert.notEqual(s.sessionId, oldSession);
  assert.equal(await count.trySet(1, stale), false, 'a previous from before the change is refused');
  assert.equal(await count.trySet(6, count.get(), { timeoutMs: 5000 }), true);
  await fx.observer.setData(path, Buffer.from([0, 0, 0, 7]));
  await waitFor(() => count.count === 7, { timeoutMs: 10_000, message: 'the watch is armed on the new session' });
  assert.deepEqual(seen, [5, 6, 7]);
  await count.close();
  await fx.waitNoWatches(s, path);
});

test('bad input and use after close are typed errors, and nothing is sent for them', async () => {
  const path = uniquePath('bad');
  const [s] = await fx.sessionsN(1);
  const session = s!;
  for (const bad of ['', 'x', '/x/', '/', null, 5]) {
    assert.throws(() => new SharedCount(session, bad as string, 0), InvalidArgumentError, `path ${String(bad)}`);
  }
  for (const bad of [1.5, 2 ** 31, -(2 ** 31) - 1, Number.NaN, '1', null]) {
    assert.throws(() => new SharedCount(session, path, bad as number), InvalidArgumentError, `seed ${String(bad)}`);
  }
  assert.throws(() => new SharedValue(session, path, 5 as never), InvalidArgumentError);
  assert.throws(() => new SharedValue(session, path, Buffer.alloc(session.dataLimit + 1)), InvalidArgumentError);
  assert.throws(() => new SharedCount(null as never, path, 0), InvalidArgumentError);

  const count = new SharedCount(session, path, 0);
  assert.throws(() => count.get(), IllegalStateError);
  await assert.rejects(count.set(1), IllegalStateError);
  await count.start({ timeoutMs: 10_000 });
  await assert.rejects(count.start(), IllegalStateError);
  const sent = session.counters.setData;
  for (const bad of [1.5, 2 ** 31, -(2 ** 31) - 1, Number.NaN, '1', null]) {
    await assert.rejects(count.set(bad as number), InvalidArgumentError, `set ${String(bad)}`);
    await assert.rejects(count.trySet(bad as number, count.get()), InvalidArgumentError, `trySet ${String(bad)}`);
  }
  for (const bad of [null, 5, {}, { value: 0, version: 0 }, { value: 0, version: 1.5, zxid: 1n }]) {
    await assert.rejects(count.trySet(1, bad as never), InvalidArgumentError, `previous ${JSON.stringify(bad, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
  }
  await assert.rejects(count.set(1, { timeoutMs: -1 }), InvalidArgumentError);
  await assert.rejects(count.set(1, { signal: 'no' as never }), InvalidArgumentError);
  assert.throws(() => count.changes({ bufferSize: 0 }), InvalidArgumentError);

  const value = new SharedValue(session, `${path}-v`, 'x');
  await value.start({ timeoutMs: 10_000 });
  await assert.rejects(value.set(Buffer.alloc(session.dataLimit + 1)), InvalidArgumentError);
  await assert.rejects(value.set(42 as never), InvalidArgumentError);
  assert.equal(session.counters.setData, sent, 'nothing was sent for bad input');

  await count.close();
  await value.close();
  await count.close(); // idempotent
  assert.throws(() => count.get(), ClosedError);
  await assert.rejects(count.set(1), ClosedError);
  await assert.rejects(count.trySet(1, { value: 0, version: 0, zxid: 0n }), ClosedError);
  await assert.rejects(count.refresh(), ClosedError);
  await assert.rejects(count.start(), ClosedError);
  assert.throws(() => value.changes(), ClosedError);
  await fx.waitNoWatches(session, path);
});
