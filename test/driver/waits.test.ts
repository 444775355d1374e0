// Every wait is the caller's (issue 9, items 4 and 5), against a real standalone ZooKeeper with
// real faults: acquire, take and put honour their deadline after a lost reply and in an
// outage; with renewOnLoss off, waits reject with SessionExpiredError after LOST; releasing,
// disposing and closing what a LOST session held settles without waiting for the server, and
// runExclusive reports a loss as LockLostError. Whatever was left on the server while it was
// unreachable is gone once it is back.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClosedError, LockLostError, LockTimeoutError, NotHeldError, OperationTimeoutError, SessionExpiredError } from '../../src/errors.js';
import { DistributedQueue, LeaderLatch, LeaderSelector, Mutex, ReadWriteLock, Semaphore, type SessionOptions, type ZkSession } from '../../src/index.js';
import { ChaosProxy, waitFor, withTimeout } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** How long after its deadline (or the event that ends it) a wait may take to settle. */
const SLACK_MS = 1000;

/** A session whose only route to the server is its own ChaosProxy. */
async function proxied(options: SessionOptions = {}): Promise<{ session: ZkSession; proxy: ChaosProxy }> {
  const proxy = await fx.proxy();
  return { session: await fx.pool.connect(proxy.connectString, options), proxy };
}

const childrenOf = (path: string): Promise<string[]> => fx.children(path);

/** Every node below `path` (not `path` itself), as paths relative to it. */
async function tree(path: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const c of await childrenOf(path)) out.push(`${prefix}${c}`, ...(await tree(`${path}/${c}`, `${prefix}${c}/`)));
  return out;
}

/** Waits until exactly `expected` is below `path`. */
function leftBehind(path: string, expected: readonly string[], timeoutMs = 15000): Promise<boolean> {
  const want = [...expected].sort().join(',');
  return waitFor(async () => (await tree(path)).sort().join(',') === want, { timeoutMs, message: `only [${want}] below ${path}` });
}

type Outcome<T> = { value?: T; error?: unknown };

/** The outcome of `p`, and how long it took to settle from `since`. */
async function outcome<T>(p: Promise<T>, since: number): Promise<Outcome<T> & { ms: number }> {
  try {
    const value = await p;
    return { value, ms: performance.now() - since };
  } catch (error) {
    return { error, ms: performance.now() - since };
  }
}

/**
 * Cuts the reply of the next request off: replies are held by latency, and once `applied` says
 * the server has applied the request, every connection is dropped and new ones are refused (an
 * outage that lasts until `heal`).
 */
async function loseReply(proxy: ChaosProxy, applied: () => Promise<boolean>, send: () => void): Promise<void> {
  proxy.latency(250);
  send();
  await waitFor(applied, { timeoutMs: 5000, message: 'request applied on the server' });
  proxy.reject(true);
  proxy.dropAll();
}

/** Resolves once `signal` has aborted (at once if it already has). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** Ends the outage. */
function heal(proxy: ChaosProxy): void {
  proxy.reject(false);
  proxy.pass();
}

/** Refuses every connection of the proxy's client from now on (the server stays up). */
function outage(proxy: ChaosProxy): void {
  proxy.reject(true);
  proxy.dropAll();
}

describe('session: after LOST with renewOnLoss off, waits reject', () => {
  test('waitConnected rejects with SessionExpiredError, pending and new', async () => {
    const { session, proxy } = await proxied({ sessionTimeoutMs: 2000, renewOnLoss: false });
    outage(proxy);
    await nextState(session, 'SUSPENDED', 10000);
    const pending = outcome(session.waitConnected(), performance.now());
    await nextState(session, 'LOST', 10000);
    const lostAt = performance.now();
    const r = await withTimeout(pending, SLACK_MS, 'waitConnected pending at LOST');
    assert.ok(r.error instanceof SessionExpiredError, String(r.error));
    assert.ok(performance.now() - lostAt < SLACK_MS);
    await assert.rejects(withTimeout(session.waitConnected({ timeoutMs: 30000 }), SLACK_MS, 'waitConnected after LOST'), SessionExpiredError);
    heal(proxy);
  });
});

