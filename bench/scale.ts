// Scale workloads ("how cost grows"), lock side: one JSON line per size, each size run in a
// fresh context (own root path, own sessions). Memory is the client's: heap after a full GC.
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { Mutex, ZkSession, type LockHandle } from '../src/index.js';
import { waitFor } from '../src/testing/index.js';
import type { BenchContext } from './context.js';
import { contendLoop } from './locks.js';
import { memoryAfterGc, type Memory } from './memory.js';
import { clientCounters, percentile, round, since, type ClientCounters, type Result } from './metrics.js';

const MB = 1024 * 1024;

/** Runs `fn` over `items` with at most `limit` calls in flight. */
export async function inFlight<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i] as T, i);
      }
    }),
  );
}

/**
 * Resolves once `probe` has reported the same state `polls` times in a row, `intervalMs` apart
 * (the client has stopped sending and receiving), and `done`; rejects at `deadline` (a
 * `performance.now()` time). Resolves to when the state last changed (within `intervalMs`).
 * Independent of how the driver waits (how many watches, which).
 */
async function settled(probe: () => Promise<{ state: string; done: boolean }>, deadline: number, polls = 5, intervalMs = 20): Promise<number> {
  let last = '';
  let same = 0;
  let changedAt = performance.now();
  await waitFor(
    async () => {
      const { state, done } = await probe();
      if (state === last) same++;
      else [same, last, changedAt] = [0, state, performance.now()];
      return done && same >= polls;
    },
    { timeoutMs: Math.max(0, Math.round(deadline - performance.now())), intervalMs, message: 'the waiters queued and their sessions quiet' },
  );
  return changedAt;
}

/**
 * With `BENCH_HEAP_SNAPSHOT_DIR` set, writes a heap snapshot named `<name>.heapsnapshot` there
 * (after the reading it goes with; `scripts/heap-per-item.mjs` compares two of them). Writing one
 * blocks the process for seconds at 10 000 waiters, long enough for its sessions to be lost.
 */
function snapshot(name: string): void {
  const dir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  if (dir) writeHeapSnapshot(join(dir, `${name}.heapsnapshot`));
}

const perN = (a: number, b: number, n: number, digits = 2): number => round((b - a) / n, digits);
const memFields = (base: Memory, at: Memory, n: number, what: string): Result => ({
  [`heap_per_${what}_bytes`]: Math.round((at.heap - base.heap) / n),
  [`rss_per_${what}_bytes`]: Math.round((at.rss - base.rss) / n),
  heap_mb: round(at.heap / MB, 1),
  rss_mb: round(at.rss / MB, 1),
});
const bytesOf = (b: { toTarget: number; toClient: number }): number => b.toTarget + b.toClient;

/**
 * Checks and times a chain of grants on one mutex, each released at once: one holder at a time,
 * grants in queue order (fencing tokens increase), handoff from a `release()` call to the next grant.
 */
class GrantChain {
  granted = 0;
  violations = 0;
  outOfOrder = 0;
  readonly handoffs: number[] = [];
  /** When the last holder started releasing (undefined: no handoff to time yet). */
  lastRelease: number | undefined;
  private holders = 0;

  constructor(private lastToken = -1n) {}

  readonly onGrant = async (h: LockHandle): Promise<void> => {
    if (this.lastRelease !== undefined) this.handoffs.push(since(this.lastRelease));
    this.granted++;
    if (++this.holders !== 1) this.violations++;
    if (h.fencingToken <= this.lastToken) this.outOfOrder++;
    this.lastToken = h.fencingToken;
    await Promise.resolve();
    this.holders--;
    this.lastRelease = performance.now();
    await h.release();
  };

  fields(seconds: number): Result {
    return {
      grants_per_s: round(this.granted / seconds, 1),
      handoff_p50_ms: round(percentile(this.handoffs, 50)),
      handoff_p99_ms: round(percentile(this.handoffs, 99)),
    };
  }
}

const SESSIONS = 8;

/**
 * A few waiters per mutex behind `holder`, then the handoffs: creates the directory and runs the
 * code paths a measured run takes (a waiter behind one of its own session's, too) until they are
 * compiled: compiled code, feedback and lazy state would otherwise count as the first waiters' heap.
 */
async function warmUp(holder: Mutex, mutexes: readonly Mutex[], perMutex = 4): Promise<void> {
  const h = await holder.acquire();
  const waiting = Array.from({ length: perMutex }, () => mutexes.map((m) => m.acquire().then((x) => x.release()))).flat();
  await h.release();
  await Promise.all(waiting);
}

/** 8 sessions through a counting proxy, one Mutex each on `path`. */
async function waiterSessions(ctx: BenchContext, path: string) {
  const proxy = await ctx.countingProxy();
  const sessions = await ctx.sessionsN(SESSIONS, proxy.connectString);
  return { sessions, mutexes: sessions.map((s) => new Mutex(s, path)), bytes: () => bytesOf(proxy.bytes) };
}

