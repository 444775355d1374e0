#!/usr/bin/env node
// Builds the package: ESM into dist/ (tsconfig.json) and CommonJS into dist/cjs
// (tsconfig.cjs.json, marked {"type":"commonjs"}), each with declarations and declaration maps
// that point into src/ (shipped beside them, so go-to-definition opens the TypeScript source).
// No JavaScript source maps: tsc's output keeps the source's names, lines of code and comments,
// so a stack trace into dist/ reads as it is.
//   node scripts/build.mjs           build what changed since the last build (tsc -b: each
//                                    project's .tsbuildinfo sits in its output directory, so
//                                    deleting the output deletes the record too)
//   node scripts/build.mjs --test    the same, then the tests, examples, demo and bench into
//                                    build/ (npm run build:test)
//   node scripts/build.mjs --clean   from an empty dist/, so nothing stale (an output of a
//                                    deleted source) is packed: npm pack's prepack hook
// No install-time hook (`prepare`, `install`) runs it: an installed package is already built,
// and npm warns about every package that carries one.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--test' && a !== '--clean');
if (unknown.length > 0) {
  process.stderr.write(`zk-recipes build: unknown option ${unknown.join(' ')} (known: --test, --clean)\n`);
  process.exit(2);
}

const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
if (args.includes('--clean')) rmSync(join(root, 'dist'), { recursive: true, force: true });
// In this order: the tests' project type-checks the examples against dist/ (they import
// 'zk-recipes', which resolves to this package's own exports).
const projects = ['tsconfig.json', 'tsconfig.cjs.json', ...(args.includes('--test') ? ['tsconfig.test.json'] : [])];
const run = spawnSync(process.execPath, [tsc, '-b', ...projects.map((p) => join(root, p))], { stdio: 'inherit' });
if (run.status !== 0) {
  process.stderr.write(`zk-recipes build: tsc -b ${projects.join(' ')} failed\n`);
  process.exit(run.status ?? 1);
}
mkdirSync(join(root, 'dist', 'cjs'), { recursive: true });
// The package's bin (package.json#bin): executable, run by its #!/usr/bin/env node line. It is
// ESM only: tsconfig.cjs.json leaves src/cli out of the CommonJS build, which nothing would load.
chmodSync(join(root, 'dist', 'cli', 'zkr.js'), 0o755);
writeFileSync(join(root, 'dist', 'cjs', 'package.json'), '{\n  "type": "commonjs"\n}\n');
