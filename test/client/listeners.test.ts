// Hundreds of concurrent waits on one session, against a real ZooKeeper: no
// MaxListenersExceededWarning (Node warns at an 11th 'abort' listener on one signal), and once
// the waits settle (granted and released, timed out, aborted, failed) the shared signals (the
// session's, the caller's) carry as many listeners as before, and nothing of the waits stays
// in them. Each test opens its own session and signals: Node warns once per signal.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, test } from 'node:test';
import { LockLostError, LockTimeoutError, OperationTimeoutError } from '../../src/errors.js';
import { DistributedQueue, LeaderLatch, Mutex, ReadWriteLock, Semaphore, type LockHandle, type ZkSession } from '../../src/index.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { subscriberCount } from '../../src/util/signals.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** Concurrent waits per scenario. */
const N = 300;

/** Our 'abort' listeners on `signal`. */
const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

/**
 * How many signals composed with `AbortSignal.any` `signal` still refers to. Node 20 keeps one
 * entry per composite in each source (an internal set), for as long as the source lives: a
 * long-lived signal grows by one per call that composes it. 0 where Node has no such set.
 */
function composedFrom(signal: AbortSignal): number {
  const key = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
  const set = key === undefined ? undefined : (signal as unknown as Record<symbol, Set<unknown> | undefined>)[key];
  return set?.size ?? 0;
}

/** Collects the MaxListenersExceededWarnings emitted while `body` runs (and the tick after it). */
async function noWarnings(body: () => Promise<void>): Promise<void> {
  const seen: Error[] = [];
  const onWarning = (w: Error): void => {
    if (w.name === 'MaxListenersExceededWarning') seen.push(w);
  };
  process.on('warning', onWarning);
  try {
    await body();
    // Warnings are emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(
    seen.map((w) => w.message),
    [],
  );
}

/**
 * The shared signals are back to no subscription of ours and no composite refers to them; a
 * caller's signal has no listener of ours left, a session's at most its one kept listener.
 */
function atBaseline(user: AbortSignal | undefined, session: AbortSignal): void {
  for (const s of user ? [user, session] : [session]) {
    assert.equal(subscriberCount(s), 0, 'subscriptions left on a shared signal');
    assert.equal(composedFrom(s), 0, 'composed signals left in a shared signal');
  }
  if (user) assert.equal(listeners(user), 0, "abort listeners left on the caller's signal");
  assert.ok(listeners(session) <= 1, `${listeners(session)} abort listeners on the session's signal`);
}

/** Waits until `path` has `count` children. */
function queued(path: string, count: number): Promise<boolean> {
  return waitFor(async () => (await fx.children(path)).length === count, { timeoutMs: 30_000, message: `${count} nodes under ${path}` });
}

/** Every promise rejects; the reasons. */
async function rejections(promises: readonly Promise<unknown>[]): Promise<unknown[]> {
  const results = await Promise.allSettled(promises);
  return results.map((r) => {
    assert.equal(r.status, 'rejected');
    return r.reason;
  });
}