/**
 * `scale_waiters`: `n` waiters on one mutex, spread over 8 sessions (one Mutex each) behind a
 * holder on a 9th session; once all are queued and the client is quiet, the holder releases and
 * each grant releases at once. The 8 sessions go through a counting proxy (bytes both ways).
 */
export async function scaleWaiters(ctx: BenchContext, n: number, deadline: number): Promise<Result> {
  const path = `${ctx.root}/lock`;
  const { sessions, mutexes, bytes } = await waiterSessions(ctx, path);
  const holderSession = await ctx.session();
  const holderMutex = new Mutex(holderSession, path);
  await warmUp(holderMutex, mutexes);
  const first = await holderMutex.acquire();
  const chain = new GrantChain(first.fencingToken);
  const base = memoryAfterGc();
  snapshot(`waiters-${n}-base`);
  const c0 = clientCounters(sessions);
  const b0 = bytes();
  const t0 = performance.now();
  const waiters = Array.from({ length: n }, (_, i) => (mutexes[i % SESSIONS] as Mutex).acquire().then(chain.onGrant));
  // Queued: every node is there (holder's + n) and the waiters' sessions have gone quiet.
  let queued = 0;
  const quietAt = await settled(async () => {
    queued = ((await holderSession.exists(path))?.numChildren ?? 1) - 1;
    return { state: `${queued}/${clientCounters(sessions).requests}/${bytes()}`, done: queued === n };
  }, deadline);
  const burstSeconds = (quietAt - t0) / 1000;
  const peak = memoryAfterGc();
  snapshot(`waiters-${n}-queued`);
  const c1 = clientCounters(sessions);
  const b1 = bytes();
  // The server's counters over the drain only (the probes above are requests too).
  const m1 = await ctx.counters();
  const start = performance.now();
  chain.lastRelease = start;
  await first.release();
  await Promise.all(waiters);
  const seconds = since(start) / 1000;
  const c2 = clientCounters(sessions);
  const b2 = bytes();
  const after = await ctx.counters();
  await Promise.all([...mutexes, holderMutex].map((m) => m.close()));
  return ctx.result(chain.granted, seconds, chain.handoffs, m1, after, {
    waiters: n,
    sessions: SESSIONS,
    burst_seconds: round(burstSeconds, 2),
    ...chain.fields(seconds),
    requests_per_grant: perN(c0.requests, c2.requests, n),
    listings_per_grant: perN(c0.listings, c2.listings, n),
    bytes_per_grant: Math.round((b2 - b0) / n),
    burst_requests_per_waiter: perN(c0.requests, c1.requests, n),
    burst_bytes_per_waiter: Math.round((b1 - b0) / n),
    drain_requests_per_grant: perN(c1.requests, c2.requests, n),
    drain_listings_per_grant: perN(c1.listings, c2.listings, n),
    drain_bytes_per_grant: Math.round((b2 - b1) / n),
    ...memFields(base, peak, n, 'waiter'),
    violations: chain.violations,
    out_of_order: chain.outOfOrder,
  });
}

/**
 * `scale_burst`: `n` acquisitions of a fresh mutex path (no directory yet) started at once over
 * 8 sessions, each released as soon as granted: entering and handing off overlap (predecessors
 * leave while waiters are still reading). Same proxy and checks as `scale_waiters`.
 */
export async function scaleBurst(ctx: BenchContext, n: number): Promise<Result> {
  const path = `${ctx.root}/lock`;
  const { sessions, mutexes, bytes } = await waiterSessions(ctx, path);
  await sessions[0]!.mkdirp(ctx.root); // the lock's parent exists, the lock's directory not
  const chain = new GrantChain();
  const c0 = clientCounters(sessions);
  const b0 = bytes();
  const before = await ctx.counters();
  const start = performance.now();
  await Promise.all(Array.from({ length: n }, (_, i) => (mutexes[i % SESSIONS] as Mutex).acquire().then(chain.onGrant)));
  const seconds = since(start) / 1000;
  const c1 = clientCounters(sessions);
  const b1 = bytes();
  const after = await ctx.counters();
  await Promise.all(mutexes.map((m) => m.close()));
  return ctx.result(chain.granted, seconds, chain.handoffs, before, after, {
    waiters: n,
    sessions: SESSIONS,
    ...chain.fields(seconds),
    requests_per_grant: perN(c0.requests, c1.requests, n),
    listings_per_grant: perN(c0.listings, c1.listings, n),
    bytes_per_grant: Math.round((b1 - b0) / n),
    violations: chain.violations,
    out_of_order: chain.outOfOrder,
  });
}

/**
 * `scale_paths`: one session (through a counting proxy) acquires `n` distinct mutex paths, up to
 * 100 at a time, and holds them all at once; then releases and closes them. The directories do
 * not exist beforehand (each first acquisition creates its own, as for a fresh lock path).
 */
