// The persistent node's repair time (bench/anchors/CuratorNodes.java for Curator's).
import { PersistentNode } from '../src/index.js';
import type { BenchContext } from './context.js';
import { since, type Result } from './metrics.js';

/**
 * 2 sessions: one keeps an ephemeral PersistentNode, the other deletes it, 200 rounds;
 * measured: from the delete's call until the owner's node is created again (its `created`).
 * Each round waits for the owner's watch first, so that every deletion is one it is told of.
 */
export async function persistentNodeRecreate(ctx: BenchContext): Promise<Result> {
  const [ownerSession, deleterSession] = await ctx.sessionsN(2);
  const path = `${ctx.root}/node`;
  const node = new PersistentNode(ownerSession!, path, { data: 'bench' });
  node.start();
  await node.waitForInitialCreate({ timeoutMs: 30_000 });
  const rounds = 200;
  const times: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let r = 0; r < rounds; r++) {
    while (ownerSession!.activeWatchCount === 0) await new Promise((resolve) => setImmediate(resolve));
    const back = new Promise<void>((resolve) => node.once('created', () => resolve()));
    const t = performance.now();
    await deleterSession!.delete(path);
    await back;
    times.push(since(t));
  }
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  await node.close();
  return ctx.result(rounds, seconds, times, before, after);
}
