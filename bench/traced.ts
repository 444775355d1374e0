/**
 * A workload run with a subscriber on every diagnostics channel the library publishes on, each
 * doing nothing: what tracing costs once someone listens (without one, nothing is built).
 */
import dc from 'node:diagnostics_channel';
import { CHANNELS, TRACING_CHANNELS } from '../src/index.js';
import type { BenchContext } from './context.js';
import type { Result } from './metrics.js';

const noop = (): void => undefined;
const SUB = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const;

type Run = (ctx: BenchContext) => Promise<Result>;

/**
 * `run`, with this process's CPU time per operation added (`client_cpu_us_per_op`, the whole
 * run: sessions and setup included): where tracing costs, rates on a shared machine hide it.
 */
export function withCpu(run: Run): Run {
  return async (ctx) => {
    const before = process.cpuUsage();
    const line = await run(ctx);
    const used = process.cpuUsage(before);
    return { ...line, client_cpu_us_per_op: Number(((used.user + used.system) / Number(line.ops)).toFixed(1)), client_sys_us_per_op: Number((used.system / Number(line.ops)).toFixed(1)) };
  };
}

/** `run` (see {@link withCpu}) with a no-op subscriber on every tracing and point channel. */
export function traced(run: Run): Run {
  const measured = withCpu(run);
  return async (ctx) => {
    const names = [...Object.values(TRACING_CHANNELS).flatMap((n) => SUB.map((s) => `tracing:${n}:${s}`)), ...Object.values(CHANNELS)];
    for (const name of names) dc.subscribe(name, noop);
    try {
      return { ...(await measured(ctx)), subscribed: 1 };
    } finally {
      for (const name of names) dc.unsubscribe(name, noop);
    }
  };
}
