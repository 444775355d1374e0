#!/usr/bin/env node
// npm run bench:compare -- [--rounds R] [--warmup N] [--no-apart] [--no-fsync] [--pin] [--interleave workload|harness] [--only w1,w2] [--out FILE]
// zk-recipes' bench beside its anchors (bench/anchors/: Apache Curator 5.4 and kazoo 2.8) on ONE
// local standalone ZooKeeper (default fsync, 1 GB heap, as bench/index.ts starts its own), in R
// interleaved rounds (default 3) of Curator, zk-recipes, zk-recipes `--apart` (every session as
// if in a process of its own) and kazoo, so a machine that slows down mid-run slows them all.
// Within a round each workload is run by every harness in turn (`--interleave workload`, the
// default: a harness process per workload, so the four figures of a workload are minutes apart
// at most, not a whole round); `--interleave harness` runs each harness's workloads in one process.
// The order rotates from round to round and workload to workload (no implementation always
// runs first, on a colder server, or last), and every harness runs each workload unmeasured in
// its own process before it measures (the JIT, the interpreter, the server's caches warm
// first): `--warmup N` times, or by default as many runs as make about 4 000 of its operations
// (WARM_OPS; at least 3 runs, see warmupRuns), since a V8 or JVM JIT warms by operations, not
// by runs: 3 runs are 60 leader failovers, far from warm, and 1 500 lock cycles, not yet; 40
// runs (800 failovers) still leave the tail of a failover to the JIT (the curves:
// BENCHMARKS.md). With `--interleave harness` the default is 3 runs of everything.
// A leader failover round measures 50 runs (1 000 failovers) and pools their samples
// (RUNS_PER_ROUND): one run's p99 is its slowest of 20.
// Every JSON line goes to FILE (default
// bench-results/compare-<time>.jsonl, with its "round"), the harnesses' stderr beside it (.log),
// and stdout gets a markdown table of the medians. `--only` passes through (each anchor skips
// the names it lacks). An anchor that is not installed is skipped, saying what installs it.
// `--no-fsync` (a diagnostic, not the workloads' server) runs the server with forceSync=no: the
// disk's time, which varies from minute to minute on a shared VM, leaves every chain of writes,
// and what is left is the clients' and the server's CPU.
// `--pin` (Linux, 2 cores or more) puts every thread of the server on core 0 and every harness on
// core 1 (taskset), as production gives ZooKeeper machines of its own: on two shared cores a
// woken thread of either side can wait milliseconds behind the other's (BENCHMARKS.md, "A
// failover's client steps in finer marks"), so the tails compare the kernel's placement of
// threads more than the clients.
// Needs `npm run build:test` first (the npm script runs it).
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { mntr } from '../build/src/testing/index.js';
import { startBenchServer } from '../build/bench/server.js';
import { curatorHarness, kazooHarness, oursHarness } from './bench-harnesses.mjs';
import { median, table } from './bench-table.mjs';
import { percentile } from '../build/bench/metrics.js';
import { parseArgsOrExit } from '../build/bench/args.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgsOrExit('bench:compare', { options: { rounds: { type: 'string', default: '3' }, warmup: { type: 'string' }, 'no-apart': { type: 'boolean', default: false }, 'no-fsync': { type: 'boolean', default: false }, pin: { type: 'boolean', default: false }, interleave: { type: 'string', default: 'workload' }, only: { type: 'string' }, out: { type: 'string' } } }, 'usage: npm run bench:compare -- [--rounds R] [--warmup N] [--no-apart] [--no-fsync] [--pin] [--interleave workload|harness] [--only w1,w2] [--out FILE]');
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error('bench:compare: --rounds must be a positive integer');
  process.exit(2);
}
const warmup = values.warmup === undefined ? undefined : Number(values.warmup);
if (warmup !== undefined && (!Number.isInteger(warmup) || warmup < 0)) {
  console.error('bench:compare: --warmup must be a non-negative integer');
  process.exit(2);
}

/** Operations a harness runs unmeasured before it measures a workload (by default). */
const WARM_OPS = 4000;
/** Operations of one run of each workload, as WORKLOADS.md defines them (others: 3 warm-up runs). */
const OPS_PER_RUN = { raw_seq: 1000, mutex_uncontended: 500, mutex_contended: 800, semaphore: 600, rwlock: 600, leader_failover: 20, queue: 2000, queue_at_least_once: 2000 };

/**
 * Measured runs per round of a workload whose run is too short for its figures: a leader
 * failover run is 20 failovers, whose p99 is the slowest of them. The round's figures are of its
 * runs pooled (each harness reports each failover's time as latencies_ms): 1 000 failovers, so
 * that a p99 is the 10th slowest, not the 2nd as of 200 (which moved by 2x from round to round).
 */
