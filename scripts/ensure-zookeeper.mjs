#!/usr/bin/env node
// Makes sure what zk-recipes' tests need is installed: java and the ZooKeeper jars that
// zk-recipes/testing runs, and what the Curator interop tests need (Apache Curator's jars,
// Debian's libcurator-recipes-java and libcurator-discovery-java, and javac). Silent (exit 0) when they are. When they are
// not: as root with apt-get, installs the Debian packages; otherwise prints what to do (Debian,
// macOS, an Apache release) and exits 1.
//
//   node scripts/ensure-zookeeper.mjs           everything `npm test` needs
//   node scripts/ensure-zookeeper.mjs --server  a ZooKeeper server only (java and its jars), as
//                                               the demo and the bench need when they start one;
//                                               nothing at all when ZK_CONNECT names a server
//
// ZooKeeper is looked for as src/testing/java.ts does (this runs before the build, so it cannot
// import it; test/testing/java.test.ts checks both against the same folders): ZK_JARS_DIR (a
// folder of jars, versioned names too), ZOOKEEPER_HOME (an Apache release), /usr/share/java
// (Debian), Homebrew's zookeeper. java: JAVA, JAVA_HOME, Homebrew's openjdk on macOS, PATH.
// Curator's jars: CURATOR_JARS_DIR, else the folder ZooKeeper's jars came from.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

const serverOnly = process.argv.includes('--server');
if (serverOnly && process.env.ZK_CONNECT) process.exit(0);

const DEBIAN_DIR = '/usr/share/java';
const HOMEBREW_HOMES = ['/opt/homebrew/opt/zookeeper/libexec', '/usr/local/opt/zookeeper/libexec'];
const HOMEBREW_JAVA = ['/opt/homebrew/opt/openjdk/bin/java', '/usr/local/opt/openjdk/bin/java'];
const ZK_ARTIFACTS = ['zookeeper', 'zookeeper-jute', 'slf4j-api'];
// Curator's jars, each with the Debian package that brings it (and its dependencies):
// curator-x-discovery (de)serializes its instances with Jackson.
const CURATOR_PACKAGES = {
  'curator-recipes': 'libcurator-recipes-java',
  'curator-framework': 'libcurator-recipes-java',
  'curator-client': 'libcurator-recipes-java',
  guava: 'libcurator-recipes-java',
  'curator-x-discovery': 'libcurator-discovery-java',
  'jackson-databind': 'libcurator-discovery-java',
  'jackson-core': 'libcurator-discovery-java',
  'jackson-annotations': 'libcurator-discovery-java',
};
const CURATOR_ARTIFACTS = Object.keys(CURATOR_PACKAGES);
const CURATOR_LIST = 'curator-recipes, curator-framework, curator-client, curator-x-discovery, guava, jackson-databind, jackson-core and jackson-annotations';

