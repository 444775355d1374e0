// Workloads of ../shared/bench/WORKLOADS.md: leader failover and the queue.
import { DistributedQueue, LeaderLatch, type ZkSession } from '../src/index.js';
import type { BenchContext } from './context.js';
import { since, type Result } from './metrics.js';

/**
 * 5 participants on one path; 20 times the leader steps down (closes its latch and rejoins at
 * the back); measured: from the step-down until the next leader is told (`elected`), whether or
 * not the old leader's close() has its answer yet (as the anchors measure). A round
 * starts once the last round's rejoined participant has entered the election (its node
 * created), as in the anchors: otherwise the rejoin's requests fall into the next failover's
 * measured time in a client that sends them at once, and after it in one that hops threads first.
 */
export async function leaderFailover(ctx: BenchContext): Promise<Result> {
  const sessions = await ctx.sessionsN(5);
  const path = `${ctx.root}/election`;
  let leaders = 0;
  let violations = 0;
  const seen = new Set<number>();
  let onElected: (() => void) | undefined;
  let entered: Promise<void> = Promise.resolve();
  const join = (s: ZkSession, i: number): LeaderLatch => {
    const latch = new LeaderLatch(s, path, { participantId: `p${i}` });
    latch.on('elected', () => {
      if (++leaders > 1) violations++;
      seen.add(i);
      onElected?.();
    });
    latch.on('revoked', () => leaders--);
    entered = latch.start();
    return latch;
  };
  const latches = sessions.map(join);
  await Promise.race(latches.map((l) => l.awaitLeadership()));
  const rounds = 20;
  const times: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let r = 0; r < rounds; r++) {
    await entered;
    const i = latches.findIndex((l) => l.hasLeadership);
    const next = new Promise<void>((resolve) => (onElected = resolve));
    const t = performance.now();
    // Until the next leader is told, as the anchors measure: not until our close() has its
    // answer too (Curator's close and kazoo's release return without waiting for theirs).
    const closing = latches[i]!.close();
    // Marked handled while we wait for the next leader; a failure still throws below.
    closing.catch(() => undefined);
    await next;
    times.push(since(t));
    await closing;
    latches[i] = join(sessions[i]!, i);
  }
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  await Promise.all(latches.map((l) => l.close()));
  // Each failover's time too: bench:compare pools the runs of a round (20 samples make a poor p99).
  return ctx.result(rounds, seconds, times, before, after, { leaders_seen: seen.size, violations, latencies_ms: times.map((t) => Math.round(t * 1000) / 1000) });
}

/** 1 producer puts 2000 small items, 4 consumer sessions take them (at-most-once). */
export async function queue(ctx: BenchContext, atLeastOnce = false): Promise<Result> {
  const [producerSession, ...consumerSessions] = await ctx.sessionsN(5);
  const path = `${ctx.root}/queue`;
  const n = 2000;
  const counts = new Map<string, number>();
  const producer = new DistributedQueue(producerSession!, path);
  await producer.put('warm-up');
  await new DistributedQueue(producerSession!, path).take();
  const lat: number[] = [];
  const putAt = new Map<string, number>();
  let received = 0;
  let done: () => void = () => undefined;
  const allIn = new Promise<void>((r) => (done = r));
  const record = (data: Buffer): void => {
    const key = data.toString();
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const t = putAt.get(key);
    if (t !== undefined) lat.push(since(t));
    if (++received >= n) done();
  };
  const stop = new AbortController();
  const consumers = consumerSessions.map((s) => new DistributedQueue(s, path));
  const before = await ctx.counters();
  const start = performance.now();
  const running = consumers.map(async (q) => {
    if (atLeastOnce) return q.consume((data) => record(data), { signal: stop.signal });
    while (!stop.signal.aborted) {
      try {
        record(await q.take({ signal: stop.signal }));
      } catch {
        return;
      }
    }
  });
  for (let i = 0; i < n; i++) {
    const key = `item-${i}`;
    putAt.set(key, performance.now());
    await producer.put(key);
  }
  await allIn;
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  stop.abort();
  await Promise.all(running);
  await Promise.all(consumers.map((q) => q.close()));
  let lost = 0;
  let duplicated = 0;
  for (let i = 0; i < n; i++) {
    const c = counts.get(`item-${i}`) ?? 0;
    if (c === 0) lost++;
    if (c > 1) duplicated += c - 1;
  }
  return ctx.result(n, seconds, lat, before, after, { lost, duplicated });
}

/** 200 000 items put (putAll, 1000 a transaction) and drained by 4 consumers; no reply near 1 MB. */
export async function queueLarge(ctx: BenchContext): Promise<Result> {
  const [producerSession, ...consumerSessions] = await ctx.sessionsN(5);
  const path = `${ctx.root}/queue`;
  const n = 200_000;
  const producer = new DistributedQueue(producerSession!, path);
  const before = await ctx.counters();
  const start = performance.now();
  for (let i = 0; i < n; i += 1000) await producer.putAll(Array.from({ length: 1000 }, (_, j) => String(i + j)));
  const putSeconds = since(start) / 1000;
  // The largest listing a consumer will make: the fullest bucket.
  const items = `${path}/items/p-500`;
  const buckets = (await producerSession!.getChildren(items)).children;
  const sizes = await Promise.all(buckets.map(async (b) => (await producerSession!.exists(`${items}/${b}`))?.numChildren ?? 0));
  const maxBucket = Math.max(...sizes);
  const seen = new Uint8Array(n);
  await Promise.all(
    consumerSessions.map(async (s) => {
      const q = new DistributedQueue(s, path);
      for (let item = await q.poll(); item; item = await q.poll()) seen[Number(item.toString())]! += 1;
    }),
  );
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  let lost = 0;
  let duplicated = 0;
  for (const c of seen) {
    if (c === 0) lost++;
    if (c > 1) duplicated += c - 1;
  }
  return ctx.result(n, seconds, [], before, after, {
    put_seconds: Number(putSeconds.toFixed(1)),
    buckets: buckets.length,
    max_bucket_children: maxBucket,
    // A listing reply is about 4 + 4 + name length bytes per child (names are 21 bytes).
    max_listing_bytes: maxBucket * 29,
    lost,
    duplicated,
  });
}
