// The shared count's notification latency (not in ../shared/bench/WORKLOADS.md: ours, with
// Curator's SharedCount beside it in bench/anchors/CuratorShared.java).
import { SharedCount } from '../src/index.js';
import type { BenchContext } from './context.js';
import { since, type Result } from './metrics.js';

/**
 * 2 sessions, a SharedCount each on one path; 200 rounds: the first sets the count to the
 * round's number; measured: from set() until the second's `changed` event carries it (the
 * write, the watch firing, the re-read that arms the next watch).
 */
export async function sharedCountNotify(ctx: BenchContext): Promise<Result> {
  const [writerSession, readerSession] = await ctx.sessionsN(2);
  const path = `${ctx.root}/shared-count`;
  const writer = new SharedCount(writerSession!, path, 0);
  const reader = new SharedCount(readerSession!, path, 0);
  await writer.start({ timeoutMs: 30_000 });
  await reader.start({ timeoutMs: 30_000 });
  let waiting: { value: number; resolve: () => void } | undefined;
  reader.on('changed', (v) => {
    if (waiting && v.value === waiting.value) waiting.resolve();
  });
  const rounds = 200;
  const times: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let r = 1; r <= rounds; r++) {
    const seen = new Promise<void>((resolve) => (waiting = { value: r, resolve }));
    const t = performance.now();
    await writer.set(r, { timeoutMs: 30_000 });
    await seen;
    times.push(since(t));
  }
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  await Promise.all([writer.close(), reader.close()]);
  return ctx.result(rounds, seconds, times, before, after);
}
