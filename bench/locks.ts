// Workloads of ../shared/bench/WORKLOADS.md: the raw floor and the lock recipes.
import { Mutex, ReadWriteLock, Semaphore, type SemaphoreLayout, type ZkSession } from '../src/index.js';
import type { BenchContext } from './context.js';
import { since, type Result } from './metrics.js';

const hold = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One session: 1000 x (create ephemeral-sequential, delete). The floor of a lock cycle. */
export async function rawSeq(ctx: BenchContext): Promise<Result> {
  const [s] = await ctx.sessionsN(1);
  await s!.mkdirp(ctx.root);
  const n = 1000;
  const lat: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const p = await s!.create(`${ctx.root}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL' });
    await s!.delete(p);
    lat.push(since(t));
  }
  const seconds = since(start) / 1000;
  return ctx.result(n, seconds, lat, before, await ctx.counters());
}

/** One session: 2000 creates with up to 100 in flight, then 2000 deletes likewise. */
export async function rawPipelined(ctx: BenchContext): Promise<Result> {
  const [s] = await ctx.sessionsN(1);
  await s!.mkdirp(ctx.root);
  const n = 2000;
  const lat: number[] = [];
  const timed = async <T>(fn: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const r = await fn();
    lat.push(since(t));
    return r;
  };
  const inFlight = async <T>(items: readonly T[], fn: (x: T) => Promise<unknown>): Promise<void> => {
    let next = 0;
    await Promise.all(Array.from({ length: 100 }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }));
  };
  const before = await ctx.counters();
  const start = performance.now();
  const paths: string[] = [];
  await inFlight(Array.from({ length: n }, (_, i) => i), async () => paths.push(await timed(() => s!.create(`${ctx.root}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL' }))));
  await inFlight(paths, (p) => timed(() => s!.delete(p)));
  const seconds = since(start) / 1000;
  return ctx.result(2 * n, seconds, lat, before, await ctx.counters());
}

/** One session, one mutex: 500 x (acquire, release). */
export async function mutexUncontended(ctx: BenchContext): Promise<Result> {
  const [s] = await ctx.sessionsN(1);
  const m = new Mutex(s!, `${ctx.root}/lock`);
  await (await m.acquire()).release(); // creates the directory outside the timed part
  const n = 500;
  const lat: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const h = await m.acquire();
    await h.release();
    lat.push(since(t));
  }
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  await m.close();
  return ctx.result(n, seconds, lat, before, after);
}

/** 8 sessions, one mutex each on one path, until 800 acquisitions; p50/p99 are waits. */
export async function mutexContended(ctx: BenchContext): Promise<Result> {
  const sessions = await ctx.sessionsN(8);
  const path = `${ctx.root}/lock`;
  await sessions[0]!.mkdirp(path);
  const before = await ctx.counters();
  const start = performance.now();
  const { granted, waits, violations } = await contendLoop(sessions, path, 800);
  const seconds = since(start) / 1000;
  return ctx.result(granted, seconds, waits, before, await ctx.counters(), { violations });
}

/**
 * Every session loops acquire, check the in-process holder count, release, on one mutex path
 * until `total` grants in all; `waits` are request-to-grant times.
 */
export async function contendLoop(sessions: readonly ZkSession[], path: string, total: number): Promise<{ granted: number; waits: number[]; violations: number }> {
  let granted = 0;
  let holders = 0;
  let violations = 0;
  const waits: number[] = [];
  await Promise.all(
    sessions.map(async (s) => {
      const m = new Mutex(s, path);
      while (granted < total) {
        const t = performance.now();
        const h = await m.acquire();
        waits.push(since(t));
        granted++;
        if (++holders !== 1) violations++;
        await Promise.resolve();
        holders--;
        await h.release();
      }
      await m.close();
    }),
  );
  return { granted, waits, violations };
}

/**
 * 8 sessions, maxLeases 3, each looping acquire, hold 2 ms, release, until 600 leases. With
 * `layout: 'curator-v2'` (workload `semaphore_curator_v2`) every grant also passes the mutex.
 */
export async function semaphore(ctx: BenchContext, layout: SemaphoreLayout = 'window'): Promise<Result> {
  const sessions = await ctx.sessionsN(8);
  const path = `${ctx.root}/sem`;
  const total = 600;
  let granted = 0;
  let holders = 0;
  let maxConcurrent = 0;
  let violations = 0;
  const waits: number[] = [];
  await (await new Semaphore(sessions[0]!, path, { maxLeases: 3, layout }).acquire()).release();
  const before = await ctx.counters();
  const start = performance.now();
  await Promise.all(
    sessions.map(async (s) => {
      const sem = new Semaphore(s, path, { maxLeases: 3, layout });
      while (granted < total) {
        const t = performance.now();
        const h = await sem.acquire();
        waits.push(since(t));
        granted++;
        holders++;
        maxConcurrent = Math.max(maxConcurrent, holders);
        if (holders > 3) violations++;
        await hold(2);
        holders--;
        await h.release();
      }
      await sem.close();
    }),
  );
  const seconds = since(start) / 1000;
  return ctx.result(granted, seconds, waits, before, await ctx.counters(), { max_concurrent: maxConcurrent, violations });
}

/** 6 reader and 2 writer sessions on one path, 600 acquisitions in total, each holding 2 ms. */
export async function rwlock(ctx: BenchContext): Promise<Result> {
  const sessions = await ctx.sessionsN(8);
  const path = `${ctx.root}/rw`;
  await sessions[0]!.mkdirp(path);
  const total = 600;
  let granted = 0;
  let readers = 0;
  let writers = 0;
  let maxReaders = 0;
  let violations = 0;
  const waits: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  await Promise.all(
    sessions.map(async (s, i) => {
      const rw = new ReadWriteLock(s, path);
      const writer = i < 2;
      while (granted < total) {
        const t = performance.now();
        const h = await (writer ? rw.writeLock() : rw.readLock()).acquire();
        waits.push(since(t));
        granted++;
        if (writer) {
          writers++;
          if (writers > 1 || readers > 0) violations++;
        } else {
          readers++;
          maxReaders = Math.max(maxReaders, readers);
          if (writers > 0) violations++;
        }
        await hold(2);
        if (writer) writers--;
        else readers--;
        await h.release();
      }
      await rw.close();
    }),
  );
  const seconds = since(start) / 1000;
  return ctx.result(granted, seconds, waits, before, await ctx.counters(), { max_concurrent_readers: maxReaders, violations });
}