describe('acquire honours its deadline after a lost reply and in an outage', () => {
  test('lost create reply, then an outage: LockTimeoutError by the deadline; the node is deleted once the server is back', async () => {
    const path = uniquePath('lost-create');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 8000 });
    const holder = await new Mutex(fx.observer, path).acquire();
    const m = new Mutex(session, path, { participantId: 'victim' });
    const start = performance.now();
    let pending!: Promise<Outcome<unknown> & { ms: number }>;
    await loseReply(proxy, async () => (await childrenOf(path)).length === 2, () => {
      pending = outcome(m.acquire({ timeoutMs: 1000 }), start);
    });
    const r = await withTimeout(pending, 1000 + SLACK_MS, 'acquire settled');
    assert.ok(r.error instanceof LockTimeoutError, String(r.error));
    assert.ok(r.ms < 1000 + SLACK_MS, `settled after ${r.ms} ms`);
    // The create was applied: once reconnected, the cleanup finds it by its uuid and deletes it.
    heal(proxy);
    await nextState(session, 'RECONNECTED', 10000);
    await leftBehind(path, [holder.path.slice(path.length + 1)]);
    await holder.release();
    await m.close();
    await leftBehind(path, []);
    await fx.waitNoWatches(session, path);
  });

  test('a waiter whose deadline passes in a partition settles by it; its node is deleted after the partition', async () => {
    const path = uniquePath('partition');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 8000 });
    const holder = await new Mutex(fx.observer, path).acquire();
    const m = new Mutex(session, path, { participantId: 'victim' });
    const start = performance.now();
    const pending = outcome(m.acquire({ timeoutMs: 1500 }), start);
    await waitFor(async () => (await childrenOf(path)).length === 2, { timeoutMs: 5000, message: 'waiter queued' });
    proxy.blackhole();
    const r = await withTimeout(pending, 1500 + SLACK_MS, 'acquire settled');
    assert.ok(r.error instanceof LockTimeoutError, String(r.error));
    assert.ok(r.ms < 1500 + SLACK_MS, `settled after ${r.ms} ms`);
    proxy.pass();
    await leftBehind(path, [holder.path.slice(path.length + 1)]);
    await holder.release();
    await m.close();
    await leftBehind(path, []);
    await fx.waitNoWatches(session, path);
  });

  test('an abort during an outage rejects with its reason at once', async () => {
    const path = uniquePath('abort-outage');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 8000 });
    const holder = await new Mutex(fx.observer, path).acquire();
    const m = new Mutex(session, path);
    const ac = new AbortController();
    const pending = outcome(m.acquire({ signal: ac.signal }), performance.now());
    await waitFor(async () => (await childrenOf(path)).length === 2, { timeoutMs: 5000, message: 'waiter queued' });
    outage(proxy);
    await nextState(session, 'SUSPENDED', 10000);
    const reason = new Error('no longer needed');
    const abortedAt = performance.now();
    ac.abort(reason);
    const r = await withTimeout(pending, SLACK_MS, 'acquire settled after the abort');
    assert.equal(r.error, reason);
    assert.ok(performance.now() - abortedAt < SLACK_MS);
    heal(proxy);
    await leftBehind(path, [holder.path.slice(path.length + 1)]);
    await holder.release();
    await m.close();
    await leftBehind(path, []);
    await fx.waitNoWatches(session, path);
  });

  test('renewOnLoss off: a lost create reply, then LOST: acquire rejects with SessionExpiredError; the node goes with the session', async () => {
    const path = uniquePath('lost-final');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 2000, renewOnLoss: false });
    const holder = await new Mutex(fx.observer, path).acquire();
    const m = new Mutex(session, path);
    let pending!: Promise<Outcome<unknown> & { ms: number }>;
    await loseReply(proxy, async () => (await childrenOf(path)).length === 2, () => {
      pending = outcome(m.acquire(), performance.now());
    });
    await nextState(session, 'LOST', 10000);
    const r = await withTimeout(pending, SLACK_MS, 'acquire settled after LOST');
    assert.ok(r.error instanceof SessionExpiredError, String(r.error));
    await assert.rejects(withTimeout(m.acquire({ timeoutMs: 30000 }), SLACK_MS, 'a new acquire after LOST'), SessionExpiredError);
    heal(proxy);
    await leftBehind(path, [holder.path.slice(path.length + 1)]);
    await holder.release();
    await withTimeout(m.close(), SLACK_MS, 'close after LOST');
    await leftBehind(path, []);
  });
});

