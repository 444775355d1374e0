// Measurement helpers: latency percentiles from a monotonic clock, and the server-side cost of
// a workload from `mntr` deltas (requests and watch notifications per operation).
import type { ZkSession } from '../src/index.js';
import { mntr } from '../src/testing/index.js';

/** One JSON line of results. */
export type Result = Record<string, string | number | readonly number[]>;

/** Server counters at one instant, or undefined when the server does not answer `mntr`. */
export interface ServerCounters {
  packets: number;
  watchFires: number;
}

const WATCH_SUMS = ['zk_sum_node_created_watch_count', 'zk_sum_node_deleted_watch_count', 'zk_sum_node_changed_watch_count', 'zk_sum_node_children_watch_count'];

/** Reads the counters `requests_per_op` and `watch_fires_per_op` are computed from. */
export async function serverCounters(host: string, port: number): Promise<ServerCounters | undefined> {
  try {
    const m = await mntr(host, port, { timeoutMs: 3000 });
    const packets = Number(m.zk_packets_received);
    if (!Number.isFinite(packets)) return undefined;
    const sums = WATCH_SUMS.map((k) => Number(m[k])).filter((v) => Number.isFinite(v));
    return { packets, watchFires: sums.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

/** What sessions sent, by their own counters (independent of other clients of the server). */
export interface ClientCounters {
  /** Requests of every kind, heartbeats included. */
  requests: number;
  /** getChildren requests. */
  listings: number;
}

/** Sums the request counters of `sessions` now. */
export function clientCounters(sessions: readonly ZkSession[]): ClientCounters {
  let requests = 0;
  let listings = 0;
  for (const s of sessions) {
    const c = s.counters;
    requests += c.create + c.delete + c.exists + c.getData + c.setData + c.getChildren + c.multi + c.removeWatches + c.sync + c.heartbeat;
    listings += c.getChildren;
  }
  return { requests, listings };
}

/** Rounds for a result line. */
export const round = (v: number, digits = 3): number => Number(v.toFixed(digits));

/** p-th percentile (0..100) of `values`, in the values' unit. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

/** Milliseconds since `start` (from `performance.now()`). */
export function since(start: number): number {
  return performance.now() - start;
}

/** Builds the result line of a workload from what it measured. */
export function result(
  workload: string,
  ops: number,
  seconds: number,
  latenciesMs: readonly number[],
  before: ServerCounters | undefined,
  after: ServerCounters | undefined,
  extra: Result = {},
): Result {
  const line: Result = {
    impl: 'zk-recipes',
    workload,
    ops,
    seconds: round(seconds),
    ops_per_s: round(ops / seconds, 1),
    p50_ms: round(percentile(latenciesMs, 50)),
    p99_ms: round(percentile(latenciesMs, 99)),
  };
  if (before && after) {
    // The two mntr calls themselves add a packet or so: negligible against hundreds of ops.
    line.requests_per_op = round((after.packets - before.packets) / ops, 2);
    line.watch_fires_per_op = round((after.watchFires - before.watchFires) / ops, 2);
  }
  return { ...line, ...extra };
}
