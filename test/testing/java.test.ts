import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  locateZooKeeper,
  TestingCluster,
  TestingServer,
  ZooKeeperNotInstalledError,
} from '../../src/testing/index.js';
import { locateZooKeeperIn, pickJar } from '../../src/testing/java.js';
import { locateCurator } from '../java/curator.js';

const INSTALL = 'apt-get update && apt-get install -y zookeeper';
const SCRIPT = fileURLToPath(new URL('../../../scripts/ensure-zookeeper.mjs', import.meta.url));

function isNotInstalled(error: unknown): boolean {
  assert.ok(error instanceof ZooKeeperNotInstalledError);
  assert.equal(error.code, 'ZOOKEEPER_NOT_INSTALLED');
  assert.ok(error.message.includes(INSTALL), error.message);
  return true;
}

describe('locateZooKeeper', () => {
  it('finds java and the Debian jars', () => {
    const found = locateZooKeeper();
    assert.match(found.java, /java$/);
    assert.match(found.classpath, /zookeeper\.jar/);
    assert.match(found.classpath, /zookeeper-jute\.jar/);
  });

  it('names the Debian package when ZK_JARS_DIR has no jars', () => {
    const env = { ...process.env, ZK_JARS_DIR: '/nonexistent' };
    assert.throws(() => locateZooKeeper(env), (error: unknown) => {
      isNotInstalled(error);
      assert.ok(error instanceof ZooKeeperNotInstalledError);
      assert.ok(error.missing.includes('/nonexistent/zookeeper.jar'));
      return true;
    });
  });

  it('names a Java package when java is missing', () => {
    const env = { ...process.env, JAVA: '/nonexistent/java' };
    assert.throws(() => locateZooKeeper(env), (error: unknown) => {
      isNotInstalled(error);
      assert.ok(error instanceof Error && error.message.includes('default-jre-headless'));
      return true;
    });
  });

  it('makes TestingServer and TestingCluster fail fast', async () => {
    const env = { ...process.env, ZK_JARS_DIR: '/nonexistent' };
    await assert.rejects(TestingServer.start({ env }), isNotInstalled);
    await assert.rejects(TestingCluster.start(3, { env }), isNotInstalled);
  });
});

