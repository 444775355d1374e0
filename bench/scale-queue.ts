// Scale workload ("how cost grows"), queue side: `scale_queue`, one JSON line per queue length.
import { DistributedQueue, NoNodeError, type ZkSession } from '../src/index.js';
import type { BenchContext } from './context.js';
import { serverHeapMb } from './memory.js';
import { clientCounters, percentile, round, since, type Result } from './metrics.js';
import { inFlight } from './scale.js';

/** Items per putAll: one transaction of about 100 KB, well under the 1 MB packet limit. */
const PUT_BATCH = 1000;
/** Items taken at every length, by this many consumers. */
const SAMPLE = 2000;
const CONSUMERS = 4;
/** Deletes per cleanup transaction (about 110 KB), and transactions in flight. */
const DELETE_BATCH = 1000;
const DELETES_IN_FLIGHT = 4;

/**
 * `scale_queue`: `n` items put with putAll (1 000 a transaction), then a sample of 2 000 taken
 * (at-most-once `take`) by 4 consumers at that length, then the rest deleted bucket by bucket
 * with multi deletes. Producer and consumers go through a counting proxy (bytes both ways).
 */
export async function scaleQueue(ctx: BenchContext, n: number): Promise<Result> {
  const proxy = await ctx.countingProxy();
  const [producerSession, ...consumerSessions] = await ctx.sessionsN(1 + CONSUMERS, proxy.connectString);
  // Direct and not counted: layout probes and the cleanup.
  const admin = await ctx.session();
  const path = `${ctx.root}/queue`;
  const items = `${path}/items/p-500`; // the default priority's directory
  // Should the run stop half-way, a recursive delete of a million items one by one takes ages.
  ctx.defer(async () => void (await dropBuckets(admin, items)));
  const bytes = (): number => proxy.bytes.toTarget + proxy.bytes.toClient;

  const producer = new DistributedQueue(producerSession!, path);
  const p0 = clientCounters([producerSession!]);
  const b0 = bytes();
  const putStart = performance.now();
  for (let i = 0; i < n; i += PUT_BATCH) await producer.putAll(Array.from({ length: Math.min(PUT_BATCH, n - i) }, (_, j) => String(i + j)));
  const putSeconds = since(putStart) / 1000;
  const p1 = clientCounters([producerSession!]);
  const b1 = bytes();
  await producer.close();

  const buckets = (await admin.getChildren(items)).children;
  const sizes = await Promise.all(buckets.map(async (b) => (await admin.exists(`${items}/${b}`))?.numChildren ?? 0));
  const fullest = Math.max(...sizes);
  // The largest listing a consumer makes: the children vector of the fullest bucket's reply.
  const names = (await admin.getChildren(`${items}/${buckets[sizes.indexOf(fullest)]}`)).children;
  const maxListingBytes = names.reduce((sum, name) => sum + 4 + Buffer.byteLength(name), 4);
  const znodes = await ctx.stat('zk_znode_count');
  const serverHeap = serverHeapMb(ctx.serverPid);

  const sample = Math.min(SAMPLE, n);
  const seen = new Uint8Array(n);
  let reserved = 0;
  let foreign = 0;
  let maxIndex = -1;
  const lat: number[] = [];
  const consumers = consumerSessions.map((s) => new DistributedQueue(s, path));
  const c0 = clientCounters(consumerSessions);
  const b2 = bytes();
  const before = await ctx.counters();
  const takeStart = performance.now();
  await Promise.all(
    consumers.map(async (q) => {
      while (reserved < sample) {
        reserved++;
        const t = performance.now();
        const index = Number((await q.take()).toString());
        lat.push(since(t));
        if (!Number.isInteger(index) || index < 0 || index >= n) foreign++;
        else {
          seen[index]! += 1;
          maxIndex = Math.max(maxIndex, index);
        }
      }
    }),
  );
  const takeSeconds = since(takeStart) / 1000;
  const after = await ctx.counters();
  const c1 = clientCounters(consumerSessions);
  const b3 = bytes();
  await Promise.all(consumers.map((q) => q.close()));

  const cleanupStart = performance.now();
  const remaining = await dropBuckets(admin, items);
  const cleanupSeconds = since(cleanupStart) / 1000;
  let distinct = 0;
  let duplicated = 0;
  for (const c of seen) {
    if (c > 0) distinct++;
    if (c > 1) duplicated += c - 1;
  }
  // Every item was either taken once or still there when the queue was dropped.
  const unaccounted = n - distinct - remaining;
  return ctx.result(sample, takeSeconds, lat, before, after, {
    items: n,
    put_seconds: round(putSeconds, 2),
    puts_per_s: round(n / putSeconds, 1),
    put_requests_per_item: round((p1.requests - p0.requests) / n, 4),
    put_bytes_per_item: Math.round((b1 - b0) / n),
    takes_per_s: round(sample / takeSeconds, 1),
    take_p50_ms: round(percentile(lat, 50)),
    take_p99_ms: round(percentile(lat, 99)),
    requests_per_take: round((c1.requests - c0.requests) / sample, 2),
    listings_per_take: round((c1.listings - c0.listings) / sample, 3),
    bytes_per_take: Math.round((b3 - b2) / sample),
    // 0: the sample was exactly the first `sample` items put (FIFO across 4 consumers).
    head_gap: maxIndex + 1 - sample,
    buckets: buckets.length,
    max_bucket_children: fullest,
    max_listing_bytes: maxListingBytes,
    ...(znodes === undefined ? {} : { server_znodes: znodes }),
    ...(serverHeap === undefined ? {} : { server_heap_mb: serverHeap }),
    cleanup_seconds: round(cleanupSeconds, 2),
    lost: Math.max(0, unaccounted),
    // More left than put and not taken, or taken twice.
    duplicated: duplicated + Math.max(0, -unaccounted),
    foreign_items: foreign,
  });
}

/** Deletes every item bucket under `dir` with multi deletes, then the buckets; resolves to the items deleted. */
async function dropBuckets(s: ZkSession, dir: string): Promise<number> {
  const children = async (p: string): Promise<string[]> =>
    (await s.getChildren(p).catch((err: unknown) => {
      if (err instanceof NoNodeError) return { children: [] as string[] };
      throw err;
    })).children;
  let deleted = 0;
  for (const b of await children(dir)) {
    const bucket = `${dir}/${b}`;
    const names = await children(bucket);
    const batches = Array.from({ length: Math.ceil(names.length / DELETE_BATCH) }, (_, i) => names.slice(i * DELETE_BATCH, (i + 1) * DELETE_BATCH));
    await inFlight(batches, DELETES_IN_FLIGHT, async (batch) => {
      await s.multi(batch.map((name) => ({ type: 'delete' as const, path: `${bucket}/${name}` })));
      deleted += batch.length;
    });
    await s.delete(bucket).catch((err: unknown) => {
      if (!(err instanceof NoNodeError)) throw err;
    });
  }
  return deleted;
}
