// The harnesses scripts/bench-compare.mjs and scripts/wire-trace.mjs run (on the server of
// bench/server.ts, the one bench/index.ts starts too). A harness is { name, label, cmd, args }:
// `cmd args --connect HOST:PORT ...` runs the bench's workloads (bench/index.ts, or the anchors
// in bench/anchors/).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { locateCurator } from '../build/test/java/curator.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const anchorsDir = join(root, 'bench', 'anchors');

/** Curator: javac the harness once into a temp dir (removed at exit); null (the reason on stderr) when it cannot run. */
export function curatorHarness() {
  let installation;
  try {
    installation = locateCurator();
  } catch (err) {
    // The message is the interop tests' (test/java/curator.ts): what is missing and what installs it.
    const why = err.message.replace(/^Curator interop tests cannot run: /, '').replace(/;? these tests fail rather than skip without them\.?$/, '');
    console.error(`curator: skipped (${why})`);
    return null;
  }
  const classes = mkdtempSync(join(tmpdir(), 'zk-recipes-anchors-'));
  process.once('exit', () => rmSync(classes, { recursive: true, force: true }));
  const sources = readdirSync(anchorsDir).filter((f) => f.endsWith('.java')).map((f) => join(anchorsDir, f));
  const javac = spawnSync(installation.javac, ['-nowarn', '-Xlint:-path', '-d', classes, '-cp', installation.classpath, ...sources], { encoding: 'utf8' });
  if (javac.status !== 0) {
    console.error(`curator: skipped (javac failed: ${javac.stderr}${javac.stdout})`);
    return null;
  }
  // Debian's versioned name is a link to the plain one: the version is in a sibling's name.
  const jar = installation.classpath.split(delimiter).find((j) => basename(j).startsWith('curator-recipes'));
  const version = jar && readdirSync(dirname(jar)).map((f) => /^curator-recipes-(\d[\w.-]*)\.jar$/.exec(f)?.[1]).find(Boolean);
  const jvm = ['-Xmx256m', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn=error'];
  return { name: 'curator', label: `Curator ${version ?? '?'}`, cmd: installation.java, args: [...jvm, '-cp', [classes, installation.classpath].join(delimiter), 'anchors.CuratorBench'] };
}

/** kazoo: the first python with it (KAZOO_PYTHON, python3, Debian's /usr/bin/python3); null (the reason on stderr) without. */
export function kazooHarness() {
  for (const python of [process.env.KAZOO_PYTHON, 'python3', '/usr/bin/python3'].filter(Boolean)) {
    const probe = spawnSync(python, ['-c', 'import kazoo.version; print(kazoo.version.__version__)'], { encoding: 'utf8' });
    if (probe.status === 0) return { name: 'kazoo', label: `kazoo ${probe.stdout.trim()}`, cmd: python, args: ['-B', join(anchorsDir, 'kazoo_bench.py')] };
  }
  console.error('kazoo: skipped (no python3 imports kazoo; Debian: apt-get install -y python3-kazoo, or set KAZOO_PYTHON to a python that has it)');
  return null;
}

/** zk-recipes' own bench (needs `npm run build:test`); `apart`: every session as if in a process of its own. */
export function oursHarness(apart = false) {
  const bench = join(root, 'build', 'bench', 'index.js');
  return apart
    ? { name: 'zk-recipes-apart', label: 'zk-recipes --apart', cmd: process.execPath, args: [bench, '--apart'] }
    : { name: 'zk-recipes', label: 'zk-recipes', cmd: process.execPath, args: [bench] };
}
