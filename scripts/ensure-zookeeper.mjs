#!/usr/bin/env node
// Makes sure java and the ZooKeeper jars that zk-recipes/testing runs are installed, and what
// the Curator interop tests need: Apache Curator's jars (Debian's libcurator-recipes-java) and
// javac. Silent (exit 0) when they are. When they are not: as root with apt-get, installs the
// Debian packages; otherwise prints the command to run and exits 1.
// Keep in sync with src/testing/java.ts and test/java/curator.ts (this runs before the build,
// so it cannot import them).
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

const DEFAULT_DIR = '/usr/share/java';
const JARS = ['zookeeper.jar', 'zookeeper-jute.jar', 'slf4j-api.jar', 'slf4j-nop.jar'];
const CURATOR_JARS = ['curator-recipes.jar', 'curator-framework.jar', 'curator-client.jar', 'guava.jar'];

function usable(path, mode) {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(name) {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find((path) => usable(path, constants.X_OK));
}

function javaFound() {
  const { JAVA, JAVA_HOME } = process.env;
  if (JAVA) return usable(JAVA, constants.X_OK);
  if (JAVA_HOME) return usable(join(JAVA_HOME, 'bin', 'java'), constants.X_OK);
  return findOnPath('java') !== undefined;
}

// As test/java/curator.ts looks for it: JAVAC, beside java, or on PATH.
function javacFound() {
  const { JAVAC, JAVA, JAVA_HOME } = process.env;
  if (JAVAC) return usable(JAVAC, constants.X_OK);
  const java = JAVA || (JAVA_HOME && join(JAVA_HOME, 'bin', 'java'));
  if (java && usable(join(dirname(java), 'javac'), constants.X_OK)) return true;
  return findOnPath('javac') !== undefined;
}

function check() {
  const dir = process.env.ZK_JARS_DIR || DEFAULT_DIR;
  const missingIn = (jars) => jars.filter((jar) => !usable(join(dir, jar), constants.R_OK));
  return {
    dir,
    jarsMissing: missingIn(JARS),
    curatorMissing: missingIn(CURATOR_JARS),
    javaMissing: !javaFound(),
    javacMissing: !javacFound(),
  };
}

function describe({ dir, jarsMissing, curatorMissing, javaMissing, javacMissing }, detailed = false) {
  const what = [];
  const names = (jars) => (detailed ? ` (${jars.join(', ')})` : '');
  if (jarsMissing.length > 0) what.push(`ZooKeeper jars not found in ${dir}${names(jarsMissing)}`);
  if (curatorMissing.length > 0) what.push(`Curator jars not found in ${dir}${names(curatorMissing)}`);
  if (javaMissing) what.push('java not found (JAVA, JAVA_HOME or PATH)');
  if (javacMissing) what.push('javac not found (JAVAC, beside java, or PATH)');
  return what.join('; ');
}

const missingAny = (c) => c.jarsMissing.length > 0 || c.curatorMissing.length > 0 || c.javaMissing || c.javacMissing;

const before = check();
if (!missingAny(before)) process.exit(0);

const packages = [
  ...(before.jarsMissing.length > 0 ? ['zookeeper'] : []),
  ...(before.curatorMissing.length > 0 ? ['libcurator-recipes-java'] : []),
  // The JDK brings java too.
  ...(before.javacMissing ? ['default-jdk-headless'] : before.javaMissing ? ['default-jre-headless'] : []),
];
const command = `apt-get update && apt-get install -y ${packages.join(' ')}`;
// apt-get fills /usr/share/java and PATH only: a custom ZK_JARS_DIR, JAVA or JAVA_HOME
// that points at nothing is for the user to fix.
const customDir = (before.jarsMissing.length > 0 || before.curatorMissing.length > 0) && before.dir !== DEFAULT_DIR;
const customJava = (before.javaMissing && Boolean(process.env.JAVA || process.env.JAVA_HOME)) || (before.javacMissing && Boolean(process.env.JAVAC));
const canInstall =
  !customDir && !customJava && process.getuid?.() === 0 && findOnPath('apt-get') !== undefined;

if (!canInstall) {
  const fix = customDir
    ? `put ${[...JARS, ...CURATOR_JARS].join(', ')} in ZK_JARS_DIR=${before.dir}, or unset ZK_JARS_DIR and run: ${command}`
    : customJava
      ? `point JAVA or JAVA_HOME at a Java runtime (JAVAC at javac), or unset them and run: ${command}`
      : `run as root: ${command}`;
  process.stderr.write(`zk-recipes: ${describe(before, true)}.\nTo fix, ${fix}\n`);
  process.exit(1);
}

const pkgList = packages.map((p) => `'${p}'`).join(' and ');
process.stderr.write(
  `zk-recipes: ${describe(before)}; installing Debian package${packages.length > 1 ? 's' : ''} ${pkgList} (${command})\n`,
);
// apt's output goes to stderr too, so that stdout stays clean for whoever runs us.
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [['update'], ['install', '-y', ...packages]]) {
  const run = spawnSync('apt-get', args, { stdio: ['ignore', 2, 2], env });
  if (run.status !== 0) {
    process.stderr.write(`zk-recipes: 'apt-get ${args.join(' ')}' failed (exit ${run.status ?? run.signal}).\n`);
    process.exit(1);
  }
}

const after = check();
if (missingAny(after)) {
  process.stderr.write(`zk-recipes: still missing after install: ${describe(after, true)}.\n`);
  process.exit(1);
}
