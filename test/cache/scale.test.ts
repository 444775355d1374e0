// The caches at scale, on one standalone server: a 10 000-node tree loads and stays in sync
// under a burst of changes (in both watch modes at once); a root with more than 65 535 children
// (past any 16-bit count) loads with `initialized` once and every child held; and 1 000
// reconnects with the root absent leave the heap, the session's listeners and the server's
// watches as they were. Each part reports its timings as a test diagnostic.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ChildrenCache, TreeCache, type Op, type ZkSession } from '../../src/index.js';
import { SeededRandom, waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import { assertNoWrites, EventLog, expectInSync, footprint, inBatches, serverWatchesOf } from './support.js';

const fx = new ServerFixture();
const SEED = Number(process.env.ZK_TEST_SEED ?? Date.now() % 100_000);

/** A full garbage collection (the flag set at run time: the runner passes no --expose-gc). */
const gc: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/** Heap used after two full collections, bytes. */
function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Creates `paths` (parents before children, across batches too) in transactions of `per` creates, `width` in flight. */
async function createAll(session: ZkSession, paths: readonly string[], per: number, width: number, data = ''): Promise<void> {
  const batches: Op[][] = [];
  for (let i = 0; i < paths.length; i += per) batches.push(paths.slice(i, i + per).map((path) => ({ type: 'create', path, data })));
  await inBatches(batches, width, async (ops) => void (await session.multi(ops)));
}

/** Milliseconds since `t0`, rounded. */
const since = (t0: number): number => Math.round(performance.now() - t0);

describe('caches at scale', () => {
  for (const watchMode of ['persistent', 'one-shot'] as const) {
    // First in the file: the heap is measured before the big trees exist.
    test(`1 000 reconnects with the root absent (${watchMode}): heap, the session listeners and the server watches stay flat`, async (t) => {
      await fx.observer.mkdirp('/test');
      const proxy = await fx.proxy();
      const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 10_000, spinDelayMs: 0 });
      const root = uniquePath('scale-reconnects');
      const cache = new TreeCache(s, root, { watchMode });
      // Counters, not an event log: the log itself would grow with every reconnect.
      const counts = { initialized: 0, stale: 0, resynced: 0, sessionLost: 0, error: 0, added: 0, changed: 0, removed: 0 };
      for (const name of Object.keys(counts) as (keyof typeof counts)[]) cache.on(name, () => void counts[name]++);
      const log = { count: (name: keyof typeof counts): number => counts[name] };
      await cache.start({ timeoutMs: 10_000 });
      const baseline = footprint(s);
      const reconnect = async (i: number): Promise<void> => {
        const before = log.count('resynced');
        proxy.dropAll();
        await waitFor(() => log.count('resynced') > before, { timeoutMs: 10_000, intervalMs: 1, message: `re-read after reconnect ${i}` });
      };
      // Warm-up: the first reconnects allocate what every later one reuses.
      for (let i = 0; i < 100; i++) await reconnect(i);
      const heapBefore = heapAfterGc();
      const t0 = performance.now();
      for (let i = 100; i < 550; i++) await reconnect(i);
      const heapMiddle = heapAfterGc();
      for (let i = 550; i < 1000; i++) await reconnect(i);
      const took = since(t0);
      const heapAfter = heapAfterGc();
      const grown = heapAfter - heapBefore;
      assert.equal(log.count('resynced'), 1000);
      assert.equal(log.count('stale'), 1000);
      assert.equal(cache.size, 0);
      assert.deepEqual(footprint(s), baseline, 'listeners and watches of the session flat');
      assert.deepEqual(await serverWatchesOf(fx.server, s), [root], 'one watch on the server');
      assert.equal(cache.state, 'SYNCED');
      // 900 reconnects: a leak of a few hundred bytes each would pass, one of a listener or a timer chain would not.
      assert.ok(grown < 2 * 1024 * 1024, `heap grew by ${grown} bytes over 900 reconnects`);
      assert.deepEqual(counts, { initialized: 1, stale: 1000, resynced: 1000, sessionLost: 0, error: 0, added: 0, changed: 0, removed: 0 });
      t.diagnostic(`900 reconnects in ${took} ms (${(took / 900).toFixed(1)} ms each); heap ${(heapBefore / 1e6).toFixed(1)} MB -> ${(heapMiddle / 1e6).toFixed(1)} MB (after 450) -> ${(heapAfter / 1e6).toFixed(1)} MB (${grown >= 0 ? '+' : ''}${(grown / 1e3).toFixed(0)} kB)`);
      // The root created at last: found, once.
      await fx.observer.create(root, { data: 'at last' });
      await expectInSync(cache, fx.observer, 'tree', root);
      await cache.close();
      assertNoWrites(s);
    });
  }


  test('a 10 000-node tree loads and stays in sync under a burst of 3 000 changes (persistent and one-shot caches at once)', async (t) => {
    await fx.observer.mkdirp('/test');
    const root = uniquePath('scale-10k');
    const dirs = Array.from({ length: 99 }, (_, i) => `${root}/d${String(i).padStart(2, '0')}`);
    const leaves = dirs.flatMap((d) => Array.from({ length: 100 }, (_, j) => `${d}/n${String(j).padStart(3, '0')}`));
    let t0 = performance.now();
    await fx.observer.create(root);
    await createAll(fx.observer, dirs, 99, 1);
    await createAll(fx.observer, leaves, 500, 4, 'leaf');
    const built = since(t0);
    const sessions = await fx.sessionsN(2);
    const caches = (['persistent', 'one-shot'] as const).map((watchMode, i) => {
      const cache = new TreeCache(sessions[i] as ZkSession, root, { watchMode });
      return { watchMode, cache, log: new EventLog(cache) };
    });
    t0 = performance.now();
    const loads = await Promise.all(
      caches.map(async ({ cache }) => {
        const t1 = performance.now();
        await cache.start({ timeoutMs: 30_000 });
        return since(t1);
      }),
    );
    for (const { cache } of caches) assert.equal(cache.size, 10_000);
    // The burst: sets, deletes, creations and re-creations (same data, same version), pipelined.
    const random = new SeededRandom(SEED);
    const picked = new Set<string>();
    while (picked.size < 2000) picked.add(random.pick(leaves));
    const [sets, deletes, recreates] = [[...picked].slice(0, 1200), [...picked].slice(1200, 1600), [...picked].slice(1600)];
    const creates = dirs.slice(0, 40).flatMap((d) => Array.from({ length: 15 }, (_, j) => `${d}/new${j}`));
    t0 = performance.now();
    await inBatches(
      [...sets.map((p) => () => fx.observer.setData(p, 'burst')), ...deletes.map((p) => () => fx.observer.delete(p)), ...creates.map((p) => () => fx.observer.create(p, { data: 'new' })), ...recreates.map((p) => async () => {
        await fx.observer.delete(p);
        await fx.observer.create(p, { data: 'leaf' });
      })],
      64,
      async (op) => void (await op()),
    );
    const burst = since(t0);
    t0 = performance.now();
    for (const { cache, log } of caches) {
      await expectInSync(cache, fx.observer, 'tree', root, { timeoutMs: 30_000 });
      log.check({ errors: 0 });
      assert.equal(cache.size, 10_000 - deletes.length + creates.length);
      assert.equal(log.count('removed'), deletes.length + recreates.length);
    }
    const caughtUp = since(t0);
    t.diagnostic(`built in ${built} ms; loaded in ${loads.join(' / ')} ms (persistent / one-shot); burst of ${sets.length + deletes.length + creates.length + 2 * recreates.length} writes in ${burst} ms; both equal to a fresh read ${caughtUp} ms later`);
    for (const { cache } of caches) await cache.close();
    for (const s of sessions) assertNoWrites(s as ZkSession);
  });

  test('a root with more than 65 535 children: initialized exactly once, every child held', async (t) => {
    await fx.observer.mkdirp('/test');
    const root = uniquePath('scale-wide');
    const N = 66_000;
    const names = Array.from({ length: N }, (_, i) => `c${String(i).padStart(5, '0')}`);
    let t0 = performance.now();
    await fx.observer.create(root);
    await createAll(fx.observer, names.map((n) => `${root}/${n}`), 1000, 8);
    const built = since(t0);
    // 10 s, not the files' usual 4: the heartbeat that moves the loss clock waits behind up to
    // 256 reads, and on a loaded 2-core machine the clock then trails by more than 0.8 x 4 s
    // although the connection works (it was reset once in 9 full runs; see docs/sessions.md).
    const [s] = await fx.sessionsN(1, { sessionTimeoutMs: 10_000 });
    assert.ok(s);
    const cache = new ChildrenCache(s, root, { cacheData: false, concurrency: 256 });
    const log = new EventLog(cache);
    // The session's own loss clock runs on the same event loop: a load that blocks it for
    // seconds (66 000 reads fanned out at once) suspends the session, cancels the load, and
    // the next load does it again.
    const states: string[] = [];
    s.on('state', (st) => states.push(`${st} at ${since(t0)} ms`));
    let maxLag = 0;
    let lastTick = performance.now();
    const sampler = setInterval(() => {
      const now = performance.now();
      maxLag = Math.max(maxLag, now - lastTick - 100);
      lastTick = now;
    }, 100);
    t0 = performance.now();
    try {
      await cache.start({ timeoutMs: 60_000 }).catch((err: unknown) => {
        throw new Error(`${String(err)}; ${cache.size} held; session states ${states.join(', ')}; longest event-loop stall ${Math.round(maxLag)} ms`);
      });
    } finally {
      clearInterval(sampler);
    }
    const loaded = since(t0);
    assert.deepEqual(states, [], `the session stayed connected during the load (longest event-loop stall ${Math.round(maxLag)} ms)`);
    assert.equal(cache.size, N);
    assert.equal(log.count('added'), N);
    const children = cache.children();
    assert.equal(children?.length, N);
    assert.deepEqual(children, names);
    await fx.observer.create(`${root}/c99999`);
    await fx.observer.delete(`${root}/c00000`);
    await waitFor(() => cache.get(`${root}/c99999`) !== undefined && cache.get(`${root}/c00000`) === undefined, { timeoutMs: 10_000, message: 'a change after the load' });
    assert.equal(cache.size, N);
    log.check({ errors: 0 });
    t.diagnostic(`${N} children created in ${built} ms; loaded (stats only) in ${loaded} ms; longest event-loop stall during the load ${Math.round(maxLag)} ms`);
    await cache.close();
    assertNoWrites(s);
  });

});
