import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import {
  locateZooKeeper,
  TestingCluster,
  TestingServer,
  ZooKeeperNotInstalledError,
} from '../../src/testing/index.js';

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