export async function scalePaths(ctx: BenchContext, n: number): Promise<Result> {
  const proxy = await ctx.countingProxy();
  const s = await ctx.session(proxy.connectString);
  await s.mkdirp(ctx.root);
  // Once through every step first (compiled code is heap too).
  const warm = new Mutex(s, `${ctx.root}/warm-up`);
  await (await warm.acquire()).release();
  await warm.close();
  const base = memoryAfterGc();
  const mutexes = Array.from({ length: n }, (_, i) => new Mutex(s, `${ctx.root}/l-${i}`));
  const objects = memoryAfterGc();
  const handles: LockHandle[] = [];
  const lat: number[] = [];
  const ephemerals0 = await ctx.stat('zk_ephemerals_count');
  const c0 = clientCounters([s]);
  const b0 = bytesOf(proxy.bytes);
  const m0 = await ctx.counters();
  const start = performance.now();
  await inFlight(mutexes, 100, async (m, i) => {
    const t = performance.now();
    handles[i] = await m.acquire();
    lat.push(since(t));
  });
  const seconds = since(start) / 1000;
  const m1 = await ctx.counters();
  const c1 = clientCounters([s]);
  const b1 = bytesOf(proxy.bytes);
  const ephemerals1 = await ctx.stat('zk_ephemerals_count');
  const held = memoryAfterGc();
  const notHeld = handles.filter((h) => !h.isHeld).length + (n - handles.length);
  const tokens = new Set(handles.map((h) => h.fencingToken)).size;
  const releaseStart = performance.now();
  await inFlight(handles, 100, (h) => h.release());
  const releaseSeconds = since(releaseStart) / 1000;
  const c2 = clientCounters([s]);
  await inFlight(mutexes, 100, (m) => m.close());
  // Drop our own references: what stays reachable after that is the library's.
  mutexes.length = 0;
  handles.length = 0;
  const closed = memoryAfterGc();
  const ephemeralsHeld = ephemerals0 !== undefined && ephemerals1 !== undefined ? ephemerals1 - ephemerals0 : -1;
  return ctx.result(n, seconds, lat, m0, m1, {
    paths: n,
    acquires_per_s: round(n / seconds, 1),
    releases_per_s: round(n / releaseSeconds, 1),
    requests_per_lock: perN(c0.requests, c1.requests, n),
    release_requests_per_lock: perN(c1.requests, c2.requests, n),
    bytes_per_lock: Math.round((b1 - b0) / n),
    heap_per_mutex_bytes: Math.round((objects.heap - base.heap) / n),
    ...memFields(base, held, n, 'held_lock'),
    retained_after_close_bytes_per_lock: Math.round((closed.heap - base.heap) / n),
    server_ephemerals_held: ephemeralsHeld,
    // Not held, a token twice, or (when the server reports it) a count of ephemerals that is off.
    violations: notHeld + (n - tokens) + (ephemeralsHeld >= 0 ? Math.abs(ephemeralsHeld - n) : 0),
  });
}

/**
 * `scale_sessions`: `n` sessions connect at once (time per connect and in all, heap and RSS per
 * session), then each loops on one mutex path (acquire, check, release) until 400 grants.
 */
export async function scaleSessions(ctx: BenchContext, n: number): Promise<Result> {
  await (await ZkSession.connect(ctx.connectString, { sessionTimeoutMs: 10_000 })).close(); // warm-up
  const base = memoryAfterGc();
  const connects: number[] = [];
  const connectStart = performance.now();
  const sessions = await Promise.all(
    Array.from({ length: n }, async () => {
      const t = performance.now();
      const s = await ctx.session();
      connects.push(since(t));
      return s;
    }),
  );
  const connectSeconds = since(connectStart) / 1000;
  const connected = memoryAfterGc();
  const path = `${ctx.root}/lock`;
  await sessions[0]!.mkdirp(path);
  const total = 400;
  const contended = await contend(sessions, path, total, ctx);
  return ctx.result(contended.granted, contended.seconds, contended.waits, contended.before, contended.after, {
    sessions: n,
    connect_seconds: round(connectSeconds, 2),
    connect_p50_ms: round(percentile(connects, 50)),
    connect_p99_ms: round(percentile(connects, 99)),
    ...memFields(base, connected, n, 'session'),
    requests_per_grant: perN(contended.c0.requests, contended.c1.requests, contended.granted),
    listings_per_grant: perN(contended.c0.listings, contended.c1.listings, contended.granted),
    violations: contended.violations,
  });
}

/** Every session loops acquire, check the holder count, release on one path until `total` grants. */
async function contend(sessions: readonly ZkSession[], path: string, total: number, ctx: BenchContext) {
  const c0: ClientCounters = clientCounters(sessions);
  const before = await ctx.counters();
  const start = performance.now();
  const { granted, waits, violations } = await contendLoop(sessions, path, total);
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  return { granted, seconds, waits, before, after, c0, c1: clientCounters(sessions), violations };
}
