// The cache workloads (BENCHMARKS.md; the anchors: bench/anchors/CuratorCaches.java and
// kazoo_caches.py, with the same trees, data and steps): how long a TreeCache takes to load a
// tree, how soon a change reaches it, and how many changes a second it takes in.
import { TreeCache, type CachedNode, type Op, type ZkSession } from '../src/index.js';
import type { BenchContext } from './context.js';
import { since, type Result } from './metrics.js';

/** 32 bytes of data naming `tag` (as the anchors' data()). */
export function data(tag: string): Buffer {
  return Buffer.from(`${tag}${'.'.repeat(32)}`.slice(0, 32), 'ascii');
}

const name = (i: number): string => `n${String(i).padStart(3, '0')}`;

/** CPU time of this process (user + system) in ms since `from` (a `process.cpuUsage()`). */
function cpuMs(from: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
}

/** `root` (with its parents) and `fanout` children, each with `fanout2` children; a transaction per 100 nodes or so. The node count. */
async function buildTree(s: ZkSession, root: string, fanout: number, fanout2: number): Promise<number> {
  await s.mkdirp(root, { data: data('root') });
  let nodes = 1;
  let ops: Op[] = [];
  for (let i = 0; i < fanout; i++) {
    const child = `${root}/${name(i)}`;
    ops.push({ type: 'create', path: child, data: data(child) });
    for (let j = 0; j < fanout2; j++) ops.push({ type: 'create', path: `${child}/${name(j)}`, data: data(child + j) });
    if (ops.length >= 100 || i === fanout - 1) {
      await s.multi(ops);
      nodes += ops.length;
      ops = [];
    }
  }
  return nodes;
}

/** Removes what buildTree made below `root` (leaves and their parent in one transaction). */
async function dropTree(s: ZkSession, root: string): Promise<void> {
  const children = (await s.getChildren(root)).children;
  let ops: Op[] = [];
  for (let i = 0; i < children.length; i++) {
    const child = `${root}/${children[i]}`;
    for (const leaf of (await s.getChildren(child)).children) ops.push({ type: 'delete', path: `${child}/${leaf}` });
    ops.push({ type: 'delete', path: child });
    if (ops.length >= 100 || i === children.length - 1) {
      await s.multi(ops);
      ops = [];
    }
  }
}

/** cache_load: 3 times a new TreeCache on a 10 101-node tree (100 x 100, 32 bytes each), start() to initialized. */
export async function cacheLoad(ctx: BenchContext): Promise<Result> {
  const [s] = (await ctx.sessionsN(1)) as [ZkSession];
  const tree = `${ctx.root}/tree`;
  const nodes = await buildTree(s, tree, 100, 100);
  ctx.defer(() => dropTree(s, tree));
  const loads = 3;
  const times: number[] = [];
  let missing = 0;
  let seconds = 0;
  let packets = 0;
  let fires = 0;
  let counted = true;
  let cpu = 0;
  for (let l = 0; l < loads; l++) {
    const cache = new TreeCache(s, tree);
    const before = await ctx.counters();
    const c = process.cpuUsage();
    const t = performance.now();
    await cache.start();
    const ms = since(t);
    cpu += cpuMs(c);
    const after = await ctx.counters();
    times.push(ms);
    seconds += ms / 1000;
    if (before && after) {
      packets += after.packets - before.packets;
      fires += after.watchFires - before.watchFires;
    } else counted = false;
    missing += Math.max(0, nodes - cache.size);
    await cache.close();
  }
  const line = ctx.result(nodes * loads, seconds, times, undefined, undefined, { nodes, lost: missing, client_cpu_ms_per_1k: Number(((cpu / (nodes * loads)) * 1000).toFixed(1)) });
  if (counted) {
    line.requests_per_op = Number((packets / (nodes * loads)).toFixed(2));
    line.watch_fires_per_op = Number((fires / (nodes * loads)).toFixed(2));
  }
  return line;
}

/** A started TreeCache on `tree` whose `changed` events go to `onChange` with their arrival time. */
async function started(s: ZkSession, tree: string, onChange: (now: number, node: CachedNode) => void): Promise<TreeCache> {
  const cache = new TreeCache(s, tree);
  cache.on('changed', (node) => onChange(performance.now(), node));
  await cache.start({ timeoutMs: 30_000 });
  return cache;
}