function usable(path, mode) {
  try {
    accessSync(path, mode);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDir(path) {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function jarsIn(dir) {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.jar') && usable(join(dir, f), constants.R_OK));
  } catch {
    return [];
  }
}

// artifact.jar or artifact-<version>.jar (a version starts with a digit).
function hasJar(jars, artifact) {
  return jars.some((j) => j === `${artifact}.jar` || (j.startsWith(`${artifact}-`) && /^\d/.test(j.slice(artifact.length + 1)) && !/-(sources|javadoc|tests)\.jar$/.test(j)));
}

function findOnPath(name) {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find((path) => usable(path, constants.X_OK));
}

function findJava() {
  const { JAVA, JAVA_HOME } = process.env;
  if (JAVA) return usable(JAVA, constants.X_OK) ? JAVA : undefined;
  if (JAVA_HOME) return usable(join(JAVA_HOME, 'bin', 'java'), constants.X_OK) ? join(JAVA_HOME, 'bin', 'java') : undefined;
  if (process.platform === 'darwin') {
    const brew = HOMEBREW_JAVA.find((j) => usable(j, constants.X_OK));
    if (brew) return brew;
  }
  return findOnPath('java');
}

// As test/java/curator.ts looks for it: JAVAC, beside java, or on PATH.
function javacFound(java) {
  if (process.env.JAVAC) return usable(process.env.JAVAC, constants.X_OK);
  if (java && usable(join(dirname(java), 'javac'), constants.X_OK)) return true;
  return findOnPath('javac') !== undefined;
}

// Where ZooKeeper's jars are: { dir, missing } (missing: artifact names not found there).
function locateZooKeeper() {
  const { ZK_JARS_DIR, ZOOKEEPER_HOME } = process.env;
  const inDir = (dir) => ({ dir, missing: ZK_ARTIFACTS.filter((a) => !hasJar(jarsIn(dir), a)) });
  const home = (h) => inDir(isDir(join(h, 'lib')) ? join(h, 'lib') : h);
  if (ZK_JARS_DIR) return { ...inDir(ZK_JARS_DIR), custom: 'ZK_JARS_DIR' };
  if (ZOOKEEPER_HOME) return { ...home(ZOOKEEPER_HOME), custom: 'ZOOKEEPER_HOME' };
  let found = inDir(DEBIAN_DIR);
  for (const h of HOMEBREW_HOMES) if (found.missing.length > 0 && isDir(h)) found = home(h);
  return { ...found, custom: undefined };
}

function check() {
  const zk = locateZooKeeper();
  const java = findJava();
  const curatorDir = process.env.CURATOR_JARS_DIR || zk.dir;
  return {
    zk,
    curatorDir,
    curatorMissing: serverOnly ? [] : CURATOR_ARTIFACTS.filter((a) => !hasJar(jarsIn(curatorDir), a)),
    javaMissing: java === undefined,
    javacMissing: !serverOnly && !javacFound(java),
    // TLS test servers: Netty (the only connection factory with TLS) beside Debian's ZooKeeper, and openssl for their certificates.
    nettyMissing: zk.dir === DEBIAN_DIR && zk.missing.length === 0 && !hasJar(jarsIn(DEBIAN_DIR), 'netty-handler'),
    opensslMissing: findOnPath('openssl') === undefined,
  };
}

function describe(c) {
  const what = [];
  if (c.zk.missing.length > 0) what.push(`ZooKeeper jars not found in ${c.zk.dir} (${c.zk.missing.map((a) => `${a}.jar`).join(', ')})`);
  if (c.curatorMissing.length > 0) what.push(`Curator jars not found in ${c.curatorDir} (${c.curatorMissing.map((a) => `${a}.jar`).join(', ')})`);
  if (c.javaMissing) what.push('java not found (JAVA, JAVA_HOME or PATH)');
  if (c.javacMissing) what.push('javac not found (JAVAC, beside java, or PATH)');
  if (c.nettyMissing) what.push(`Netty jars not found in ${DEBIAN_DIR} (netty-handler.jar; TLS test servers)`);
  if (c.opensslMissing) what.push('openssl not found on PATH (TLS test certificates)');
  return what.join('; ');
}

const missingAny = (c) => c.zk.missing.length > 0 || c.curatorMissing.length > 0 || c.javaMissing || c.javacMissing || c.nettyMissing || c.opensslMissing;

const before = check();
if (!missingAny(before)) process.exit(0);

const packages = [
  ...(before.zk.missing.length > 0 ? ['zookeeper'] : []),
  ...new Set(before.curatorMissing.map((a) => CURATOR_PACKAGES[a])),
  // The JDK brings java too.
  ...(before.javacMissing ? ['default-jdk-headless'] : before.javaMissing ? ['default-jre-headless'] : []),
  ...(before.nettyMissing ? ['libnetty-java'] : []),
  ...(before.opensslMissing ? ['openssl'] : []),
];
const command = `apt-get update && apt-get install -y ${packages.join(' ')}`;
// apt-get fills /usr/share/java and PATH only: a folder or a java named in the environment
// that lacks something is for the user to fix.
const customZk = before.zk.missing.length > 0 && before.zk.custom !== undefined;
const customCurator = before.curatorMissing.length > 0 && before.curatorDir !== DEBIAN_DIR;
const customJava = (before.javaMissing && Boolean(process.env.JAVA || process.env.JAVA_HOME)) || (before.javacMissing && Boolean(process.env.JAVAC));
const apt = findOnPath('apt-get') !== undefined;
const canInstall = !customZk && !customCurator && !customJava && process.getuid?.() === 0 && apt;

if (!canInstall) {
  const fixes = [];
  const orApt = apt ? ` and run: ${command}` : '';
  if (customZk) {
    fixes.push(
      before.zk.custom === 'ZOOKEEPER_HOME'
        ? `point ZOOKEEPER_HOME at an unpacked Apache ZooKeeper release (apache-zookeeper-X.Y.Z-bin, whose lib/ holds zookeeper-X.Y.Z.jar), or unset it${orApt}`
        : `put zookeeper, zookeeper-jute, slf4j-api and slf4j-nop jars (versioned names are fine) in ZK_JARS_DIR=${before.zk.dir}, or unset it${orApt}`,
    );
  }
  if (customCurator) fixes.push(`put Curator 5's ${CURATOR_LIST} jars in ${process.env.CURATOR_JARS_DIR ? `CURATOR_JARS_DIR=${before.curatorDir}` : `${before.curatorDir} or set CURATOR_JARS_DIR to a folder holding them`}`);
  if (customJava) fixes.push('point JAVA or JAVA_HOME at a Java runtime (JAVAC at javac), or unset them');
  if (!customZk && !customCurator && !customJava) {
    if (apt) fixes.push(`run as root: ${command}`);
    else if (process.platform === 'darwin') {
      fixes.push(
        'brew install zookeeper (it brings a JDK, openjdk: export JAVA_HOME=$(brew --prefix openjdk))' +
          (before.curatorMissing.length > 0 ? `; for the Curator interop tests, put Curator 5 jars (${CURATOR_LIST}) in a folder named by CURATOR_JARS_DIR` : ''),
      );
    } else {
      fixes.push('install a JDK 11+ and unpack an Apache ZooKeeper release, then set ZOOKEEPER_HOME to it (and CURATOR_JARS_DIR to a folder of Curator 5 jars for the interop tests)');
    }
  }
  fixes.push('see docs/testing.md ("Where ZooKeeper comes from")');
  process.stderr.write(`zk-recipes: ${describe(before)}.\nTo fix: ${fixes.join('; ')}.\n`);
  process.exit(1);
}

const pkgList = packages.map((p) => `'${p}'`).join(' and ');
process.stderr.write(`zk-recipes: ${describe(before)}; installing Debian package${packages.length > 1 ? 's' : ''} ${pkgList} (${command})\n`);
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
  process.stderr.write(`zk-recipes: still missing after install: ${describe(after)}.\n`);
  process.exit(1);
}
