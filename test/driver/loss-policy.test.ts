// lossPolicy (issue 9, "a SUSPENDED policy for locks"): with 'suspended' a held lock's signal
// aborts already at SUSPENDED and the lock is given up (its node deleted once the session is
// back); with the default 'lost', a suspension that ends in RECONNECTED keeps the lock.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentError, LockLostError, NotHeldError } from '../../src/errors.js';
import { Mutex, ReadWriteLock, Semaphore, type LockHandle, type ZkSession } from '../../src/index.js';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** A session through its own proxy, with a short timeout so a suspension comes quickly. */
async function proxied(): Promise<{ session: ZkSession; proxy: Awaited<ReturnType<typeof fx.proxy>> }> {
  const proxy = await fx.proxy();
  const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 3000 });
  return { session, proxy };
}

describe('lossPolicy', () => {
  test("'suspended': the signal aborts at SUSPENDED, release settles at once, the node goes once reconnected, the next waiter is granted", async () => {
    const { session, proxy } = await proxied();
    const [other] = (await fx.sessionsN(1)) as [ZkSession];
    const path = uniquePath('policy-suspended');
    const mutex = new Mutex(session, path, { lossPolicy: 'suspended' });
    const lost: LockLostError[] = [];
    mutex.on('lost', (_h, e) => lost.push(e));
    const handle = await mutex.acquire({ timeoutMs: 5000 });
    const waiting = new Mutex(other, path).acquire({ timeoutMs: 20_000 });
    const suspended = nextState(session, 'SUSPENDED', 5000);
    proxy.blackhole();
    await suspended;
    assert.ok(handle.signal.aborted, 'aborted at SUSPENDED');
    assert.ok(handle.signal.reason instanceof LockLostError);
    assert.match((handle.signal.reason as Error).message, /may be lost/);
    assert.equal(lost.length, 1);
    assert.equal(handle.isHeld, false);
    // Settles without the server.
    await withTimeout(assert.rejects(handle.release(), NotHeldError), 500, 'release of a given-up lock');
    await withTimeout(handle[Symbol.asyncDispose](), 500, 'dispose of a given-up lock');
    const reconnected = nextState(session, 'RECONNECTED', 5000);
    proxy.pass();
    await reconnected;
    // Same session, yet the lock was given up: our node is deleted and the waiter takes over.
    const next = await withTimeout(waiting, 5000, 'the next waiter');
    await waitFor(async () => (await fx.observer.exists(handle.path)) === null, { timeoutMs: 5000, message: 'our node deleted' });
    await next.release();
    await mutex.close();
    await fx.waitNoWatches(session, path);
  });

  test("'lost' (default): a suspension that ends in RECONNECTED keeps the lock", async () => {
    const { session, proxy } = await proxied();
    const path = uniquePath('policy-lost');
    const mutex = new Mutex(session, path);
    const handle = await mutex.acquire({ timeoutMs: 5000 });
    let suspendedEvents = 0;
    mutex.on('suspended', () => (suspendedEvents += 1));
    const suspended = nextState(session, 'SUSPENDED', 5000);
    proxy.blackhole();
    await suspended;
    assert.equal(handle.signal.aborted, false, 'not aborted at SUSPENDED');
    assert.equal(suspendedEvents, 1);
    const reconnected = nextState(session, 'RECONNECTED', 5000);
    proxy.pass();
    await reconnected;
    assert.equal(handle.isHeld, true);
    assert.ok(await fx.observer.exists(handle.path));
    await handle.release();
    await mutex.close();
  });

  test("'suspended' on a semaphore and both sides of a read-write lock; bad values are InvalidArgumentError", async () => {
    const { session, proxy } = await proxied();
    const base = uniquePath('policy-others');
    const sem = new Semaphore(session, `${base}/sem`, { maxLeases: 2, lossPolicy: 'suspended' });
    const rw = new ReadWriteLock(session, `${base}/rw`, { lossPolicy: 'suspended' });
    const handles: LockHandle[] = [await sem.acquire(2, { timeoutMs: 5000 }), await rw.writeLock().acquire({ timeoutMs: 5000 })];
    handles.push(await rw.readLock().acquire({ timeoutMs: 5000 })); // a downgrade
    const suspended = nextState(session, 'SUSPENDED', 5000);
    proxy.blackhole();
    await suspended;
    for (const h of handles) assert.ok(h.signal.reason instanceof LockLostError, h.path);
    const reconnected = nextState(session, 'RECONNECTED', 5000);
    proxy.pass();
    await reconnected;
    for (const h of handles) for (const p of h.paths) await waitFor(async () => (await fx.observer.exists(p)) === null, { timeoutMs: 5000, message: `${p} deleted` });
    await Promise.all([sem.close(), rw.close()]);
    for (const bad of ['SUSPENDED', 'never', true]) {
      assert.throws(() => new Mutex(session, `${base}/m`, { lossPolicy: bad as 'lost' }), InvalidArgumentError);
    }
    assert.throws(() => new Mutex(session, `${base}/m`, { watchOwnNode: 'yes' as unknown as boolean }), InvalidArgumentError);
  });
});
