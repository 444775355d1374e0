#!/usr/bin/env node
// Builds the package: ESM into dist/ (tsconfig.json) and CommonJS into dist/cjs
// (tsconfig.cjs.json, marked {"type":"commonjs"}), each with declarations and source maps
// that point into src/ (shipped beside them). Starts from an empty dist/, so nothing stale
// is packed.
// No install-time hook (`prepare`, `install`) runs it: an installed package is already built,
// and npm warns about every package that carries one. `npm pack` and `npm publish` build
// through `prepack`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const project of ['tsconfig.json', 'tsconfig.cjs.json']) {
  const run = spawnSync(process.execPath, [tsc, '-p', join(root, project)], { stdio: 'inherit' });
  if (run.status !== 0) {
    process.stderr.write(`zk-recipes build: tsc -p ${project} failed\n`);
    process.exit(run.status ?? 1);
  }
}
mkdirSync(join(root, 'dist', 'cjs'), { recursive: true });
writeFileSync(join(root, 'dist', 'cjs', 'package.json'), '{\n  "type": "commonjs"\n}\n');
