// Two recipes on one path, against a real standalone ZooKeeper: for every pair whose layouts can
// be told apart (by the names of the path's children, or, for a Mutex and a Semaphore, which
// share node names, by the directory's data), a recipe that arrives where the other one is in
// use refuses with LayoutMismatchError (or LeaseMismatchError, as between semaphores), leaves
// nothing behind (no node, no directory, the directory's data as it was), and the one in use
// goes on. The pairs that share a layout by design (Mutex and LeaderSelector, as in Curator; a
// read and a write lock) exclude each other instead.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LayoutMismatchError, LeaseMismatchError, LockTimeoutError } from '../../src/errors.js';
import { DistributedQueue, LeaderLatch, LeaderSelector, Mutex, ReadWriteLock, Semaphore, type ZkSession } from '../../src/index.js';
import { ONE_HOLDER_RECORD } from '../../src/driver/layouts.js';
import { waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

type Kind = 'mutex' | 'semaphore' | 'semaphore-v2' | 'read' | 'write' | 'latch' | 'selector' | 'queue';
const KINDS: readonly Kind[] = ['mutex', 'semaphore', 'semaphore-v2', 'read', 'write', 'latch', 'selector', 'queue'];

/** Something using a path, until `leave()`. */
interface Occupant {
  leave(): Promise<void>;
}

/** Puts `kind` to use on `path`: a lock held, a leader elected, an item queued. */
async function occupy(kind: Kind | 'curator-queue', s: ZkSession, path: string): Promise<Occupant> {
  switch (kind) {
    case 'mutex':
    case 'semaphore':
    case 'semaphore-v2':
    case 'read':
    case 'write': {
      const { lock, close } = lockOf(kind, s, path);
      const h = await lock.acquire({ timeoutMs: 5000 });
      return { leave: async () => (await h.release(), await close()) };
    }
    case 'latch': {
      const latch = new LeaderLatch(s, path);
      await latch.start({ timeoutMs: 5000 });
      await latch.awaitLeadership({ timeoutMs: 5000 });
      return { leave: () => latch.close() };
    }
    case 'selector': {
      const selector = new LeaderSelector(s, path);
      let done: () => void = () => undefined;
      const term = new Promise<void>((resolve) => (done = resolve));
      const run = selector.run(() => term);
      await waitFor(() => selector.hasLeadership, { timeoutMs: 5000, message: 'the selector leads' });
      return { leave: async () => (done(), await run, await selector.close()) };
    }
    case 'queue': {
      const queue = new DistributedQueue(s, path);
      await queue.put('an item', { timeoutMs: 5000 });
      return { leave: () => queue.close() };
    }
    case 'curator-queue': {
      // Curator's DistributedQueue: persistent sequential `queue-` items right under the path.
      await fx.observer.mkdirp(path);
      await fx.observer.create(`${path}/queue-`, { mode: 'PERSISTENT_SEQUENTIAL', data: 'an item' });
      return { leave: async () => undefined };
    }
  }
}

function lockOf(kind: 'mutex' | 'semaphore' | 'semaphore-v2' | 'read' | 'write', s: ZkSession, path: string) {
  switch (kind) {
    case 'mutex': {
      const m = new Mutex(s, path);
      return { lock: m, close: () => m.close() };
    }
    case 'semaphore':
    case 'semaphore-v2': {
      const sem = new Semaphore(s, path, { maxLeases: 2, ...(kind === 'semaphore-v2' && { layout: 'curator-v2' as const }) });
      return { lock: sem, close: () => sem.close() };
    }
    case 'read':
    case 'write': {
      const rw = new ReadWriteLock(s, path);
      return { lock: kind === 'read' ? rw.readLock() : rw.writeLock(), close: () => rw.close() };
    }
  }
}

/** Tries `kind` on `path`; resolves to the error it was refused with. */
async function refusal(kind: Kind, s: ZkSession, path: string): Promise<unknown> {
  switch (kind) {
    case 'mutex':
    case 'semaphore':
    case 'semaphore-v2':
    case 'read':
    case 'write': {
      const { lock, close } = lockOf(kind, s, path);
      try {
        const h = await lock.acquire({ timeoutMs: 5000 });
        await h.release();
        return undefined;
      } catch (err) {
        return err;
      } finally {
        await close();
      }
    }
    case 'latch': {
      // Entering fails: the error is emitted and entering retried; close on the first.
      const latch = new LeaderLatch(s, path);
      const error = new Promise<unknown>((resolve) => latch.once('error', resolve));
      const started = latch.start().catch((e: unknown) => e);
      const err = await Promise.race([error, started.then(() => undefined)]);
      await latch.close();
      await started;
      return err;
    }
    case 'selector': {
      const selector = new LeaderSelector(s, path);
      const stop = new AbortController();
      let first: unknown;
      const run = selector.run(() => undefined, {
        signal: stop.signal,
        onError: (e) => {
          first ??= e;
          stop.abort();
        },
      });
      await run.catch(() => undefined);
      await selector.close();
      return first;
    }
    case 'queue': {
      const queue = new DistributedQueue(s, path);
      try {
        await queue.put('x', { timeoutMs: 5000 });
        return undefined;
      } catch (err) {
        return err;
      } finally {
        await queue.close();
      }
    }
  }
}

/** What `kind` is refused with where `occupant` is: a semaphore finding another's limit, a lease mismatch. */
function expected(occupant: Kind | 'curator-queue', kind: Kind): typeof LayoutMismatchError | typeof LeaseMismatchError {
  return occupant === 'semaphore' && kind === 'semaphore' ? LeaseMismatchError : LayoutMismatchError;
}

/** Pairs that share a layout by design: they exclude each other, nothing to refuse. */
const SHARED = new Set(['mutex/selector', 'selector/mutex', 'read/write', 'write/read']);

/** A snapshot of what is under `path`: the tree's names and each node's data. */
async function tree(path: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (p: string): Promise<void> => {
    const got = await fx.observer.getData(p).catch(() => undefined);
    if (!got) return;
    out.push(`${p} ${JSON.stringify(got.data.toString())}`);
    const { children } = await fx.observer.getChildren(p);
    for (const c of children.sort()) await walk(`${p}/${c}`);
  };
  await walk(path);
  return out;
}

describe('two recipes on one path: the one that arrives is refused, and leaves nothing behind', () => {
  const occupants: readonly (Kind | 'curator-queue')[] = [...KINDS, 'curator-queue'];
  for (const occupant of occupants) {
    for (const kind of KINDS) {
      if (kind === occupant || SHARED.has(`${occupant}/${kind}`)) continue;
      // A semaphore of the other layout, or of another maxLeases: the checks that were there.
      if (occupant === 'semaphore' && kind === 'semaphore') continue;
      test(`${kind} where a ${occupant} is in use`, async () => {
        const path = uniquePath(`${kind}-at-${occupant}`);
        const [s1, s2] = await fx.sessionsN(2);
        const used = await occupy(occupant, s1!, path);
        const before = await tree(path);
        const err = await refusal(kind, s2!, path);
        const type = expected(occupant, kind);
        assert.ok(err instanceof type, `${kind} refused with ${type.name}, got ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
        assert.equal((err as LayoutMismatchError).path, path);
        assert.deepEqual(await tree(path), before, 'nothing of the refused recipe is left, the data is as it was');
        await used.leave();
        await fx.observer.deleteRecursive(path);
      });
    }
  }
});

describe('what the directory data tells: a Mutex and a Semaphore share node names', () => {
  test("the issue's case: a Semaphore (maxLeases 2) where a Mutex is held is refused, and the Mutex still excludes", async () => {
    const path = uniquePath('mutex-then-semaphore');
    const [s1, s2, s3] = await fx.sessionsN(3);
    const mutex = new Mutex(s1!, path);
    const held = await mutex.acquire();
    assert.deepEqual((await fx.observer.getData(path)).data, ONE_HOLDER_RECORD, 'the mutex records one holder in its directory');
    const sem = new Semaphore(s2!, path, { maxLeases: 2 });
    await assert.rejects(sem.acquire({ timeoutMs: 5000 }), (e) => e instanceof LayoutMismatchError && /Mutex or a LeaderSelector/.test(e.message));
    assert.equal(await new Mutex(s3!, path).tryAcquire(), null, 'the mutex still excludes');
    await held.release();
    await Promise.all([mutex.close(), sem.close()]);
  });

  test('a Semaphore of one lease shares a Mutex path: it is one', async () => {
    const path = uniquePath('mutex-and-semaphore-1');
    const [s1, s2] = await fx.sessionsN(2);
    const mutex = new Mutex(s1!, path);
    const held = await mutex.acquire();
    const sem = new Semaphore(s2!, path, { maxLeases: 1 });
    assert.equal(await sem.tryAcquire(), null, 'one holder at a time, across both');
    await held.release();
    const lease = await sem.acquire({ timeoutMs: 5000 });
    assert.equal(await mutex.tryAcquire(), null);
    await lease.release();
    await Promise.all([mutex.close(), sem.close()]);
  });

  test('a directory made by someone else (no data): the first to list it claims it; the other is refused', async () => {
    for (const [first, second] of [
      ['mutex', 'semaphore'],
      ['semaphore', 'mutex'],
      ['selector', 'semaphore'],
    ] as const) {
      const path = uniquePath(`claimed-by-${first}`);
      await fx.observer.mkdirp(path); // as Curator or a plain mkdirp would: no data
      const [s1, s2] = await fx.sessionsN(2);
      const used = await occupy(first, s1!, path);
      const recorded = (await fx.observer.getData(path)).data;
      assert.deepEqual(recorded, first === 'semaphore' ? Buffer.from('2') : ONE_HOLDER_RECORD, `${first} claimed the directory`);
      assert.ok((await refusal(second, s2!, path)) instanceof LayoutMismatchError, `${second} refused`);
      await used.leave();
      await fx.observer.deleteRecursive(path);
    }
  });

  test("a Mutex's handoff mark in the directory's data counts as one holder, for a Semaphore too", async () => {
    const path = uniquePath('mark');
    await fx.observer.mkdirp(path);
    await fx.observer.setData(path, '_c_0b1f6a52-6f0e-4a43-9d1c-5b0e7f3c2a11-lock-0000000007');
    const [s1, s2] = await fx.sessionsN(2);
    const mutex = new Mutex(s1!, path);
    const held = await mutex.acquire();
    assert.match((await fx.observer.getData(path)).data.toString(), /-lock-0000000007$/, 'the mutex takes a mark for its own record');
    await assert.rejects(new Semaphore(s2!, path, { maxLeases: 3 }).acquire({ timeoutMs: 5000 }), LayoutMismatchError);
    await held.release();
    await mutex.close();
    const one = new Semaphore(s2!, path, { maxLeases: 1 });
    await (await one.acquire({ timeoutMs: 5000 })).release();
    await one.close();
  });
});

describe('pairs that share a layout by design exclude each other', () => {
  test("a Mutex and a LeaderSelector (Curator's LeaderSelector is a mutex on its path)", async () => {
    const path = uniquePath('mutex-and-selector');
    const [s1, s2] = await fx.sessionsN(2);
    const leader = await occupy('selector', s1!, path);
    const mutex = new Mutex(s2!, path);
    assert.equal(await mutex.tryAcquire(), null, 'the leader holds the mutex');
    await leader.leave();
    const h = await mutex.acquire({ timeoutMs: 5000 });
    await h.release();
    await mutex.close();
  });
});

describe('the refusal as each recipe reports it', () => {
  test('a LeaderLatch that cannot enter: start({ timeoutMs }) rejects with LockTimeoutError whose cause is the LayoutMismatchError', async () => {
    const path = uniquePath('latch-cause');
    const [s1, s2] = await fx.sessionsN(2);
    const used = await occupy('mutex', s1!, path);
    const latch = new LeaderLatch(s2!, path);
    latch.on('error', () => undefined);
    const err = await latch.start({ timeoutMs: 1000 }).catch((e: unknown) => e);
    assert.ok(err instanceof LockTimeoutError, String(err));
    assert.ok(err.cause instanceof LayoutMismatchError, String(err.cause));
    await latch.close();
    await used.leave();
  });

  test('a DistributedQueue refuses every call on a lock path: put, take, poll, size, peek and consume', async () => {
    const path = uniquePath('queue-calls');
    const [s1, s2] = await fx.sessionsN(2);
    const used = await occupy('write', s1!, path);
    const queue = new DistributedQueue(s2!, path);
    await assert.rejects(queue.put('x'), LayoutMismatchError);
    await assert.rejects(queue.take({ timeoutMs: 5000 }), LayoutMismatchError);
    await assert.rejects(queue.poll(), LayoutMismatchError);
    await assert.rejects(queue.size(), LayoutMismatchError);
    await assert.rejects(queue.peek(), LayoutMismatchError);
    await assert.rejects(queue.consume(() => undefined), LayoutMismatchError);
    await queue.close();
    await used.leave();
    // Once the lock is gone (its directory reaped or empty), the queue works there.
    await fx.observer.deleteRecursive(path);
    const fresh = new DistributedQueue(s2!, path);
    await fresh.put('y');
    assert.equal((await fresh.take({ timeoutMs: 5000 })).toString(), 'y');
    await fresh.close();
  });
});
