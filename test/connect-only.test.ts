// `npm run demo -- --connect HOST:PORT` and the bench with --connect need no Java: they never
// look for it (every lookup would fail: JAVA, ZK_JARS_DIR and ZOOKEEPER_HOME point at nothing)
// and never install it (java and apt-get on PATH are stubs that record any call).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { TestingServer } from '../src/testing/index.js';

// From build/test/connect-only.test.js up to the repository.
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The queue scene shows what it says: the job its narration calls "served first" is the first
 * taken, every job is put before any is taken, and each is taken exactly once.
 */
function assertQueueAsNarrated(stdout: string): void {
  const scene = stdout.slice(stdout.indexOf('== Queue =='));
  const lines = scene.split('\n').map((l) => /\bqueue\s+(put|took) (job-\d+)(.*)$/.exec(l)).filter((m) => m !== null);
  const puts = lines.filter((m) => m[1] === 'put');
  const takes = lines.filter((m) => m[1] === 'took').map((m) => m[2]);
  assert.equal(puts.length, 9, scene);
  const firstTake = lines.findIndex((m) => m[1] === 'took');
  assert.ok(firstTake >= puts.length, `every job is put before any is taken:\n${scene}`);
  const narrated = puts.filter((m) => /served first/.test(m[3] ?? '')).map((m) => m[2]);
  assert.equal(narrated.length, 1, `one job is narrated as served first:\n${scene}`);
  assert.equal(takes[0], narrated[0], `the job narrated as served first is taken first:\n${scene}`);
  assert.deepEqual([...takes].sort(), puts.map((m) => m[2]).sort(), `each job taken once:\n${scene}`);
}

describe('demo and bench against a given server', () => {
  let server: TestingServer;
  let stubs: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await TestingServer.start();
    stubs = mkdtempSync(join(tmpdir(), 'zk-recipes-nojava-'));
    for (const name of ['java', 'javac', 'apt-get']) {
      writeFileSync(join(stubs, name), `#!/bin/sh\necho "${name} $*" >> "${stubs}/calls"\nexit 1\n`);
      chmodSync(join(stubs, name), 0o755);
    }
    const { JAVA_HOME: _home, ZK_CONNECT: _connect, ...rest } = process.env;
    env = { ...rest, PATH: `${stubs}${delimiter}${process.env.PATH ?? ''}`, JAVA: '/nonexistent/java', ZK_JARS_DIR: '/nonexistent', ZOOKEEPER_HOME: '/nonexistent' };
  });
  after(async () => {
    await server?.close();
    if (stubs) rmSync(stubs, { recursive: true, force: true });
  });

  const calls = (): string => (existsSync(join(stubs, 'calls')) ? readFileSync(join(stubs, 'calls'), 'utf8') : '');

  it('npm run demo runs no Java lookup or install of its own (no predemo hook; the demo decides)', () => {
    const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.equal(scripts.predemo, undefined);
    assert.equal(scripts.prebench, undefined);
    assert.match(scripts.demo ?? '', /node build\/demo\/index\.js$/);
    assert.match(scripts.bench ?? '', /node build\/bench\/index\.js$/);
  });

  it('the demo with --connect runs every scene, ends with what to read next, and never asks for Java', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'build/demo/index.js'), '--connect', server.connectString], { cwd: REPO, env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    for (const scene of ['Mutex', 'Semaphore', 'Read-write lock', 'Leader election', 'Queue']) assert.ok(r.stdout.includes(`== ${scene} ==`), scene);
    assert.match(r.stdout, /What next:/);
    assert.equal(calls(), '');
    assertQueueAsNarrated(r.stdout);
  });

  it('the demo with ZK_CONNECT likewise', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'build/demo/index.js')], { cwd: REPO, env: { ...env, ZK_CONNECT: server.connectString }, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, new RegExp(`ZooKeeper at ${server.connectString}`));
    assert.equal(calls(), '');
  });

  it('the bench with --connect (one workload) never asks for Java', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'build/bench/index.js'), '--connect', server.connectString, '--only', 'raw_seq'], { cwd: REPO, env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.equal((JSON.parse(r.stdout.trim()) as { workload: string }).workload, 'raw_seq');
    assert.equal(calls(), '');
  });

  it('the bench refuses bad options with a message and exit code 2, before connecting (no stack trace)', () => {
    for (const args of [['--runs', '-1'], ['--nope'], ['--runs', '0'], ['--warmup=-1'], ['--only', 'nope']]) {
      const r = spawnSync(process.execPath, [join(REPO, 'build/bench/index.js'), '--connect', server.connectString, ...args], { cwd: REPO, env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', args.join(' '));
      assert.match(r.stderr, /--runs|--warmup|--nope|unknown workload/, args.join(' '));
      assert.doesNotMatch(r.stderr, /^\s+at /m, `${args.join(' ')}: no stack trace`);
    }
    assert.equal(calls(), '');
  });

  it('without a server to connect to and no ZooKeeper installable, the demo says how to give one', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'build/demo/index.js')], { cwd: REPO, env: { ...env, PATH: stubs }, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--connect HOST:PORT/);
    assert.match(calls(), /^$/, 'apt-get is not run for a custom ZOOKEEPER_HOME');
  });
});
