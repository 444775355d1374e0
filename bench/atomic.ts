// zk-recipes' own workload beside WORKLOADS.md's: contended increments of one atomic number
// (bench/anchors/CuratorAtomic.java runs Curator's DistributedAtomicLong the same way).
import { AtomicNumber, RetriesExhaustedError } from '../src/index.js';
import type { BenchContext } from './context.js';
import { round, since, type Result } from './metrics.js';

/**
 * 8 sessions each loop `increment()` on one AtomicNumber until 800 increments in all were
 * acknowledged (optimistic only: up to 29 retries, backoff from 1 ms doubling to at most 50 ms,
 * as the Curator line's BoundedExponentialBackoffRetry(1, 50, 29)); measured: one increment
 * call, lost races included. `tries_per_op`: attempts per acknowledged increment; `exhausted`:
 * calls that lost every attempt (not counted as ops).
 */
export async function atomicIncrement(ctx: BenchContext): Promise<Result> {
  const sessions = await ctx.sessionsN(8);
  const path = `${ctx.root}/atomic`;
  const total = 800;
  await new AtomicNumber(sessions[0]!, path).initialize(0);
  let acked = 0;
  let tries = 0;
  let exhausted = 0;
  const times: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  await Promise.all(
    sessions.map(async (s) => {
      const n = new AtomicNumber(s, path, { retry: { maxRetries: 29, baseDelayMs: 1, maxDelayMs: 50 } });
      while (acked < total) {
        const t = performance.now();
        try {
          const r = await n.increment({ timeoutMs: 30_000 });
          times.push(since(t));
          tries += r.stats.optimisticTries;
          acked++;
        } catch (err) {
          if (!(err instanceof RetriesExhaustedError)) throw err;
          exhausted++;
        }
      }
      await n.close();
    }),
  );
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  const final = (await new AtomicNumber(sessions[0]!, path).get()).postValue;
  if (final !== BigInt(acked)) throw new Error(`atomic_increment: the number is ${final} after ${acked} acknowledged increments`);
  return ctx.result(acked, seconds, times, before, after, { tries_per_op: round(tries / acked, 2), exhausted });
}
