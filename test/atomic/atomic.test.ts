// AtomicNumber against a real server: the encoding and every verb, contended increments that
// add up, retries spent (nothing applied), promotion to the lock (and no lock node left), a
// lost reply (OutcomeUnknownError), a black hole (the deadline holds), a session expired in
// the middle of a call, corrupt data and bad input.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AtomicNumber, ClosedError, CorruptValueError, InvalidArgumentError, LockTimeoutError, Mutex, OutcomeUnknownError, RetriesExhaustedError, type ZkSession } from '../../src/index.js';
import { decodeLong, encodeLong } from '../../src/atomic/codec.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** The value at `path` as the observer reads it (undefined: no node). */
async function valueAt(path: string): Promise<bigint | undefined> {
  const stat = await fx.observer.exists(path);
  if (!stat) return undefined;
  return decodeLong((await fx.observer.getData(path)).data, path);
}

/**
 * `session`, except that each of its reads of `path` is followed, before its reply reaches the
 * recipe, by `between()`: a real write by another session (or a fault) between the recipe's read
 * and its write, at the same point of every attempt.
 */
function interleaved(session: ZkSession, path: string, between: () => Promise<void>): ZkSession {
  return new Proxy(session, {
    get(target, key) {
      if (key === 'getData') {
        return async (p: string, o: unknown) => {
          const r = await target.getData(p, o as never);
          if (p === path) await between();
          return r;
        };
      }
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

test('codec: 8 bytes big-endian signed, empty reads as 0, other sizes are corrupt', () => {
  assert.deepEqual([...encodeLong(1n)], [0, 0, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual([...encodeLong(-1n)], [255, 255, 255, 255, 255, 255, 255, 255]);
  assert.equal(decodeLong(encodeLong(AtomicNumber.MIN_VALUE), '/x'), -(2n ** 63n));
  assert.equal(decodeLong(encodeLong(AtomicNumber.MAX_VALUE), '/x'), 2n ** 63n - 1n);
  assert.equal(decodeLong(Buffer.alloc(0), '/x'), 0n);
  assert.throws(() => decodeLong(Buffer.alloc(4), '/x'), CorruptValueError);
  assert.throws(() => decodeLong(Buffer.alloc(9), '/x'), CorruptValueError);
});

test('every verb: a missing node is 0 and created (parents too) by the first update', async () => {
  const path = `${uniquePath('verbs')}/deep/counter`;
  const [s] = await fx.sessionsN(1);
  await using n = new AtomicNumber(s!, path);
  assert.deepEqual([(await n.get()).preValue, (await n.get()).succeeded], [0n, true]);
  assert.equal(await valueAt(path), undefined, 'get creates nothing');
  const cas0 = await n.compareAndSet(0, 5);
  assert.equal(cas0.succeeded, false, 'compareAndSet does not create (as Curator)');
  const inc = await n.increment({ timeoutMs: 5000 });
  assert.deepEqual([inc.succeeded, inc.preValue, inc.postValue], [true, 0n, 1n]);
  assert.deepEqual([...(await fx.observer.getData(path)).data], [0, 0, 0, 0, 0, 0, 0, 1]);
  assert.equal((await n.add(41)).postValue, 42n);
  assert.equal((await n.subtract(2n)).postValue, 40n);
  assert.equal((await n.decrement()).postValue, 39n);
  const miss = await n.compareAndSet(7, 8);
  assert.deepEqual([miss.succeeded, miss.preValue, miss.postValue], [false, 39n, 39n]);
  const hit = await n.compareAndSet(39n, -3n);
  assert.deepEqual([hit.succeeded, hit.preValue, hit.postValue], [true, 39n, -3n]);
  assert.equal((await n.trySet(100)).postValue, 100n);
  await n.forceSet(AtomicNumber.MAX_VALUE);
  assert.equal(await valueAt(path), 2n ** 63n - 1n);
  await assert.rejects(n.increment(), InvalidArgumentError, 'an overflow is refused');
  assert.equal(await valueAt(path), 2n ** 63n - 1n, 'and nothing written');
  assert.equal(await n.initialize(3), false, 'initialize of an existing node');
  const other = `${uniquePath('verbs')}/a/b`;
  await using m = new AtomicNumber(s!, other);
  assert.equal(await m.initialize(-7n), true);
  assert.equal(await valueAt(other), -7n);
  const forced = `${uniquePath('verbs')}/f/g`;
  await new AtomicNumber(s!, forced).forceSet(9);
  assert.equal(await valueAt(forced), 9n);
  // Curator reads empty data as 0; other sizes are corrupt.
  await fx.observer.setData(other, Buffer.alloc(0));
  assert.equal((await m.increment()).postValue, 1n);
  await fx.observer.setData(other, Buffer.from([1, 2, 3]));
  await assert.rejects(m.increment(), CorruptValueError);
  await assert.rejects(m.get(), CorruptValueError);
  await n.close();
  await assert.rejects(n.get(), ClosedError);
});

test('bad input is refused with typed errors before anything is sent', async () => {
  const [s] = await fx.sessionsN(1);
  const path = uniquePath('bad');
  assert.throws(() => new AtomicNumber(s!, '/'), InvalidArgumentError);
  assert.throws(() => new AtomicNumber(s!, 'relative'), InvalidArgumentError);
  assert.throws(() => new AtomicNumber(s!, path, { retry: { maxRetries: -1 } }), InvalidArgumentError);
  assert.throws(() => new AtomicNumber(s!, path, { retry: { baseDelayMs: 10, maxDelayMs: 5 } }), InvalidArgumentError);
  assert.throws(() => new AtomicNumber(s!, path, { retry: { maxRetry: 3 } as never }), InvalidArgumentError);
  assert.throws(() => new AtomicNumber(s!, path, { promoteToLock: { lockPath: 'x' } }), InvalidArgumentError);
  assert.throws(() => new AtomicNumber(s!, path, { promoteToLock: { lockPath: path } }), InvalidArgumentError);
  assert.throws(() => new AtomicNumber(s!, path, { promoteToLock: { lockPath: `${path}-l`, timeoutMs: -1 } }), InvalidArgumentError);
  const n = new AtomicNumber(s!, path);
  await assert.rejects(n.add(1.5), InvalidArgumentError);
  await assert.rejects(n.add(2 ** 53), InvalidArgumentError);
  await assert.rejects(n.add(2n ** 63n), InvalidArgumentError);
  await assert.rejects(n.add('1' as never), InvalidArgumentError);
  await assert.rejects(n.subtract(AtomicNumber.MIN_VALUE), InvalidArgumentError);
  await assert.rejects(n.compareAndSet(0, -(2n ** 63n) - 1n), InvalidArgumentError);
  await assert.rejects(n.forceSet(null as never), InvalidArgumentError);
  await assert.rejects(n.increment({ timeoutMs: -5 }), InvalidArgumentError);
  await assert.rejects(n.increment({ timeout: 5 } as never), InvalidArgumentError);
  assert.equal(await valueAt(path), undefined);
  await n.close();
});

test('8 sessions increment one number concurrently: the final value is the sum', async () => {
  const path = uniquePath('contended');
  const sessions = await fx.sessionsApart(8);
  const perSession = 25;
  const numbers = sessions.map((s) => new AtomicNumber(s, path, { retry: { maxRetries: 1000, baseDelayMs: 1, maxDelayMs: 50 } }));
  const seen = new Set<bigint>();
  await Promise.all(
    numbers.map(async (n) => {
      for (let i = 0; i < perSession; i++) {
        const r = await n.increment({ timeoutMs: 60_000 });
        assert.equal(r.postValue, r.preValue + 1n);
        assert.ok(!seen.has(r.postValue), `post value ${r.postValue} given to two callers`);
        seen.add(r.postValue);
      }
    }),
  );
  assert.equal(await valueAt(path), BigInt(8 * perSession));
  assert.equal(seen.size, 8 * perSession);
  for (const n of numbers) assert.equal((await n.get()).postValue, BigInt(8 * perSession));
  await Promise.all(numbers.map((n) => n.close()));
});

test('retries spent: RetriesExhaustedError and nothing applied by the call', async () => {
  const path = uniquePath('exhausted');
  const [s] = await fx.sessionsN(1);
  await fx.observer.create(path, { data: encodeLong(10n) });
  let writes = 0;
  // Another session writes between each of our reads and our write: every attempt loses.
  const busy = interleaved(s!, path, async () => {
    writes++;
    await fx.observer.setData(path, encodeLong(1000n + BigInt(writes)));
  });
  const n = new AtomicNumber(busy, path, { retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 } });
  const err = await n.add(5).then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof RetriesExhaustedError, String(err));
  assert.equal(writes, 4, 'one attempt and 3 retries');
  const { data, stat } = await fx.observer.getData(path);
  assert.equal(decodeLong(data, path), 1004n, "the other session's last value, none of ours");
  assert.equal(stat.version, 4, 'only the 4 interleaved writes happened');
  await n.close();
});

test('promotion: a number that loses every optimistic attempt succeeds under the lock, and no lock node stays', async () => {
  const base = uniquePath('promoted');
  const path = `${base}/n`;
  const lockPath = `${base}/lock`;
  const [s] = await fx.sessionsN(1);
  await fx.observer.create(base);
  await fx.observer.create(path, { data: encodeLong(0n) });
  let interfere = 2;
  // The first two reads are interleaved with another write (the optimistic attempts), then quiet.
  const busy = interleaved(s!, path, async () => {
    if (interfere-- > 0) await fx.observer.setData(path, encodeLong(100n));
  });
  const n = new AtomicNumber(busy, path, { retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 5 }, promoteToLock: { lockPath, timeoutMs: 5000 } });
  const r = await n.increment({ timeoutMs: 10_000 });
  assert.deepEqual([r.preValue, r.postValue, r.stats.optimisticTries, r.stats.promotedTries], [100n, 101n, 2, 1]);
  assert.deepEqual(await fx.children(lockPath), []);
  await n.close();
});

test('promotion under contention: 8 sessions, one optimistic attempt each, the rest under the lock; the sum holds', async () => {
  const base = uniquePath('promoted-contended');
  const path = `${base}/n`;
  const lockPath = `${base}/lock`;
  const sessions = await fx.sessionsApart(8);
  const numbers = sessions.map((s) => new AtomicNumber(s, path, { retry: { maxRetries: 0 }, promoteToLock: { lockPath } }));
  let promoted = 0;
  await Promise.all(
    numbers.map(async (n) => {
      for (let i = 0; i < 10; i++) {
        // Under the lock one attempt too: only the optimistic callers can still beat it.
        try {
          const r = await n.increment({ timeoutMs: 60_000 });
          if (r.stats.promotedTries > 0) promoted++;
        } catch (err) {
          assert.ok(err instanceof RetriesExhaustedError, String(err));
          i--; // lost under the lock to an optimistic caller: counted by nobody, try again
        }
      }
    }),
  );
  assert.equal(await valueAt(path), 80n);
  assert.ok(promoted > 0, 'some increments were promoted');
  assert.deepEqual(await fx.children(lockPath), [], 'no lock node left');
  await Promise.all(numbers.map((n) => n.close()));
});

test('promotion: a lock not granted in time is RetriesExhaustedError (cause LockTimeoutError), nothing left of ours', async () => {
  const base = uniquePath('promoted-timeout');
  const path = `${base}/n`;
  const lockPath = `${base}/lock`;
  const [s] = await fx.sessionsN(1);
  await fx.observer.create(base);
  await fx.observer.create(path, { data: encodeLong(0n) });
  const holder = await new Mutex(fx.observer, lockPath).acquire({ timeoutMs: 5000 });
  const busy = interleaved(s!, path, () => fx.observer.setData(path, encodeLong(7n)).then(() => undefined));
  const n = new AtomicNumber(busy, path, { retry: { maxRetries: 0 }, promoteToLock: { lockPath, timeoutMs: 300 } });
  const err = await n.increment({ timeoutMs: 10_000 }).then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof RetriesExhaustedError && err.cause instanceof LockTimeoutError, String(err));
  assert.equal(await valueAt(path), 7n);
  assert.deepEqual(await fx.children(lockPath), [holder.path.slice(lockPath.length + 1)], 'only the holder node');
  await holder.release();
  await n.close();
});

test('a lost reply of the write: OutcomeUnknownError, not retried (the write was applied once)', async () => {
  const path = uniquePath('lost');
  const proxy = await fx.proxy();
  const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
  const n = new AtomicNumber(s, path);
  // The node is missing: the create's reply is lost.
  const lostCreate = proxy.loseReply({ op: 'create', path });
  const e1 = await n.add(5, { timeoutMs: 10_000 }).then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  await lostCreate;
  assert.ok(e1 instanceof OutcomeUnknownError, String(e1));
  assert.equal(await valueAt(path), 5n);
  const lostSet = proxy.loseReply({ op: 'setData', path });
  const e2 = await n.add(5, { timeoutMs: 10_000 }).then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  await lostSet;
  assert.ok(e2 instanceof OutcomeUnknownError, String(e2));
  assert.equal(await valueAt(path), 10n, 'applied once, never twice');
  assert.equal((await n.increment({ timeoutMs: 10_000 })).postValue, 11n, 'the next call goes on');
  await n.close();
});

test('a black hole: the deadline holds; before the write nothing applied, during the write the outcome is unknown', async () => {
  const path = uniquePath('blackhole');
  const proxy = await fx.proxy();
  const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 10_000 });
  await fx.observer.create(path, { data: encodeLong(1n) });
  const n = new AtomicNumber(s, path);
  proxy.blackhole();
  const t0 = performance.now();
  await assert.rejects(n.increment({ timeoutMs: 500 }), (e: Error) => e.name === 'TimeoutError');
  const took = performance.now() - t0;
  assert.ok(took < 2000, `gave up after ${took} ms`);
  const controller = new AbortController();
  const reason = new Error('shutting down');
  const aborted = n.increment({ signal: controller.signal });
  controller.abort(reason);
  await assert.rejects(aborted, (e) => e === reason);
  proxy.pass();
  await waitFor(async () => (await s.exists(path)) !== null, { timeoutMs: 10_000 });
  assert.equal(await valueAt(path), 1n, 'nothing applied by calls that gave up before writing');
  // Now the hole opens between our read and our write.
  let once = true;
  const holed = interleaved(s, path, async () => {
    if (once) proxy.blackhole();
    once = false;
  });
  const m = new AtomicNumber(holed, path);
  const err = await m.increment({ timeoutMs: 500 }).then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof OutcomeUnknownError && (err.cause as Error).name === 'TimeoutError', String(err));
  proxy.pass();
  await waitFor(async () => (await s.exists(path)) !== null, { timeoutMs: 10_000 });
  const after = await valueAt(path);
  assert.ok(after === 1n || after === 2n, `applied at most once: ${after}`);
  await m.close();
  await n.close();
});

