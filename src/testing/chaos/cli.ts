/**
 * `npm run chaos -- --seconds N --seed S`: runs the chaos suite, prints one summary line and
 * writes the report (JSON and HTML). Exits 1 when a violation was found.
 *
 * @internal
 * @module
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkHistory } from './checker/index.js';
import type { ChaosHistory, FaultKind, WorkloadKind } from './history.js';
import { DEFAULT_FAULT_WEIGHTS } from './nemesis.js';
import { CI_CLIENT_COUNTS, CI_SEED, DEFAULT_CLIENT_COUNTS, OPT_IN_CLIENT_COUNTS } from './plan.js';
import { writeReport, summaryLine } from './report.js';
import { runChaos } from './runner.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    ci: { type: 'boolean', default: false },
    recheck: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    'session-timeout': { type: 'string', default: '4000' },
    workloads: { type: 'string' },
    clients: { type: 'string' },
    faults: { type: 'string' },
    quiet: { type: 'boolean', default: false },
    tls: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

// No top-level await: this file is built as CommonJS too.
async function main(): Promise<void> {
  if (values.help) {
    console.log(`usage: npm run chaos -- [--seconds 60] [--seed N] [--out DIR] [--session-timeout 4000]
       [--workloads mutex,semaphore,rwlock,latch,selector,queue-at-most-once,queue-at-least-once,cache,zkr,double-barrier,shared-count,persistent-node,atomic,group,multilock,discovery]
       [--clients N (per workload)] [--faults kind=weight,...] [--quiet]
       [--tls]: the clients' sessions over TLS (generated certificates; zkr's too)
         (--faults '*=0,delete-waiter=3': every kind off first, then only delete-waiter)
       [--recheck DIR/report.json]: check a recorded history again (prints, writes nothing)
       [--ci]: the CI preset (90 s, seed ${CI_SEED}, 18 clients) unless overridden
fault kinds: ${Object.keys(DEFAULT_FAULT_WEIGHTS).join(', ')} (weight 0 disables one)`);
    process.exit(0);
  }

  if (values.recheck !== undefined) {
    const saved = JSON.parse(await readFile(values.recheck, 'utf8')) as { history: ChaosHistory };
    const again = checkHistory(saved.history);
    for (const v of again.violations.slice(0, 20)) console.error(`violation [${v.check}${v.workload ? ` ${v.workload}` : ''}] ${v.message}`);
    console.log(summaryLine(saved.history, again));
    process.exit(again.violations.length === 0 ? 0 : 1);
  }

  const int = (s: string | undefined, what: string): number | undefined => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0) {
      console.error(`--${what} must be a non-negative integer, got ${s}`);
      process.exit(2);
    }
    return n;
  };
  const kinds = Object.keys(DEFAULT_CLIENT_COUNTS) as WorkloadKind[];
  const chosen = values.workloads?.split(',').map((s) => s.trim()) ?? kinds;
  for (const k of chosen) {
    if (!kinds.includes(k as WorkloadKind)) {
      console.error(`unknown workload ${k}; choose among ${kinds.join(', ')}`);
      process.exit(2);
    }
  }
  const perWorkload = int(values.clients, 'clients');
  const counts: Readonly<Record<WorkloadKind, number>> = values.ci ? CI_CLIENT_COUNTS : DEFAULT_CLIENT_COUNTS;
  const named = values.workloads !== undefined;
  const clients = Object.fromEntries(kinds.map((k) => [k, chosen.includes(k) ? (perWorkload ?? (counts[k] || (named ? (OPT_IN_CLIENT_COUNTS[k] ?? 0) : 0))) : 0]));
  const faults: Partial<Record<FaultKind, number>> = {};
  for (const pair of values.faults?.split(',') ?? []) {
    const [kind = '', weight = ''] = pair.split('=');
    if (kind === '*' && Number(weight) >= 0) {
      for (const k of Object.keys(DEFAULT_FAULT_WEIGHTS)) faults[k as FaultKind] = Number(weight);
      continue;
    }
    if (!(kind in DEFAULT_FAULT_WEIGHTS) || !(Number(weight) >= 0)) {
      console.error(`--faults takes kind=weight pairs; kinds: ${Object.keys(DEFAULT_FAULT_WEIGHTS).join(', ')} (or * for every kind); got ${pair}`);
      process.exit(2);
    }
    faults[kind as FaultKind] = Number(weight);
  }
  const seconds = int(values.seconds, 'seconds') ?? (values.ci ? 90 : 60);
  const seed = int(values.seed, 'seed') ?? (values.ci ? CI_SEED : randomBytes(4).readUInt32BE());
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = resolve(values.out ?? join('chaos-reports', `${stamp}-seed-${seed}`));
  const { history, result } = await runChaos({
    seconds,
    seed,
    sessionTimeoutMs: int(values['session-timeout'], 'session-timeout') ?? 4000,
    clients,
    faults,
    log: values.quiet ? () => undefined : (line) => console.error(line),
    logDir: dir,
    tls: values.tls,
  });
  const files = await writeReport(dir, history, result);
  for (const v of result.violations.slice(0, 20)) console.error(`violation [${v.check}${v.workload ? ` ${v.workload}` : ''}] ${v.message}`);
  console.log(`${summaryLine(history, result)} report=${files.html}`);
  process.exit(result.violations.length === 0 ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
