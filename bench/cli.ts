// zkr_startup: how long the `zkr` bin takes from its spawn to "waiting" (connected, about to
// queue: the --verbose line), to its command's start, and to its exit, for an uncontended
// `zkr lock PATH -- true`; beside a bare `node -e ''` for the share that is Node's own start.
// Measured, not asserted: the target is under 300 ms to "waiting" on the CI machine.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchContext } from './context.js';
import { percentile, round, type Result } from './metrics.js';

// From build/bench/cli.js up to the repository.
const ZKR = join(fileURLToPath(new URL('../..', import.meta.url)), 'dist', 'cli', 'zkr.js');

interface Timing {
  waiting: number;
  started: number;
  exited: number;
}

/** One run of `file args`: ms from spawn to the stderr line matching each mark, and to exit. */
function timeRun(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Timing> {
  const t0 = performance.now();
  const child = spawn(file, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const marks: Partial<Timing> = {};
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    if (marks.waiting === undefined && err.includes(' waiting for ')) marks.waiting = performance.now() - t0;
    if (marks.started === undefined && err.includes(' started ')) marks.started = performance.now() - t0;
  });
  child.stdout.resume();
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      const exited = performance.now() - t0;
      if (code !== 0) reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${err}`));
      else resolve({ waiting: marks.waiting ?? exited, started: marks.started ?? exited, exited });
    });
  });
}

/** `runs` uncontended `zkr lock` runs against the bench's server. */
export async function zkrStartup(ctx: BenchContext, _size: number, deadline: number): Promise<Result> {
  const runs = 20;
  const path = `/bench/zkr-${process.pid}`;
  const env = { ZK_CONNECT: ctx.connectString.split(',')[0] as string };
  const node: number[] = [];
  const timings: Timing[] = [];
  for (let i = 0; i < runs && performance.now() < deadline; i++) {
    node.push((await timeRun(process.execPath, ['-e', ''], {})).exited);
    timings.push(await timeRun(ZKR, ['lock', path, '-v', '--', 'true'], env));
  }
  const p = (values: number[], q: number): number => round(percentile(values, q), 1);
  const waiting = timings.map((t) => t.waiting);
  return {
    workload: 'zkr_startup',
    runs: timings.length,
    waiting_p50_ms: p(waiting, 50),
    waiting_p95_ms: p(waiting, 95),
    started_p50_ms: p(timings.map((t) => t.started), 50),
    exited_p50_ms: p(timings.map((t) => t.exited), 50),
    bare_node_p50_ms: p(node, 50),
  };
}