describe('scripts/ensure-zookeeper.mjs', () => {
  const run = (env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [SCRIPT], { env, encoding: 'utf8', timeout: 30_000 });

  it('is silent when everything is installed', () => {
    const result = run(process.env);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, '');
  });

  it('prints the command and exits 1 for a ZK_JARS_DIR without jars', () => {
    const result = run({ ...process.env, ZK_JARS_DIR: '/nonexistent' });
    assert.equal(result.status, 1);
    assert.equal(result.stdout, '');
    assert.ok(result.stderr.includes(INSTALL), result.stderr);
    assert.match(result.stderr, /\/nonexistent/);
  });

  it('installs a missing JDK through apt-get (stubbed) when root; otherwise prints the command', () => {
    // A stub apt-get on a PATH without java: "installing" links the real java and javac into place.
    const dir = mkdtempSync(join(tmpdir(), 'zk-recipes-ensure-'));
    try {
      const java = locateZooKeeper().java;
      const javac = join(dirname(realpathSync(java)), 'javac');
      writeFileSync(
        join(dir, 'apt-get'),
        `#!/bin/bash\necho "$@" >> "${dir}/calls"\n[ "$1" = install ] && /bin/ln -s "${java}" "${dir}/java" && /bin/ln -s "${javac}" "${dir}/javac"\nexit 0\n`,
      );
      chmodSync(join(dir, 'apt-get'), 0o755);
      // openssl (for TLS test certificates) is there: only the JDK is missing.
      const openssl = spawnSync('/bin/sh', ['-c', 'command -v openssl'], { encoding: 'utf8' }).stdout.trim();
      assert.ok(openssl !== '', 'openssl on this machine');
      symlinkSync(openssl, join(dir, 'openssl'));
      const env = { PATH: dir };
      const result = run(env);
      if (process.getuid?.() !== 0) {
        // Not root: nothing is installed, the command to run is printed.
        assert.equal(result.status, 1);
        assert.match(result.stderr, /apt-get update && apt-get install -y default-jdk-headless/);
        assert.equal(existsSync(join(dir, 'calls')), false, 'apt-get was not run');
        return;
      }
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /installing Debian package 'default-jdk-headless'/);
      assert.match(result.stderr, /apt-get update && apt-get install -y default-jdk-headless/);
      const calls = spawnSync('/bin/cat', [join(dir, 'calls')], { encoding: 'utf8' }).stdout;
      assert.equal(calls, 'update\ninstall -y default-jdk-headless\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Installations beyond Debian, built as folders of symlinks to the Debian jars under the names
// an Apache release (and Maven Central) gives them.
describe('ZooKeeper outside Debian: ZOOKEEPER_HOME, versioned jar names, Homebrew', () => {
  let tmp: string;
  let debian: { zookeeper: string; jute: string; slf4jApi: string; slf4jNop: string };
  // apache-zookeeper-3.8.0-bin/lib as the release ships it (logback, no slf4j-nop), plus jars
  // that must not be taken for ZooKeeper's own.
  let home: string;
  // A folder of versioned jars (Maven Central's names) with an older zookeeper beside.
  let jarsDir: string;

  const link = (dir: string, name: string, target: string): void => {
    mkdirSync(dir, { recursive: true });
    symlinkSync(target, join(dir, name));
  };

  before(() => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'zk-recipes-jars-')));
    const dir = locateZooKeeper().jarsDir;
    const real = (jar: string): string => realpathSync(join(dir, jar));
    debian = { zookeeper: real('zookeeper.jar'), jute: real('zookeeper-jute.jar'), slf4jApi: real('slf4j-api.jar'), slf4jNop: real('slf4j-nop.jar') };
    home = join(tmp, 'apache-zookeeper-3.8.0-bin');
    const lib = join(home, 'lib');
    link(lib, 'zookeeper-3.8.0.jar', debian.zookeeper);
    link(lib, 'zookeeper-jute-3.8.0.jar', debian.jute);
    link(lib, 'zookeeper-prometheus-metrics-3.8.0.jar', debian.jute);
    link(lib, 'slf4j-api-1.7.32.jar', debian.slf4jApi);
    // Stand-ins: slf4j finds no binding in them and falls back to its silent logger.
    link(lib, 'logback-classic-1.2.13.jar', debian.jute);
    link(lib, 'logback-core-1.2.13.jar', debian.jute);
    writeFileSync(join(lib, 'zookeeper-3.8.0-tests.jar'), 'not a jar');
    writeFileSync(join(lib, 'zookeeper-3.8.0-sources.jar'), 'not a jar');
    mkdirSync(join(home, 'bin'));
    jarsDir = join(tmp, 'maven-jars');
    link(jarsDir, 'zookeeper-3.7.1.jar', debian.jute);
    link(jarsDir, 'zookeeper-3.8.0.jar', debian.zookeeper);
    link(jarsDir, 'zookeeper-jute-3.8.0.jar', debian.jute);
    link(jarsDir, 'slf4j-api-1.7.32.jar', debian.slf4jApi);
    link(jarsDir, 'slf4j-nop-1.7.32.jar', debian.slf4jNop);
    link(jarsDir, 'netty-handler-4.1.48.Final.jar', debian.jute);
  });
  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const names = (classpath: string): string[] => classpath.split(delimiter).map((p) => basename(p));

  it('pickJar: plain name first, else the highest version; a version starts with a digit', () => {
    const jars = ['zookeeper-3.7.1.jar', 'zookeeper-3.10.0.jar', 'zookeeper-3.9.2.jar', 'zookeeper-jute-3.9.2.jar', 'zookeeper-prometheus-metrics-3.9.2.jar'];
    assert.equal(pickJar(jars, 'zookeeper'), 'zookeeper-3.10.0.jar');
    assert.equal(pickJar(jars, 'zookeeper-jute'), 'zookeeper-jute-3.9.2.jar');
    assert.equal(pickJar([...jars, 'zookeeper.jar'], 'zookeeper'), 'zookeeper.jar');
    assert.equal(pickJar(['guava-31.1-jre.jar'], 'guava'), 'guava-31.1-jre.jar');
    assert.equal(pickJar(['slf4j-api-1.7.32.jar'], 'slf4j'), undefined);
  });

  it('ZOOKEEPER_HOME: every jar of lib/ (as zkServer.sh), one binding (logback), no tests or sources jars', () => {
    const found = locateZooKeeper({ ...process.env, ZOOKEEPER_HOME: home });
    assert.equal(found.jarsDir, join(home, 'lib'));
    assert.equal(found.logging, 'logback');
    assert.equal(found.logs, true);
    assert.deepEqual(names(found.classpath).sort(), [
      'logback-classic-1.2.13.jar',
      'logback-core-1.2.13.jar',
      'slf4j-api-1.7.32.jar',
      'zookeeper-3.8.0.jar',
      'zookeeper-jute-3.8.0.jar',
      'zookeeper-prometheus-metrics-3.8.0.jar',
    ]);
    // Its lib/ directly works too.
    assert.equal(locateZooKeeper({ ...process.env, ZOOKEEPER_HOME: join(home, 'lib') }).jarsDir, join(home, 'lib'));
  });

  it("ZK_JARS_DIR with versioned names: ZooKeeper's jars picked by name (highest version), slf4j-nop as binding", () => {
    const found = locateZooKeeper({ ...process.env, ZK_JARS_DIR: jarsDir });
    assert.equal(found.logging, 'slf4j-nop');
    assert.equal(found.logs, false);
    assert.deepEqual(names(found.classpath), ['zookeeper-3.8.0.jar', 'zookeeper-jute-3.8.0.jar', 'slf4j-api-1.7.32.jar', 'slf4j-nop-1.7.32.jar']);
  });

  it('Homebrew: its libexec is found when the Debian jars are absent; a missing one names what was looked for', () => {
    const places = { debianDir: join(tmp, 'no-debian'), homes: [join(tmp, 'no-brew'), home], javas: [] };
    const env = { PATH: process.env.PATH, JAVA: locateZooKeeper().java };
    assert.equal(locateZooKeeperIn(env, places).jarsDir, join(home, 'lib'));
    assert.throws(
      () => locateZooKeeperIn(env, { ...places, homes: [join(tmp, 'no-brew')] }),
      (error: unknown) => error instanceof ZooKeeperNotInstalledError && error.missing.includes(join(tmp, 'no-debian', 'zookeeper.jar')) && /brew install zookeeper/.test(error.message) && /ZOOKEEPER_HOME/.test(error.message),
    );
  });

  it("macOS: Homebrew's openjdk before java on PATH, after JAVA_HOME", () => {
    const java = locateZooKeeper().java;
    const places = { debianDir: locateZooKeeper().jarsDir, homes: [], javas: ['/nonexistent/openjdk/bin/java', java] };
    assert.equal(locateZooKeeperIn({ PATH: '' }, places).java, java);
    assert.throws(() => locateZooKeeperIn({ PATH: '' }, { ...places, javas: [] }), ZooKeeperNotInstalledError);
  });

  it('a server starts from an Apache release layout (ZOOKEEPER_HOME) and from versioned jars (ZK_JARS_DIR)', async () => {
    for (const env of [{ ...process.env, ZOOKEEPER_HOME: home }, { ...process.env, ZK_JARS_DIR: jarsDir }] as NodeJS.ProcessEnv[]) {
      await using server = await TestingServer.start({ env });
      assert.equal(await server.ruok(), true);
      // logback is handed a configuration of ours (its default would log every DEBUG line).
      assert.equal(existsSync(join(server.workDir, 'logback.xml')), env.ZOOKEEPER_HOME !== undefined);
    }
  });

  it('scripts/ensure-zookeeper.mjs agrees: silent for both layouts; a bad ZOOKEEPER_HOME is named, nothing installed', () => {
    const run = (env: NodeJS.ProcessEnv, ...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { env, encoding: 'utf8', timeout: 30_000 });
    for (const extra of [{ ZOOKEEPER_HOME: home }, { ZK_JARS_DIR: jarsDir }]) {
      const server = run({ ...process.env, ...extra }, '--server');
      assert.equal(server.status, 0, server.stderr);
      assert.equal(server.stderr, '');
      // Everything npm test needs: Curator's jars from CURATOR_JARS_DIR.
      const all = run({ ...process.env, ...extra, CURATOR_JARS_DIR: locateZooKeeper().jarsDir });
      assert.equal(all.status, 0, all.stderr);
      assert.equal(all.stderr, '');
    }
    const stubs = mkdtempSync(join(tmpdir(), 'zk-recipes-ensure-'));
    try {
      writeFileSync(join(stubs, 'apt-get'), `#!/bin/sh\necho "$@" >> "${stubs}/calls"\nexit 0\n`);
      chmodSync(join(stubs, 'apt-get'), 0o755);
      const bad = run({ ...process.env, PATH: `${stubs}${delimiter}${process.env.PATH ?? ''}`, ZOOKEEPER_HOME: join(tmp, 'nowhere') }, '--server');
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /ZOOKEEPER_HOME/);
      assert.ok(bad.stderr.includes(join(tmp, 'nowhere')), bad.stderr);
      assert.equal(existsSync(join(stubs, 'calls')), false, 'apt-get was not run');
      // A server named by ZK_CONNECT: nothing is checked or installed for --server.
      const connect = run({ PATH: stubs, ZK_CONNECT: '127.0.0.1:2181' }, '--server');
      assert.equal(connect.status, 0, connect.stderr);
      assert.equal(connect.stderr, '');
      assert.equal(existsSync(join(stubs, 'calls')), false, 'apt-get was not run');
    } finally {
      rmSync(stubs, { recursive: true, force: true });
    }
  });

  it("Curator's discovery jars: ensure-zookeeper and locateCurator name curator-x-discovery and Jackson when only the recipes' jars are there", () => {
    const debian = locateZooKeeper().jarsDir;
    const recipesOnly = mkdtempSync(join(tmpdir(), 'zk-recipes-curator-'));
    try {
      for (const a of ['curator-recipes', 'curator-framework', 'curator-client', 'guava']) symlinkSync(join(debian, `${a}.jar`), join(recipesOnly, `${a}.jar`));
      const r = spawnSync(process.execPath, [SCRIPT], { env: { ...process.env, CURATOR_JARS_DIR: recipesOnly }, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 1, r.stderr);
      for (const jar of ['curator-x-discovery.jar', 'jackson-databind.jar', 'jackson-core.jar', 'jackson-annotations.jar']) assert.ok(r.stderr.includes(jar), r.stderr);
      assert.ok(!r.stderr.includes('curator-recipes.jar,'), r.stderr);
      assert.match(r.stderr, /CURATOR_JARS_DIR=/);
      assert.throws(
        () => locateCurator({ ...process.env, CURATOR_JARS_DIR: recipesOnly }),
        (e: unknown) => e instanceof Error && e.message.includes(join(recipesOnly, 'curator-x-discovery.jar')) && e.message.includes('libcurator-discovery-java'),
      );
      // With them all: found, in CURATOR_JARS order.
      const cp = locateCurator({ ...process.env, CURATOR_JARS_DIR: debian }).classpath.split(delimiter).map((j) => basename(j));
      assert.deepEqual(cp.slice(0, 8), ['curator-recipes.jar', 'curator-framework.jar', 'curator-client.jar', 'guava.jar', 'curator-x-discovery.jar', 'jackson-databind.jar', 'jackson-core.jar', 'jackson-annotations.jar']);
    } finally {
      rmSync(recipesOnly, { recursive: true, force: true });
    }
  });
});
