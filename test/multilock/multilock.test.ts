// MultiLock against a real ZooKeeper: all of several mutexes or none, acquired in path order (two
// multi-locks given the paths in opposite orders never deadlock and exclude each other), released
// in reverse; a lost member aborts the handle's signal; nothing is left behind.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentError, LockLostError, LockTimeoutError, NotHeldError } from '../../src/errors.js';
import { MultiLock } from '../../src/multilock/index.js';
import { Mutex } from '../../src/mutex/index.js';
import { expireSession, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

const lockNodes = async (path: string): Promise<string[]> => (await fx.children(path)).filter((c) => c.includes('lock-'));

describe('MultiLock', () => {
  test('two multi-locks over the same paths in opposite orders exclude each other and never deadlock', async () => {
    const base = uniquePath('multi');
    const paths = [`${base}/a`, `${base}/b`, `${base}/c`];
    const [s1, s2] = await fx.sessionsApart(2);
    const one = new MultiLock(s1!, paths);
    const two = new MultiLock(s2!, [...paths].reverse());
    assert.deepEqual(two.paths, paths, 'acquired in path order');
    let inside = 0;
    let maxInside = 0;
    const worker = async (lock: MultiLock): Promise<void> => {
      for (let i = 0; i < 8; i++) {
        await lock.runExclusive(
          async (signal) => {
            inside++;
            maxInside = Math.max(maxInside, inside);
            await new Promise((r) => setImmediate(r));
            assert.equal(signal.aborted, false);
            inside--;
          },
          { timeoutMs: 20000 },
        );
      }
    };
    await withTimeout(Promise.all([worker(one), worker(two)]), 30000, 'both workers finished (no deadlock)');
    assert.equal(maxInside, 1);
    for (const p of paths) assert.deepEqual(await lockNodes(p), []);
    await one.close();
    await two.close();
  });

  test('all or none: a member that cannot be had releases those taken; tryAcquire gives null', async () => {
    const base = uniquePath('multi-none');
    const [a, b] = [`${base}/a`, `${base}/b`];
    const [s1, s2] = await fx.sessionsApart(2);
    const blocker = await new Mutex(s2!, b).acquire();
    const multi = new MultiLock(s1!, [b, a]);
    await assert.rejects(multi.acquire({ timeoutMs: 300 }), LockTimeoutError);
    assert.deepEqual(await lockNodes(a), [], 'the first member was released');
    assert.equal(await multi.tryAcquire(), null);
    assert.deepEqual(await lockNodes(a), []);
    const ac = new AbortController();
    const p = multi.acquire({ signal: ac.signal });
    ac.abort(new Error('no'));
    await assert.rejects(p, /no/);
    await blocker.release();
    const held = await multi.acquire({ timeoutMs: 5000 });
    assert.equal(held.fencingTokens.length, 2);
    assert.equal(held.isHeld, true);
    await held.release();
    await assert.rejects(held.release(), NotHeldError);
    assert.deepEqual(await lockNodes(a), []);
    assert.deepEqual(await lockNodes(b), []);
    assert.equal(s1!.activeWatchCount, 0);
    await multi.close();
  });

  test("a lost member lock aborts the handle's signal and emits lost", async () => {
    const base = uniquePath('multi-lost');
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
    const multi = new MultiLock(s, [`${base}/x`, `${base}/y`]);
    const lost: LockLostError[] = [];
    multi.on('lost', (_h, e) => lost.push(e));
    const held = await multi.acquire({ timeoutMs: 5000 });
    await expireSession(s, proxy);
    await withTimeout(new Promise((r) => (held.signal.aborted ? r(null) : held.signal.addEventListener('abort', r))), 5000, 'the signal aborted');
    assert.ok(held.signal.reason instanceof LockLostError);
    assert.equal(lost.length, 1);
    await assert.rejects(held.release(), NotHeldError);
    await multi.close();
  });

  test('bad input is refused', async () => {
    const [s] = await fx.sessionsApart(1);
    assert.throws(() => new MultiLock(s!, []), InvalidArgumentError);
    assert.throws(() => new MultiLock(s!, '/a' as never), InvalidArgumentError);
    assert.throws(() => new MultiLock(s!, ['/a', 'b']), InvalidArgumentError);
    assert.throws(() => new MultiLock(s!, ['/a', '/a']), InvalidArgumentError);
    assert.throws(() => new MultiLock(s!, ['/a'], { bogus: 1 } as never), InvalidArgumentError);
    await assert.rejects(new MultiLock(s!, ['/a']).acquire({ timeoutMs: -1 }), InvalidArgumentError);
  });
});
