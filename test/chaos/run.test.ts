// A short chaos run (about 60 s of faults on a 3-member ensemble, 18 client processes, the caches among them): zero
// violations. The seed is fixed (CHAOS_SEED overrides it); the report goes to a temp folder,
// printed when something fails. `npm run chaos` runs longer ones.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CI_CLIENT_COUNTS, CI_SEED, runChaos, summaryLine, writeReport, type ChaosRunResult, type Violation } from '../../src/testing/index.js';

const seed = Number(process.env.CHAOS_SEED ?? CI_SEED);
const seconds = Number(process.env.CHAOS_SECONDS ?? 60);
let run: ChaosRunResult | undefined;
let report = '';

const describe = (vs: readonly Violation[]): string => `${vs.map((v) => `[${v.check} ${v.workload ?? ''}] ${v.message}`).join('\n')}\nreport: ${report}`;

test(`chaos run: seed ${seed}, ${seconds} s of faults`, { timeout: 230_000 }, async (t) => {
  run = await runChaos({
    seconds,
    seed,
    sessionTimeoutMs: 4000,
    clients: CI_CLIENT_COUNTS,
  });
  report = (await writeReport(join(tmpdir(), `zk-recipes-chaos-seed-${seed}`), run.history, run.result)).html;
  t.diagnostic(summaryLine(run.history, run.result));
  t.diagnostic(`report: ${report}`);
  assert.ok(run.result.stats.faults >= 10, `the nemesis injected only ${run.result.stats.faults} faults`);
  assert.ok(Object.values(run.result.stats.grants).every((n) => n > 0), `a lock workload was never granted: ${JSON.stringify(run.result.stats.grants)}`);
  const caches = Object.values(run.result.stats.cache);
  assert.ok(caches.length > 0 && caches.every((c) => c.writes > 0 && c.caches.length > 0 && c.caches.every((x) => x.events > 0)), `the caches saw no writes: ${JSON.stringify(caches)}`);
});

test('chaos run: locks, leadership, tokens, counter, resource, leftovers: zero violations', () => {
  assert.ok(run, 'the run did not complete');
  const vs = run.result.violations.filter((v) => v.check !== 'queue' && v.check !== 'cache');
  assert.deepEqual(vs, [], describe(vs));
});

// Issue 11 (found by this suite too: stranded claims, one put making two items) is fixed on
// main; on a base without that fix this one fails.
test('chaos run: queue delivery promises: zero violations', () => {
  assert.ok(run, 'the run did not complete');
  const vs = run.result.violations.filter((v) => v.check === 'queue');
  assert.deepEqual(vs, [], describe(vs));
});

test('chaos run: the caches (zxid order, no phantom, SYNCED and equal to the server at the end): zero violations', () => {
  assert.ok(run, 'the run did not complete');
  const vs = run.result.violations.filter((v) => v.check === 'cache');
  assert.deepEqual(vs, [], describe(vs));
});