/**
 * cache_latency: a TreeCache on 100 children (32 bytes each); another session sets the
 * children's data in turn, 500 times, each after the last change arrived; measured: from the
 * setData call to the cache's `changed` event.
 */
export async function cacheLatency(ctx: BenchContext): Promise<Result> {
  const [reader, writer] = (await ctx.sessionsN(2)) as [ZkSession, ZkSession];
  const tree = `${ctx.root}/tree`;
  await buildTree(writer, tree, 100, 0);
  let expected = '';
  let arrived: ((at: number) => void) | undefined;
  let duplicated = 0;
  const seen = new Set<string>();
  const cache = await started(reader, tree, (now, node) => {
    const key = `${node.path} ${node.data?.toString('ascii')}`;
    if (seen.has(key)) duplicated++;
    seen.add(key);
    if (key === expected) arrived?.(now);
  });
  try {
    const n = 500;
    let lost = 0;
    const lat: number[] = [];
    const before = await ctx.counters();
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const path = `${tree}/${name(i % 100)}`;
      const value = data(`v${i}`);
      let timer: NodeJS.Timeout | undefined;
      const at = new Promise<number | undefined>((resolve) => {
        arrived = resolve;
        timer = setTimeout(() => resolve(undefined), 5000);
      });
      expected = `${path} ${value.toString('ascii')}`;
      const t = performance.now();
      await writer.setData(path, value);
      const when = await at;
      clearTimeout(timer);
      if (when === undefined) lost++;
      else lat.push(when - t);
    }
    const seconds = since(start) / 1000;
    const after = await ctx.counters();
    return ctx.result(n, seconds, lat, before, after, { lost, duplicated });
  } finally {
    await cache.close();
  }
}

/**
 * cache_events: a TreeCache on 1000 children; 5 bursts in which another session sets all 1000
 * with up to 100 setData in flight; measured: `changed` events per second, from the first
 * setData of a burst to the last event of it (latencies: each set to its event).
 */
export async function cacheEvents(ctx: BenchContext): Promise<Result> {
  const [reader, writer] = (await ctx.sessionsN(2)) as [ZkSession, ZkSession];
  const tree = `${ctx.root}/tree`;
  const n = 1000;
  await buildTree(writer, tree, n, 0);
  const prefix = tree.length + 2; // "/n"
  let tag = '';
  let received = 0;
  let duplicated = 0;
  const got = new Uint8Array(n);
  const eventAt = new Float64Array(n);
  const sentAt = new Float64Array(n);
  let allIn: (() => void) | undefined;
  const cache = await started(reader, tree, (now, node) => {
    if (!node.data?.toString('ascii').startsWith(tag)) return;
    const i = Number(node.path.slice(prefix));
    if (got[i]) {
      duplicated++;
      return;
    }
    got[i] = 1;
    eventAt[i] = now;
    if (++received === n) allIn?.();
  });
  try {
    const bursts = 5;
    let lost = 0;
    let seconds = 0;
    const lat: number[] = [];
    let cpu = 0;
    const before = await ctx.counters();
    for (let b = 0; b < bursts; b++) {
      got.fill(0);
      received = 0;
      tag = `b${b}-`;
      let timer: NodeJS.Timeout | undefined;
      const complete = new Promise<boolean>((resolve) => {
        allIn = () => resolve(true);
        timer = setTimeout(() => resolve(false), 10_000);
      });
      const c = process.cpuUsage();
      const start = performance.now();
      let next = 0;
      const writes = Promise.all(
        Array.from({ length: 100 }, async () => {
          while (next < n) {
            const i = next++;
            sentAt[i] = performance.now();
            await writer.setData(`${tree}/${name(i)}`, data(`${tag}${i}`));
          }
        }),
      );
      const all = await complete;
      clearTimeout(timer);
      await writes;
      cpu += cpuMs(c);
      let last = start;
      for (let i = 0; i < n; i++) {
        if (!got[i]) {
          lost++;
          continue;
        }
        last = Math.max(last, eventAt[i] as number);
        lat.push((eventAt[i] as number) - (sentAt[i] as number));
      }
      seconds += ((all ? last : performance.now()) - start) / 1000;
    }
    const after = await ctx.counters();
    return ctx.result(n * bursts, seconds, lat, before, after, { lost, duplicated, client_cpu_ms_per_1k: Number(((cpu / (n * bursts)) * 1000).toFixed(1)) });
  } finally {
    await cache.close();
  }
}