describe('the queue honours deadlines after a lost reply', () => {
  test("take: the claim's reply is lost, then an outage: OperationTimeoutError by the deadline", async () => {
    const path = uniquePath('take-lost');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 8000 });
    const q = new DistributedQueue(session, path);
    const producer = new DistributedQueue(fx.observer, path);
    await producer.put('warm-up');
    assert.equal((await q.take({ timeoutMs: 5000 })).toString(), 'warm-up');
    const item = await producer.put('a');
    const start = performance.now();
    let pending!: Promise<Outcome<Buffer> & { ms: number }>;
    await loseReply(proxy, async () => (await fx.observer.exists(item)) === null, () => {
      pending = outcome(q.take({ timeoutMs: 5000 }), start);
    });
    const r = await withTimeout(pending, 5000 + SLACK_MS, 'take settled');
    // At most once: the item was deleted by our claim, whose reply was lost; it is not returned.
    assert.ok(r.error instanceof OperationTimeoutError, String(r.error ?? r.value));
    assert.ok(r.ms < 5000 + SLACK_MS, `settled after ${r.ms} ms`);
    heal(proxy);
    await nextState(session, 'RECONNECTED', 10000);
    await waitFor(async () => (await childrenOf(`${path}/consumers`)).length === 0, { timeoutMs: 10000, message: 'no consumer node' });
    await fx.waitNoWatches(session, path);
    await q.close();
    await fx.observer.deleteRecursive(path);
  });

  test('put: the reply is lost, then an outage: OperationTimeoutError by the deadline, and the item is there once', async () => {
    const path = uniquePath('put-lost');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 8000 });
    const q = new DistributedQueue(session, path);
    await q.put('warm-up');
    const before = await tree(path);
    const start = performance.now();
    let pending!: Promise<Outcome<string> & { ms: number }>;
    await loseReply(proxy, async () => (await tree(path)).length > before.length, () => {
      pending = outcome(q.put('b', { timeoutMs: 3000 }), start);
    });
    const r = await withTimeout(pending, 3000 + SLACK_MS, 'put settled');
    // The outcome of a write whose reply is lost is unknown to the caller; here it was applied.
    assert.ok(r.error instanceof OperationTimeoutError, String(r.error ?? r.value));
    assert.ok(r.ms < 3000 + SLACK_MS, `settled after ${r.ms} ms`);
    heal(proxy);
    await nextState(session, 'RECONNECTED', 10000);
    assert.equal(await q.size(), 2, 'the item is there once, not twice');
    await q.close();
    await fx.observer.deleteRecursive(path);
  });

  test('renewOnLoss off: put after a lost reply, a waiting take and a consumer reject with SessionExpiredError after LOST', async () => {
    const path = uniquePath('queue-final');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 2000, renewOnLoss: false });
    const q = new DistributedQueue(session, `${path}/put`);
    await q.put('warm-up');
    const takes = new DistributedQueue(session, `${path}/take`);
    const taking = outcome(takes.take({ timeoutMs: 60000 }), performance.now());
    const consumer = new DistributedQueue(session, `${path}/consume`);
    const consuming = outcome(consumer.consume(() => undefined), performance.now());
    await waitFor(async () => (await childrenOf(`${path}/take/consumers`)).length === 1 && (await childrenOf(`${path}/consume/consumers`)).length === 1, {
      timeoutMs: 5000,
      message: 'the take and the consumer wait',
    });
    const before = await tree(`${path}/put`);
    let pending!: Promise<Outcome<string> & { ms: number }>;
    await loseReply(proxy, async () => (await tree(`${path}/put`)).length > before.length, () => {
      pending = outcome(q.put('b'), performance.now());
    });
    await nextState(session, 'LOST', 10000);
    const waits: [string, Promise<Outcome<unknown>>][] = [['put', pending], ['take', taking], ['consume', consuming]];
    for (const [what, p] of waits) {
      const r = await withTimeout(p, SLACK_MS, `${what} settled after LOST`);
      assert.ok(r.error instanceof SessionExpiredError, `${what}: ${String(r.error ?? r.value)}`);
    }
    heal(proxy);
    await withTimeout(Promise.all([q.close(), takes.close(), consumer.close()]), SLACK_MS, 'close after LOST');
    await waitFor(async () => (await tree(path)).every((n) => !n.includes('_c_')), { timeoutMs: 15000, message: 'the lost nodes expired' });
    await fx.observer.deleteRecursive(path);
  });
});