test('the session expires in the middle of a call: the call goes on with the next session, applied once', async () => {
  const path = uniquePath('expired');
  const proxy = await fx.proxy();
  const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
  await fx.observer.create(path, { data: encodeLong(41n) });
  const n = new AtomicNumber(s, path);
  const before = s.sessionId;
  const reads = s.counters.getData;
  proxy.blackhole();
  const call = n.increment({ timeoutMs: 30_000 });
  await waitFor(() => s.counters.getData > reads, { timeoutMs: 5000, message: 'the read was sent' });
  const lost = nextState(s, 'LOST', 20_000);
  await expireSession(s, proxy);
  await lost;
  const r = await call;
  assert.equal(r.postValue, 42n);
  assert.notEqual(s.sessionId, before, 'finished on a new session');
  assert.equal(await valueAt(path), 42n);
  await n.close();
});

test('a call waiting for the promotion lock: its deadline, its signal and close() end it; no lock node of ours stays', async () => {
  const base = uniquePath('promoted-abort');
  const path = `${base}/n`;
  const lockPath = `${base}/lock`;
  const [s] = await fx.sessionsN(1);
  await fx.observer.create(base);
  await fx.observer.create(path, { data: encodeLong(0n) });
  const holder = await new Mutex(fx.observer, lockPath).acquire({ timeoutMs: 5000 });
  const holderName = holder.path.slice(lockPath.length + 1);
  const busy = interleaved(s!, path, () => fx.observer.setData(path, encodeLong(3n)).then(() => undefined));
  const n = new AtomicNumber(busy, path, { retry: { maxRetries: 0 }, promoteToLock: { lockPath } });
  const queued = async (): Promise<void> => {
    await waitFor(async () => (await fx.children(lockPath)).length === 2, { timeoutMs: 5000, message: 'ours queued for the lock' });
  };
  await assert.rejects(n.increment({ timeoutMs: 700 }), (e: Error) => e.name === 'TimeoutError');
  await waitFor(async () => (await fx.children(lockPath)).join() === holderName, { timeoutMs: 5000, message: 'our lock node deleted after the timeout' });
  const controller = new AbortController();
  const reason = new Error('shutting down');
  const aborted = n.increment({ signal: controller.signal });
  await queued();
  controller.abort(reason);
  await assert.rejects(aborted, (e) => e === reason);
  await waitFor(async () => (await fx.children(lockPath)).join() === holderName, { timeoutMs: 5000, message: 'our lock node deleted after the abort' });
  // Its rejection is taken at once: close() rejects it before the assertion below awaits it.
  const closing = n.increment().then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  await queued();
  await n.close();
  assert.ok((await closing) instanceof ClosedError);
  await waitFor(async () => (await fx.children(lockPath)).join() === holderName, { timeoutMs: 5000, message: 'our lock node deleted after close' });
  assert.equal(await valueAt(path), 3n, 'nothing of ours applied');
  await holder.release();
});
