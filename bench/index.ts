// npm run bench -- [--connect HOST:PORT] [--only w1,w2] [--runs N] [--warmup N] [--sizes a,b] [--apart] [--list]   (ZK_CONNECT works as --connect)
// --apart: every session as if in a process of its own (no in-process handoffs; lines say "apart":1).
// One JSON object per line per workload (per size for the scale_* ones) on stdout (nothing else
// there); progress on stderr.
// Without --connect it starts a local standalone ZooKeeper (default fsync) and stops it after;
// only then is Java looked for (and, as root on Debian, installed).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestingServer } from '../src/testing/index.js';
import { parseArgsOrExit } from './args.js';
import { cacheEvents, cacheLatency, cacheLoad } from './caches.js';
import { zkrStartup } from './cli.js';
import { BenchContext } from './context.js';
import { traced, withCpu } from './traced.js';
import { leaderFailover, queue, queueLarge } from './others.js';
import { atomicIncrement } from './atomic.js';
import { barrierRoundTrip, multilockCycles } from './barrier.js';
import { sharedCountNotify } from './shared.js';
import { persistentNodeRecreate } from './nodes.js';
import { groupJoinVisible } from './group.js';
import { discoveryLookup, discoveryRegisterVisible } from './discovery.js';
import { mutexContended, mutexUncontended, rawPipelined, rawSeq, rwlock, semaphore } from './locks.js';
import type { Result } from './metrics.js';
import { scaleQueue } from './scale-queue.js';
import { scaleBurst, scalePaths, scaleSessions, scaleWaiters } from './scale.js';
import { startBenchServer } from './server.js';

interface Workload {
  /** One run; `size` is one of `sizes` (0 without), `deadline` the `performance.now()` it must end by. */
  run: (ctx: BenchContext, size: number, deadline: number) => Promise<Result>;
  /** Runs only when named in --only. */
  extra?: boolean;
  /** Run once per size (these by default, --sizes instead), each in a fresh context. */
  sizes?: readonly number[];
  /** Time limit of one run (one size), ms; default 120 s. */
  limitMs?: (size: number) => number;
}

/** The workloads of WORKLOADS.md, in order, then ours; `extra` ones run only when named in --only. */
const WORKLOADS: Record<string, Workload> = {
  raw_seq: { run: rawSeq },
  raw_pipelined: { run: withCpu(rawPipelined) },
  mutex_uncontended: { run: withCpu(mutexUncontended) },
  // The same two with a no-op subscriber on every diagnostics channel (the cost of tracing).
  raw_pipelined_traced: { run: traced(rawPipelined) },
  mutex_uncontended_traced: { run: traced(mutexUncontended) },
  mutex_contended: { run: withCpu(mutexContended) },
  semaphore: { run: (ctx) => semaphore(ctx) },
  semaphore_curator_v2: { run: (ctx) => semaphore(ctx, 'curator-v2') },
  rwlock: { run: rwlock },
  leader_failover: { run: leaderFailover },
  barrier_round_trip: { run: barrierRoundTrip },
  multilock_cycle: { run: multilockCycles },
  shared_count_notify: { run: sharedCountNotify },
  persistent_node_recreate: { run: persistentNodeRecreate },
  atomic_increment: { run: atomicIncrement },
  group_join_visible: { run: groupJoinVisible },
  discovery_lookup: { run: discoveryLookup },
  discovery_register_visible: { run: discoveryRegisterVisible },
  queue: { run: (ctx) => queue(ctx) },
  queue_at_least_once: { run: (ctx) => queue(ctx, true) },
  zkr_startup: { run: zkrStartup },
  queue_200k: { run: queueLarge, extra: true, limitMs: () => 1_800_000 },
  // The caches (BENCHMARKS.md): a TreeCache loading 10 101 nodes, one change's latency, a burst's rate.
  cache_load: { run: cacheLoad },
  cache_latency: { run: cacheLatency },
  cache_events: { run: cacheEvents },
  // How cost grows (BENCHMARKS.md): one line per size.
  scale_waiters: { run: scaleWaiters, extra: true, sizes: [10, 100, 500, 1000, 2000], limitMs: (n) => 120_000 + 100 * n },
  scale_burst: { run: scaleBurst, extra: true, sizes: [10, 100, 500, 1000, 2000], limitMs: (n) => 120_000 + 100 * n },
  scale_paths: { run: scalePaths, extra: true, sizes: [1, 10, 100, 1000, 10_000], limitMs: (n) => 120_000 + 30 * n },
  scale_sessions: { run: scaleSessions, extra: true, sizes: [1, 10, 50, 200], limitMs: (n) => 120_000 + 500 * n },
  scale_queue: { run: scaleQueue, extra: true, sizes: [1000, 10_000, 100_000, 1_000_000], limitMs: (n) => 300_000 + n },
};

