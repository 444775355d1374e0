// Runs the compiled tests with node's built-in runner. Unit tests (no server) and integration
// tests (each file starts its own ZooKeeper) run with bounded concurrency: the CI machine has
// 2 cores, and every JVM wants one while it starts.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

// Arguments pick files by substring of their compiled path (build/test/...): `mutex`,
// `build/test/mutex/mutex.test.js`, or the source's path, `test/mutex/mutex.test.ts`.
//   npm test -- test/mutex/mutex.test.ts     builds what changed, then runs that one file
const root = 'build/test';
const only = process.argv.slice(2).map((o) => o.replace(/^(\.\/)?test\//, 'build/test/').replace(/\.ts$/, '.js'));
function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.js') ? [p] : [];
  });
}
let files = walk(root).sort();
if (only.length > 0) files = files.filter((f) => only.some((o) => f.includes(o)));
if (files.length === 0) {
  console.error(`no test files found under ${root} matching ${only.join(' ') || '*'}`);
  process.exit(1);
}
const concurrency = process.env.ZK_TEST_CONCURRENCY ?? '2';
const r = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-reporter=./scripts/tap-with-recap.mjs', '--test-reporter-destination=stdout', `--test-concurrency=${concurrency}`, '--test-timeout=240000', ...files],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