const RUNS_PER_ROUND = { leader_failover: 50 };

/**
 * One line per workload of a harness's lines of one round: several runs of a workload (see
 * RUNS_PER_ROUND) pooled, their latencies together (p50, p99), operations and time summed,
 * requests per operation the median, violations summed.
 */
function pooled(lines) {
  const byWorkload = new Map();
  for (const l of lines) byWorkload.set(l.workload, [...(byWorkload.get(l.workload) ?? []), l]);
  return [...byWorkload.values()].map((runs) => {
    if (runs.length === 1) return runs[0];
    const ok = runs.filter((l) => !l.deadlocked);
    const lat = ok.flatMap((l) => l.latencies_ms ?? []);
    const sum = (k) => runs.reduce((n, l) => n + (l[k] ?? 0), 0);
    const mid = (k) => median(ok.map((l) => l[k]).filter((v) => v !== undefined));
    const { latencies_ms: _, ...first } = runs[0];
    const line = { ...first, runs_pooled: runs.length, ops: sum('ops'), seconds: Number(sum('seconds').toFixed(3)) };
    line.ops_per_s = Number((line.ops / line.seconds).toFixed(1));
    line.p50_ms = lat.length ? percentile(lat, 50) : mid('p50_ms');
    line.p99_ms = lat.length ? percentile(lat, 99) : mid('p99_ms');
    for (const k of ['requests_per_op', 'watch_fires_per_op']) if (mid(k) !== undefined) line[k] = mid(k);
    for (const k of ['violations', 'lost', 'duplicated', 'deadlocked']) if (runs.some((l) => l[k] !== undefined)) line[k] = sum(k);
    if (runs.some((l) => l.leaders_seen !== undefined)) line.leaders_seen = Math.max(...runs.map((l) => l.leaders_seen ?? 0));
    appendFileSync(out, `${JSON.stringify(line)}\n`);
    return line;
  });
}

/** What the table's note says of the warm-ups. */
function warmupNote() {
  if (warmup !== undefined || !workloads) return `${warmupRuns(undefined)} warm-up run(s)`;
  const pooledNote = workloads.filter((w) => RUNS_PER_ROUND[w]).map((w) => `; ${w}: ${RUNS_PER_ROUND[w]} measured runs a round, their samples pooled`).join('');
  return `warm-up runs of about ${WARM_OPS} operations (${workloads.map((w) => `${w} ${warmupRuns(w)}`).join(', ')}${pooledNote})`;
}

/** Warm-up runs before measuring `workload` (undefined: a process of several workloads). */
function warmupRuns(workload) {
  if (warmup !== undefined) return warmup;
  const ops = workload && OPS_PER_RUN[workload];
  return ops ? Math.max(3, Math.ceil(WARM_OPS / ops)) : 3;
}
if (values.interleave !== 'workload' && values.interleave !== 'harness') {
  console.error('bench:compare: --interleave must be workload or harness');
  process.exit(2);
}
const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
const out = values.out ?? join(root, 'bench-results', `compare-${stamp}.jsonl`);
const logFile = out.replace(/\.jsonl$/, '') + '.log';
mkdirSync(dirname(out), { recursive: true });

const impls = [curatorHarness(), oursHarness(), values['no-apart'] ? null : oursHarness(true), kazooHarness()].filter(Boolean);
if (impls.length === 1) console.error('bench:compare: no anchor can run here; zk-recipes runs alone');