const { values } = parseArgsOrExit('bench', {
  options: { connect: { type: 'string' }, only: { type: 'string' }, runs: { type: 'string', default: '1' }, warmup: { type: 'string', default: '0' }, sizes: { type: 'string' }, apart: { type: 'boolean', default: false }, list: { type: 'boolean', default: false } },
});
const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
for (const name of only ?? []) {
  if (!WORKLOADS[name]) {
    console.error(`unknown workload "${name}"; known: ${Object.keys(WORKLOADS).join(', ')}`);
    process.exit(2);
  }
}
const runs = Number(values.runs);
// Warm-up runs come first and print no line: the JIT and the server warm before anything is measured.
const warmup = Number(values.warmup);
if (!Number.isInteger(warmup) || warmup < 0) {
  console.error('--warmup must be a non-negative integer');
  process.exit(2);
}
if (!Number.isInteger(runs) || runs < 1) {
  console.error('--runs must be a positive integer');
  process.exit(2);
}
// --sizes replaces the default sizes of every scale_* workload selected (e.g. 10,100 or 1_000_000).
const sizes = values.sizes?.split(',').map((s) => Number(s.trim().replaceAll('_', '')));
if (sizes && (sizes.length === 0 || sizes.some((n) => !Number.isSafeInteger(n) || n < 1))) {
  console.error('--sizes must be a comma-separated list of positive integers');
  process.exit(2);
}
const selected = Object.entries(WORKLOADS).filter(([name, w]) => (only ? only.includes(name) : !w.extra));
// --list: the names a run would take, one per line, and nothing run (bench:compare asks).
if (values.list) {
  for (const [name] of selected) console.log(name);
  process.exit(0);
}
if (sizes && !selected.some(([, w]) => w.sizes)) {
  console.error('--sizes applies to the scale_* workloads: name one in --only');
  process.exit(2);
}

let server: TestingServer | undefined;
let connectString = values.connect ?? process.env.ZK_CONNECT;
if (!connectString) {
  // From build/bench/index.js up to the repository's scripts/.
  const ensure = spawnSync(process.execPath, [fileURLToPath(new URL('../../scripts/ensure-zookeeper.mjs', import.meta.url)), '--server'], { stdio: ['ignore', 2, 2] });
  if (ensure.status !== 0) {
    console.error('bench: no local ZooKeeper can be started here; run against a server: npm run bench -- --connect HOST:PORT');
    process.exit(1);
  }
  console.error('starting a local ZooKeeper (standalone, default fsync)...');
  server = await startBenchServer();
  connectString = server.connectString;
}
const serverPid = server?.pid;
const [host = '127.0.0.1', port = '2181'] = connectString.split(',')[0]!.split('/')[0]!.split(':');

let failed = false;
try {
  for (let r = -warmup; r < runs; r++) {
    let rawSeqRate: number | undefined;
    for (const [name, w] of selected) {
      for (const size of w.sizes ? (sizes ?? w.sizes) : [0]) {
        const label = w.sizes ? `${name} ${size}` : name;
        console.error(r < 0 ? `[warmup ${r + warmup + 1}/${warmup}] ${label}...` : `[run ${r + 1}/${runs}] ${label}...`);
        const ctx = new BenchContext(connectString, name, host, Number(port), serverPid, values.apart);
        const limit = w.limitMs?.(size) ?? 120_000;
        let timer: NodeJS.Timeout | undefined;
        try {
          // A workload that does not finish is a failure to report, not a reason to hang.
          const line = await Promise.race([
            w.run(ctx, size, performance.now() + limit),
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`${label} did not finish within ${limit / 1000} s`)), limit);
            }),
          ]);
          if (name === 'raw_seq') rawSeqRate = Number(line.ops_per_s);
          else if (rawSeqRate && !w.sizes && name !== 'raw_pipelined' && name !== 'raw_pipelined_traced' && name !== 'leader_failover' && name !== 'zkr_startup' && name !== 'discovery_lookup' && !name.startsWith('cache_')) line.ratio_to_raw_seq = Number((Number(line.ops_per_s) / rawSeqRate).toFixed(2));
          if (values.apart) line.apart = 1;
          if (r >= 0) console.log(JSON.stringify(line));
        } catch (err) {
          failed = true;
          console.error(`${label} failed:`, err);
        } finally {
          clearTimeout(timer);
          await ctx.cleanup();
        }
      }
    }
  }
} finally {
  await server?.close();
}
process.exit(failed ? 1 : 0);
