// Barrier and DoubleBarrier against a real ZooKeeper: waits end on events (removal, the last
// entrant, the last one out), timeouts and aborts leave no node and no watch, a participant whose
// session expired counts as left, bad input is refused before anything is sent.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Barrier, DoubleBarrier } from '../../src/barrier/index.js';
import { ClosedError, IllegalStateError, InvalidArgumentError, OperationTimeoutError } from '../../src/errors.js';
import { expireSession, waitFor, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** Waits until the observer sees `n` children under `path` (members plus ready, if any). */
const childCount = async (path: string, n: number): Promise<void> => void (await waitFor(async () => (await fx.children(path)).length === n, { timeoutMs: 10000, message: `${n} children under ${path}` }));

describe('Barrier', () => {
  test('wait() resolves at once on an unset barrier, and when a set barrier is removed', async () => {
    const path = uniquePath('barrier');
    const [a, b] = await fx.sessionsApart(2);
    const waiter = new Barrier(a!, path);
    await waiter.wait({ timeoutMs: 5000 });
    const setter = new Barrier(b!, path);
    await setter.set();
    await setter.set(); // idempotent
    assert.equal(await waiter.isSet(), true);
    let done = false;
    const waiting = waiter.wait().then(() => (done = true));
    await fx.waitNoWatches(b!, path); // (b holds none; a's watch is checked below)
    await waitFor(async () => ((await fx.server.watchesBySession()).get(`0x${a!.sessionId.toString(16)}`) ?? []).includes(path), { timeoutMs: 5000, message: 'the waiter watches the barrier' });
    assert.equal(done, false);
    await setter.remove();
    await withTimeout(waiting, 5000, 'the wait ends with the removal');
    await setter.remove(); // idempotent
    assert.equal(await fx.observer.exists(path), null);
    assert.equal(a!.activeWatchCount, 0);
  });

  test('a wait that times out, is aborted or closed leaves no watch', async () => {
    const path = uniquePath('barrier-timeout');
    const [a] = await fx.sessionsApart(1);
    const barrier = new Barrier(a!, path);
    await barrier.set();
    await assert.rejects(barrier.wait({ timeoutMs: 200 }), OperationTimeoutError);
    const ac = new AbortController();
    const aborted = barrier.wait({ signal: ac.signal });
    ac.abort(new Error('stop'));
    await assert.rejects(aborted, /stop/);
    const closing = barrier.wait();
    await barrier.close();
    await assert.rejects(closing, ClosedError);
    await assert.rejects(barrier.wait(), ClosedError);
    assert.equal(a!.activeWatchCount, 0);
    await fx.waitNoWatches(a!, path);
    await fx.observer.delete(path);
  });

  test('a wait goes on with the next session after its session expires, and ends when the barrier is removed', async () => {
    const path = uniquePath('barrier-expiry');
    const [setterSession] = await fx.sessionsN(1);
    const proxy = await fx.proxy();
    const victimSession = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
    const setter = new Barrier(setterSession!, path);
    await setter.set();
    const waiter = new Barrier(victimSession, path);
    let done = false;
    const waiting = waiter.wait({ timeoutMs: 60_000 }).then(() => (done = true));
    const first = victimSession.sessionId;
    await waitFor(async () => ((await fx.server.watchesBySession()).get(`0x${first.toString(16)}`) ?? []).includes(path), { timeoutMs: 5000, message: 'the waiter watches the barrier' });
    await expireSession(victimSession, proxy);
    await waitFor(() => victimSession.sessionId !== first && victimSession.state === 'CONNECTED', { timeoutMs: 20_000, message: 'a new session' });
    await waitFor(async () => ((await fx.server.watchesBySession()).get(`0x${victimSession.sessionId.toString(16)}`) ?? []).includes(path), { timeoutMs: 10_000, message: 'the wait watches again in the new session' });
    assert.equal(done, false, 'the barrier is still set: the wait goes on');
    await setter.remove();
    await withTimeout(waiting, 10_000, 'the wait ends once the barrier is removed');
    await waiter.close();
    await setter.close();
  });

  test('bad input is refused', async () => {
    const [a] = await fx.sessionsApart(1);
    assert.throws(() => new Barrier(a!, 'no-slash'), InvalidArgumentError);
    assert.throws(() => new Barrier(a!, '/'), InvalidArgumentError);
    assert.throws(() => new Barrier(a!, '/x', { bogus: 1 } as never), InvalidArgumentError);
    await assert.rejects(new Barrier(a!, '/x').wait({ timeout: 5 } as never), InvalidArgumentError);
    await assert.rejects(new Barrier(a!, '/x').wait({ timeoutMs: -1 }), InvalidArgumentError);
  });
});

describe('DoubleBarrier', () => {
  test('under a blackhole every call keeps its deadline: set and remove given up by their signal, enter by its timeout with its watch read unanswered; no node, no watch left after the heal', async () => {
    const path = uniquePath('dbar-blackhole');
    const proxy = await fx.proxy();
    // A long session timeout: the session would notice the dead connection only after about 6.7 s.
    const s = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 10_000 });
    await s.mkdirp(path);
    const barrier = new Barrier(s, `${path}-gate`);
    const member = new DoubleBarrier(s, path, { memberCount: 2 });
    proxy.blackhole();
    const started = performance.now();
    for (const call of [(signal: AbortSignal) => barrier.set({ signal }), (signal: AbortSignal) => barrier.remove({ signal })]) {
      await assert.rejects(call(AbortSignal.timeout(300)), (err: Error) => err.name === 'TimeoutError');
    }
    await assert.rejects(member.enter({ timeoutMs: 300 }), OperationTimeoutError);
    assert.ok(performance.now() - started < 4000, `the three calls took ${Math.round(performance.now() - started)} ms`);
    assert.equal(member.state, 'idle');
    proxy.pass();
    // The member node the unanswered create may have made is deleted behind it.
    await waitFor(async () => (await fx.children(path)).length === 0, { timeoutMs: 15_000, message: 'no member node left' });
    // The ready watch whose read was answered after enter gave up is removed once armed.
    await waitFor(() => s.activeWatchCount === 0, { timeoutMs: 15_000, message: 'no watch left in the client' });
    await fx.waitNoWatches(s, path);
    await barrier.remove();
    assert.equal(await fx.observer.exists(`${path}-gate`), null);
    await member.close();
  });

  test('enter() returns once memberCount entered, leave() once all left; nothing is left', async () => {
    const path = uniquePath('double');
    const sessions = await fx.sessionsApart(3);
    const members = sessions.map((s) => new DoubleBarrier(s, path, { memberCount: 3 }));
    const entered: number[] = [];
    const first = members.slice(0, 2).map((m, i) => m.enter({ timeoutMs: 20000 }).then(() => entered.push(i)));
    await childCount(path, 2);
    assert.deepEqual(entered, [], 'nobody passes enter before the third');
    await members[2]!.enter({ timeoutMs: 20000 });
    await Promise.all(first);
    assert.deepEqual((await fx.children(path)).filter((c) => c === 'ready'), ['ready']);
    const left: number[] = [];
    const leaving = members.slice(0, 2).map((m, i) => m.leave({ timeoutMs: 20000 }).then(() => left.push(i)));
    // The third still in: nobody is done leaving.
    await waitFor(async () => (await fx.children(path)).filter((c) => c !== 'ready').length <= 2, { timeoutMs: 10000, message: 'leavers delete' });
    assert.deepEqual(left, []);
    await members[2]!.leave({ timeoutMs: 20000 });
    await Promise.all(leaving);
    assert.equal(await fx.observer.exists(path), null, 'the barrier is gone');
    for (const s of sessions) assert.equal(s.activeWatchCount, 0);
    for (const m of members) assert.equal(m.state, 'left');
  });

  test('an enter that times out or is aborted deletes its node and watch', async () => {
    const path = uniquePath('double-timeout');
    const [a] = await fx.sessionsApart(1);
    const m = new DoubleBarrier(a!, path, { memberCount: 2 });
    await assert.rejects(m.enter({ timeoutMs: 300 }), OperationTimeoutError);
    assert.equal(m.state, 'idle');
    // The timed-out enter's node goes in the background: wait for it, or the child counted next
    // may be that one, and the abort below would land while the second enter's watch-setting read
    // is still on its way (its watch is removed when its reply comes, after close() returned).
    await childCount(path, 0);
    const ac = new AbortController();
    const p = m.enter({ signal: ac.signal });
    await childCount(path, 1);
    ac.abort(new Error('enough'));
    await assert.rejects(p, /enough/);
    await childCount(path, 0);
    await m.close();
    assert.equal(a!.activeWatchCount, 0);
    await fx.waitNoWatches(a!, path);
    await fx.observer.delete(path);
  });

  test('a participant whose session expires counts as left', async () => {
    const path = uniquePath('double-expiry');
    const proxy = await fx.proxy();
    const [a] = await fx.sessionsApart(1);
    const victimSession = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
    const m = new DoubleBarrier(a!, path, { memberCount: 2 });
    const victim = new DoubleBarrier(victimSession, path, { memberCount: 2 });
    await Promise.all([m.enter({ timeoutMs: 20000 }), victim.enter({ timeoutMs: 20000 })]);
    await expireSession(victimSession, proxy);
    await m.leave({ timeoutMs: 20000 });
    assert.equal(await fx.observer.exists(path), null);
  });

  test('an enter in progress rejects when its session expires (its node is gone)', async () => {
    const path = uniquePath('double-expiry-enter');
    const proxy = await fx.proxy();
    const victimSession = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
    const victim = new DoubleBarrier(victimSession, path, { memberCount: 2 });
    const p = victim.enter({ timeoutMs: 30000 });
    p.catch(() => undefined);
    await childCount(path, 1);
    await expireSession(victimSession, proxy);
    await assert.rejects(withTimeout(p, 10000, 'enter ends'));
    assert.equal(victim.state, 'idle');
    await childCount(path, 0);
    await fx.observer.delete(path).catch(() => undefined);
  });

  test('bad input and wrong order are refused', async () => {
    const [a] = await fx.sessionsApart(1);
    assert.throws(() => new DoubleBarrier(a!, '/x', { memberCount: 0 }), InvalidArgumentError);
    assert.throws(() => new DoubleBarrier(a!, '/x', { memberCount: 1.5 }), InvalidArgumentError);
    assert.throws(() => new DoubleBarrier(a!, '/x', undefined as never), InvalidArgumentError);
    assert.throws(() => new DoubleBarrier(a!, '/x', { memberCount: 2, members: 2 } as never), InvalidArgumentError);
    assert.throws(() => new DoubleBarrier(a!, 'x/', { memberCount: 2 }), InvalidArgumentError);
    const m = new DoubleBarrier(a!, uniquePath('double-order'), { memberCount: 1 });
    await assert.rejects(m.leave(), IllegalStateError);
    await m.enter({ timeoutMs: 5000 });
    await assert.rejects(m.enter(), IllegalStateError);
    await m.leave({ timeoutMs: 5000 });
    await m.close();
    await assert.rejects(m.enter(), ClosedError);
  });
});
