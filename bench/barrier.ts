// Workloads of ../shared/bench/WORKLOADS.md: the barrier round trip and multi-lock cycles.
import { Barrier, MultiLock } from '../src/index.js';
import type { BenchContext } from './context.js';
import { since, type Result } from './metrics.js';

/**
 * 2 sessions: one sets a barrier, the other waits at it, the first removes it; 200 rounds;
 * measured: from set() until the waiter is released after remove() (set, watch, remove, notify).
 */
export async function barrierRoundTrip(ctx: BenchContext): Promise<Result> {
  const [setterSession, waiterSession] = await ctx.sessionsN(2);
  const path = `${ctx.root}/barrier`;
  const setter = new Barrier(setterSession!, path);
  const waiter = new Barrier(waiterSession!, path);
  const rounds = 200;
  const times: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    await setter.set();
    const released = waiter.wait({ timeoutMs: 30_000 });
    // The waiter's read must have seen the node (else it returns at once): wait for its watch.
    while (waiterSession!.activeWatchCount === 0) await new Promise((resolve) => setImmediate(resolve));
    await setter.remove();
    await released;
    times.push(since(t));
  }
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  await Promise.all([setter.close(), waiter.close()]);
  return ctx.result(rounds, seconds, times, before, after);
}

/** 1 session, a multi-lock over 3 paths; 200 acquire/release cycles; measured: one cycle. */
export async function multilockCycles(ctx: BenchContext): Promise<Result> {
  const [session] = await ctx.sessionsN(1);
  const lock = new MultiLock(session!, [0, 1, 2].map((i) => `${ctx.root}/multi-${i}`), { reapParentAfterMs: 60_000 });
  const rounds = 200;
  const times: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    const held = await lock.acquire({ timeoutMs: 30_000 });
    await held.release();
    times.push(since(t));
  }
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  await lock.close();
  return ctx.result(rounds, seconds, times, before, after);
}