describe('hundreds of waits on one session', () => {
  test('mutex: waiters with and without a shared caller signal, granted one by one', async () => {
    const session = await fx.pool.connect(fx.server.connectString);
    const user = new AbortController();
    const mutex = new Mutex(session, uniquePath('mutex'));
    await noWarnings(async () => {
      const holder = await mutex.acquire();
      const waits = Array.from({ length: N }, async (_, i) => {
        const h = await mutex.acquire(i % 2 === 0 ? { signal: user.signal } : {});
        await h.release();
      });
      await queued(mutex.path, N + 1);
      // While they wait: one listener at most, not one per wait.
      assert.ok(listeners(user.signal) <= 1, `${listeners(user.signal)} listeners on the caller's signal`);
      assert.ok(listeners(session.signal) <= 1, `${listeners(session.signal)} listeners on the session's signal`);
      await holder.release();
      await Promise.all(waits);
    });
    atBaseline(user.signal, session.signal);
    await mutex.close();
  });

  test('mutex: waits that time out, are aborted by one shared signal, or try once', async () => {
    const session = await fx.pool.connect(fx.server.connectString);
    const user = new AbortController();
    const stop = new AbortController();
    const mutex = new Mutex(session, uniquePath('mutex-give-up'));
    await noWarnings(async () => {
      const holder = await mutex.acquire();
      const aborted = Array.from({ length: N }, (_, i) => mutex.acquire(i % 2 === 0 ? { signal: stop.signal } : { signal: stop.signal, timeoutMs: 60_000 }));
      await queued(mutex.path, N + 1);
      const reason = new Error('stop waiting');
      stop.abort(reason);
      for (const r of await rejections(aborted)) assert.equal(r, reason);
      for (const r of await rejections(Array.from({ length: N }, () => mutex.acquire({ timeoutMs: 1000, signal: user.signal })))) assert.ok(r instanceof LockTimeoutError);
      const tries = await Promise.all(Array.from({ length: N }, () => mutex.tryAcquire()));
      assert.ok(tries.every((t) => t === null));
      assert.equal((await fx.children(mutex.path)).length, 1); // the holder's node only
      await holder.release();
    });
    atBaseline(user.signal, session.signal);
    await mutex.close();
  });

  test('semaphore and read-write lock: hundreds of holders at once, and a writer waiting behind readers', async () => {
    const session = await fx.pool.connect(fx.server.connectString);
    const user = new AbortController();
    const semaphore = new Semaphore(session, uniquePath('semaphore'), { maxLeases: N });
    const rw = new ReadWriteLock(session, uniquePath('rwlock'));
    // Another instance: this one holds read locks, and would wait for itself.
    const writers = new ReadWriteLock(session, rw.readLock().path);
    await noWarnings(async () => {
      const leases = await Promise.all(Array.from({ length: N }, () => semaphore.acquire({ signal: user.signal })));
      const readers = await Promise.all(Array.from({ length: N }, () => rw.readLock().acquire({ signal: user.signal })));
      const writer = writers.writeLock().acquire({ signal: user.signal });
      await queued(rw.readLock().path, N + 1);
      // Every holder follows the session's signal (it aborts their handles): through one listener.
      assert.ok(listeners(session.signal) <= 1, `${listeners(session.signal)} listeners on the session's signal`);
      await Promise.all([...leases, ...readers].map((h) => h.release()));
      await (await writer).release();
    });
    atBaseline(user.signal, session.signal);
    await Promise.all([semaphore.close(), rw.close(), writers.close()]);
  });

  test('session expiry: hundreds of held handles are all told, once each', async () => {
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString);
    const semaphore = new Semaphore(session, uniquePath('expiry'), { maxLeases: N });
    const lost: LockHandle[] = [];
    semaphore.on('lost', (h) => lost.push(h));
    await noWarnings(async () => {
      const leases = await Promise.all(Array.from({ length: N }, () => semaphore.acquire()));
      const old = session.signal;
      await expireSession(session, proxy);
      assert.equal(lost.length, N);
      assert.equal(new Set(lost).size, N);
      assert.ok(leases.every((h) => h.signal.reason instanceof LockLostError));
      assert.equal(listeners(old), 0);
      await waitFor(() => session.state === 'CONNECTED', { timeoutMs: 20_000, message: 'a new session' });
      await Promise.all(leases.map((h) => h[Symbol.asyncDispose]()));
    });
    atBaseline(undefined, session.signal);
    await semaphore.close();
  });

  test('leader latch: followers awaiting leadership, timing out, and many latches leading at once', async () => {
    const session = await fx.pool.connect(fx.server.connectString);
    const user = new AbortController();
    const path = uniquePath('latch');
    const leader = new LeaderLatch(session, path);
    const follower = new LeaderLatch(session, path);
    const many = Array.from({ length: N }, (_, i) => new LeaderLatch(session, `${path}-${i}`));
    await noWarnings(async () => {
      leader.start();
      await leader.awaitLeadership();
      follower.start();
      const waits = Array.from({ length: N }, (_, i) => follower.awaitLeadership(i % 2 === 0 ? { signal: user.signal } : {}));
      for (const r of await rejections(Array.from({ length: N }, () => follower.awaitLeadership({ timeoutMs: 200, signal: user.signal })))) assert.ok(r instanceof LockTimeoutError);
      await leader.close();
      await Promise.all(waits);
      for (const l of many) l.start();
      await Promise.all(many.map((l) => l.awaitLeadership({ signal: user.signal })));
      // Each leader follows the session's signal (its term ends with it): through one listener.
      assert.ok(listeners(session.signal) <= 1, `${listeners(session.signal)} listeners on the session's signal`);
      await Promise.all([follower, ...many].map((l) => l.close()));
    });
    atBaseline(user.signal, session.signal);
  });

  test('queue: takes waiting for items, polls, takes that time out, and consumers stopped by one signal', async () => {
    const session = await fx.pool.connect(fx.server.connectString);
    const user = new AbortController();
    const queue = new DistributedQueue(session, uniquePath('queue'));
    await noWarnings(async () => {
      const takes = Array.from({ length: N }, (_, i) => queue.take(i % 2 === 0 ? { signal: user.signal } : {}));
      await queued(`${queue.path}/consumers`, N);
      for (let i = 0; i < N; i += 50) await queue.putAll(Array.from({ length: 50 }, (_, j) => `item ${i + j}`));
      assert.equal(new Set((await Promise.all(takes)).map(String)).size, N);
      assert.ok((await Promise.all(Array.from({ length: N }, () => queue.poll({ signal: user.signal })))).every((p) => p === null));
      for (const r of await rejections(Array.from({ length: N }, () => queue.take({ timeoutMs: 1000, signal: user.signal })))) assert.ok(r instanceof OperationTimeoutError);
      const stop = new AbortController();
      const consumers = Array.from({ length: 20 }, () => queue.consume(async () => undefined, { signal: stop.signal }));
      await queued(`${queue.path}/consumers`, 20);
      stop.abort();
      await Promise.all(consumers);
    });
    atBaseline(user.signal, session.signal);
    await queue.close();
  });

  test('session calls: reads and watches sharing one signal, some aborted, and waits through an outage', async () => {
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 10_000 });
    const user = new AbortController();
    const path = uniquePath('calls');
    const mutex = new Mutex(session, `${path}/lock`);
    await session.mkdirp(path);
    await noWarnings(async () => {
      await Promise.all(Array.from({ length: N }, () => session.getData(path, { signal: user.signal })));
      await Promise.all(Array.from({ length: N }, () => session.exists(path, { signal: user.signal })));
      const watched = await Promise.all(Array.from({ length: N }, () => session.getDataWatch(path, { signal: user.signal })));
      await session.setData(path, 'changed');
      await Promise.all(watched.map((w) => w.changed));
      const stop = new AbortController();
      const dropped = await Promise.all(Array.from({ length: N }, () => session.getChildrenWatch(path, { signal: stop.signal })));
      stop.abort();
      await rejections(dropped.map((w) => w.changed));
      assert.equal(session.activeWatchCount, 0);

      // An outage: waits for the connection, calls waiting to be sent, mutex waiters queued.
      const holder = await mutex.acquire();
      const waiters = Array.from({ length: N }, async () => (await mutex.acquire({ signal: user.signal })).release());
      await queued(mutex.path, N + 1);
      proxy.reject(true);
      proxy.dropAll();
      await nextState(session, 'SUSPENDED', 10_000);
      const connected = Array.from({ length: N }, () => session.waitConnected({ signal: user.signal }));
      const reads = Array.from({ length: N }, () => session.getData(path, { signal: user.signal }));
      proxy.reject(false);
      proxy.pass();
      await Promise.all([...connected, ...reads]);
      await holder.release();
      await Promise.all(waiters);
    });
    atBaseline(user.signal, session.signal);
    await mutex.close();
  });
});