/** Runs one harness against `connect`; resolves with its JSON lines and exit code. */
function runHarness(impl, round, connect, only) {
  return new Promise((resolve) => {
    const runs = workloads ? RUNS_PER_ROUND[only] : undefined;
    const args = [...impl.args, '--connect', connect, '--warmup', String(warmupRuns(workloads ? only : undefined)), ...(runs ? ['--runs', String(runs)] : []), ...(only ? ['--only', only] : [])];
    const [cmd, argv] = values.pin ? ['taskset', ['-c', '1', impl.cmd, ...args]] : [impl.cmd, args];
    const child = spawn(cmd, argv, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = [];
    createInterface({ input: child.stdout }).on('line', (text) => {
      try {
        // The apart runs print impl "zk-recipes" with apart: 1; the table keeps them apart.
        const line = { ...JSON.parse(text), impl: impl.name, round };
        lines.push(line);
        appendFileSync(out, `${JSON.stringify(line)}\n`);
      } catch {
        appendFileSync(logFile, `[${impl.name} stdout] ${text}\n`);
      }
    });
    createInterface({ input: child.stderr }).on('line', (text) => {
      appendFileSync(logFile, `[${impl.name}] ${text}\n`);
      const progress = /^\[(?:\w+ )?(run|warmup) \d+\/\d+\] (\S+)\.\.\.$/.exec(text);
      if (progress) console.error(`round ${round}/${rounds} ${impl.name}: ${progress[2]}${progress[1] === 'warmup' ? ' (warm-up)' : ''}`);
      else if (/failed|skipped|deadlock|unknown/i.test(text)) console.error(`  ${text.startsWith(impl.name) ? text : `${impl.name}: ${text}`}`);
    });
    child.on('error', (err) => resolve({ code: -1, error: err, lines }));
    child.on('close', (code, signal) => resolve({ code: code ?? signal, lines }));
  });
}

// Per workload: the names --only gives, or our bench's default list (the anchors skip names they lack).
const workloads = values.interleave === 'harness' ? undefined : (values.only?.split(',').map((w) => w.trim()).filter(Boolean) ?? listWorkloads());

function listWorkloads() {
  const ours = oursHarness();
  const list = spawnSync(ours.cmd, [...ours.args, '--list'], { cwd: root, encoding: 'utf8' });
  if (list.status !== 0) {
    console.error(`bench:compare: ${ours.label} --list failed: ${list.stderr}`);
    process.exit(2);
  }
  return list.stdout.split('\n').filter(Boolean);
}

const ensure = spawnSync(process.execPath, [join(root, 'scripts', 'ensure-zookeeper.mjs'), '--server'], { stdio: ['ignore', 2, 2] });
if (ensure.status !== 0) process.exit(1);
const forceSync = values['no-fsync'] ? 'no' : 'yes';
console.error(`starting a local ZooKeeper (standalone, forceSync=${forceSync}, default JIT and collector, 1 GB heap)...`);
const server = await startBenchServer(forceSync);
if (values.pin) {
  // -a: every thread the JVM has now; those it starts later inherit the mask.
  const pinned = availableParallelism() >= 2 && server.pid !== undefined ? spawnSync('taskset', ['-a', '-p', '-c', '0', String(server.pid)], { encoding: 'utf8' }) : undefined;
  if (pinned?.status !== 0) {
    console.error(`bench:compare: --pin needs taskset and two cores (${pinned ? pinned.stderr.trim() || pinned.error?.message : `${availableParallelism()} core(s)`})`);
    await server.close();
    process.exit(2);
  }
}
process.once('SIGINT', () => void server.close().finally(() => process.exit(130)));
const results = [];
let zkVersion = '?';
let failures = 0;
try {
  const [host, port] = server.connectString.split(':');
  zkVersion = (await mntr(host, Number(port))).zk_version?.split(/[-,\s]/)[0] ?? '?';
  // One step: every harness on `only` (all the selected workloads, or one), in rotated order.
  const step = async (r, k, only) => {
    const order = impls.map((_, i) => impls[(i + k) % impls.length]);
    console.error(`round ${r}/${rounds}${only && workloads ? ` ${only}` : ''}: ${order.map((i) => i.name).join(', ')}`);
    for (const impl of order) {
      const run = await runHarness(impl, r, server.connectString, only);
      results.push(...pooled(run.lines));
      if (run.code === 2) throw new Error(`${impl.name} refused its arguments (see ${logFile})`);
      if (run.code !== 0) {
        failures++;
        console.error(`  ${impl.name} exited with ${run.error?.message ?? run.code} in round ${r} (see ${logFile})`);
      }
    }
  };
  for (let r = 1; r <= rounds; r++) {
    if (!workloads) await step(r, r - 1, values.only);
    else for (const [w, name] of workloads.entries()) await step(r, r - 1 + w, name);
  }
} catch (err) {
  console.error(`bench:compare: ${err.message}`);
  await server.close();
  process.exit(2);
}
await server.close();
// zk-recipes' two modes first in the table, whatever the order of the rounds.
const named = impls.map((i) => i.name);
console.log(table(results, [...named.filter((n) => n.startsWith('zk-recipes')), ...named.filter((n) => !n.startsWith('zk-recipes'))]));
console.log(`\n${rounds} round(s) in rotating order${workloads ? ', each workload run by every harness in turn' : ''}, ${warmupNote()} per harness before each measured one, medians (min–max of the rounds), ${new Date().toISOString().slice(0, 10)}: ZooKeeper ${zkVersion} standalone on loopback (forceSync=${forceSync}, the JVM's default JIT and collector, 1 GB heap${values.pin ? '; its threads on core 0, every harness on core 1' : ''}), ` +
  `${impls.map((i) => i.label).join(', ')}, Node ${process.version}. Lines: ${out}`);
process.exitCode = failures > 0 ? 1 : 0;
