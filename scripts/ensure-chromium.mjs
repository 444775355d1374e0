#!/usr/bin/env node
// Makes sure a headless Chromium is there for the test that opens the chaos report as users do
// (test/chaos/report.test.ts). Silent (exit 0) when CHROMIUM names one or chromium (or
// chromium-browser) is on PATH. Otherwise: as root with apt-get, installs Debian's `chromium`
// package; else prints what to do and exits 1, as scripts/ensure-zookeeper.mjs does for Java.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
const onPath = (name) => (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, name)).find(executable);
const found = () => (process.env.CHROMIUM ? executable(process.env.CHROMIUM) : ['chromium', 'chromium-browser'].some((n) => onPath(n) !== undefined));

if (found()) process.exit(0);
if (process.env.CHROMIUM) {
  process.stderr.write(`zk-recipes: CHROMIUM=${process.env.CHROMIUM} is not an executable; point it at a Chromium or Chrome binary, or unset it.\n`);
  process.exit(1);
}
const command = 'apt-get update && apt-get install -y chromium';
if (process.getuid?.() !== 0 || onPath('apt-get') === undefined) {
  const fix = onPath('apt-get') ? `run as root: ${command}` : 'install Chromium (or Chrome) and set CHROMIUM to its binary';
  process.stderr.write(`zk-recipes: Chromium not found (CHROMIUM, or chromium on PATH); the chaos report test opens the report in it.\nTo fix: ${fix}.\n`);
  process.exit(1);
}
process.stderr.write(`zk-recipes: Chromium not found; installing Debian package 'chromium' (${command})\n`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [['update'], ['install', '-y', 'chromium']]) {
  const run = spawnSync('apt-get', args, { stdio: ['ignore', 2, 2], env });
  if (run.status !== 0) {
    process.stderr.write(`zk-recipes: 'apt-get ${args.join(' ')}' failed (exit ${run.status ?? run.signal}).\n`);
    process.exit(1);
  }
}
if (!found()) {
  process.stderr.write('zk-recipes: chromium is still not on PATH after the install.\n');
  process.exit(1);
}