describe('what a LOST session held settles without the server', () => {
  test('release, await using, runExclusive and close of lost locks, leases and read-write locks settle in the outage', async () => {
    const path = uniquePath('lost-release');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 2000 });
    const mutex = new Mutex(session, `${path}/m`);
    const sem = new Semaphore(session, `${path}/s`, { maxLeases: 3 });
    const rw = new ReadWriteLock(session, `${path}/rw`);
    const m = await mutex.acquire();
    const lease = await sem.acquire();
    const w = await rw.writeLock().acquire();
    let ranUntilLost = false;
    const exclusive = outcome(
      sem.runExclusive(async (signal) => {
        await aborted(signal);
        ranUntilLost = true;
        return 'done';
      }),
      performance.now(),
    );
    await waitFor(async () => (await tree(path)).length === 7, { timeoutMs: 5000, message: 'three holders and a lease queued' });
    outage(proxy);
    await nextState(session, 'LOST', 10000);
    assert.ok(m.signal.aborted && lease.signal.aborted && w.signal.aborted);

    await withTimeout(assert.rejects(m.release(), NotHeldError), SLACK_MS, 'release of a lost mutex');
    await withTimeout(lease[Symbol.asyncDispose](), SLACK_MS, 'await using of a lost lease');
    const r = await withTimeout(exclusive, SLACK_MS, 'runExclusive of a lost lease');
    assert.ok(ranUntilLost);
    assert.ok(r.error instanceof LockLostError, String(r.error ?? r.value));
    await withTimeout(Promise.all([mutex.close(), sem.close(), rw.close()]), SLACK_MS, 'close of the recipes');
    assert.ok(!w.isHeld);

    heal(proxy);
    await nextState(session, 'CONNECTED', 10000);
    // The server expires the old session, and its nodes go with it.
    await waitFor(async () => (await tree(path)).every((n) => !n.includes('/')), { timeoutMs: 15000, message: 'the lost nodes expired' });
    await fx.observer.deleteRecursive(path);
  });

  test('runExclusive rejects with LockLostError when the lock was lost while fn ran', async () => {
    const path = uniquePath('lost-in-fn');
    const [s] = await fx.sessionsN(1);
    const m = new Mutex(s!, path, { watchOwnNode: true });
    const result = m.runExclusive(async (signal, handle) => {
      await fx.observer.delete(handle.path); // someone deletes our lock node
      await aborted(signal);
      return 'done';
    });
    await assert.rejects(result, LockLostError);
    await m.close();
    await leftBehind(path, []);
    await fx.waitNoWatches(s!, path);
  });

  test("LeaderLatch (policy 'lost'): close after LOST settles in the outage", async () => {
    const path = uniquePath('latch-lost');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 2000 });
    const latch = new LeaderLatch(session, path, { policy: 'lost' });
    latch.start();
    await latch.awaitLeadership({ timeoutMs: 5000 });
    const revoked = new Promise((resolve) => latch.once('revoked', resolve));
    outage(proxy);
    await nextState(session, 'LOST', 10000);
    assert.ok((await withTimeout(revoked, SLACK_MS, 'revoked')) instanceof LockLostError);
    await withTimeout(latch.close(), SLACK_MS, 'close after LOST');
    heal(proxy);
    await leftBehind(path, [], 15000);
    await fx.observer.deleteRecursive(path);
  });

  test('LeaderLatch and LeaderSelector, renewOnLoss off: after LOST they reject and stop (no busy loop)', async () => {
    const path = uniquePath('latch-final');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 2000, renewOnLoss: false });
    const latch = new LeaderLatch(session, `${path}/latch`);
    const errors: Error[] = [];
    latch.on('error', (e) => errors.push(e));
    latch.start();
    await latch.awaitLeadership({ timeoutMs: 5000 });
    const selector = new LeaderSelector(session, `${path}/selector`);
    let terms = 0;
    const running = outcome(
      selector.run(
        async (signal) => {
          terms++;
          await aborted(signal);
        },
        { requeue: true },
      ),
      performance.now(),
    );
    await waitFor(() => terms === 1, { timeoutMs: 5000, message: 'the selector leads' });
    outage(proxy);
    await nextState(session, 'LOST', 10000);
    const r = await withTimeout(running, SLACK_MS, 'selector.run settled after LOST');
    assert.ok(r.error instanceof SessionExpiredError, String(r.error));
    await assert.rejects(withTimeout(latch.awaitLeadership({ timeoutMs: 30000 }), SLACK_MS, 'awaitLeadership after LOST'), SessionExpiredError);
    assert.equal(errors.length, 1, 'told once; the latch does not retry a session that cannot come back');
    assert.ok(errors[0] instanceof SessionExpiredError);
    await withTimeout(Promise.all([latch.close(), selector.close()]), SLACK_MS, 'close after LOST');
    heal(proxy);
    // The server expires the session: nothing but the two directories is left.
    await waitFor(async () => (await tree(path)).every((n) => !n.includes('/')), { timeoutMs: 15000, message: 'the lost nodes expired' });
    await fx.observer.deleteRecursive(path);
  });

  test('queue consumer: close after LOST settles in the outage; the item is delivered again later', async () => {
    const path = uniquePath('consume-lost');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 2000 });
    const q = new DistributedQueue(session, path);
    await new DistributedQueue(fx.observer, path).put('a');
    let started!: () => void;
    const handling = new Promise<void>((resolve) => (started = resolve));
    const consuming = q.consume(async (_data, delivery) => {
      started();
      await aborted(delivery.signal);
    });
    await withTimeout(handling, 5000, 'handler started');
    outage(proxy);
    await nextState(session, 'LOST', 10000);
    await withTimeout(q.close(), SLACK_MS, 'close after LOST');
    await withTimeout(consuming, SLACK_MS, 'consume settled');
    heal(proxy);
    // The claim went with the session: another consumer gets the item again.
    const other = new DistributedQueue(fx.observer, path);
    const redelivered = new Promise<number>((resolve) => {
      void other.consume((_d, delivery) => resolve(delivery.redeliveries));
    });
    assert.equal(await withTimeout(redelivered, 15000, 'redelivery'), 1);
    await other.close();
    await waitFor(async () => (await tree(`${path}/claims`)).length === 0 && (await tree(`${path}/consumers`)).length === 0, { timeoutMs: 10000, message: 'no claim or consumer left' });
    await fx.observer.deleteRecursive(path);
  });

  test('closing the session under a running latch and consumer stops them (no busy loop)', async () => {
    const path = uniquePath('session-closed');
    const [s] = await fx.sessionsN(1);
    const latch = new LeaderLatch(s!, `${path}/latch`);
    const errors: Error[] = [];
    latch.on('error', (e) => errors.push(e));
    latch.start();
    await latch.awaitLeadership({ timeoutMs: 5000 });
    const q = new DistributedQueue(s!, `${path}/q`);
    const consuming = outcome(q.consume(() => undefined), performance.now());
    await waitFor(async () => (await childrenOf(`${path}/q/consumers`)).length === 1, { timeoutMs: 5000, message: 'the consumer waits at the head' });
    await s!.close();
    // Before: both loops retried at once, forever, on microtasks only: the process froze here.
    const r = await withTimeout(consuming, SLACK_MS, 'consume settled after the session closed');
    assert.ok(r.error instanceof ClosedError, String(r.error));
    await assert.rejects(withTimeout(latch.awaitLeadership(), SLACK_MS, 'awaitLeadership after the session closed'), ClosedError);
    assert.equal(errors.length, 1, 'told once; the latch does not retry a closed session');
    assert.ok(errors[0] instanceof ClosedError);
    await withTimeout(Promise.all([latch.close(), q.close()]), SLACK_MS, 'close');
    // The persistent directories stay; no node of the closed session does.
    await waitFor(async () => (await tree(path)).every((n) => !n.includes('_c_')), { timeoutMs: 5000, message: 'no node of the closed session' });
    await fx.observer.deleteRecursive(path);
  });
});
