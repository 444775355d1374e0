// The demo's failure paths, run as a user runs it (`npm run demo -- ARGS` runs
// `node build/demo/index.js ARGS` after building): no server where --connect points, a server
// that accepts and never answers, --help, and usage errors. Each ends with one line saying what
// went wrong and what to do, the right exit code, in bounded time, and no stack trace.
// (The demo against a working server: connect-only.test.ts.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { freePort, LOOPBACK } from '../src/testing/index.js';

// From build/test/demo.test.js up to the repository.
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const DEMO = join(REPO, 'build/demo/index.js');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the demo to its end (asynchronously: this process may be serving a socket meanwhile). */
function demo(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const { ZK_CONNECT: _, ...rest } = process.env;
  const started = performance.now();
  const child = spawn(process.execPath, [DEMO, ...args], { cwd: REPO, env: { ...rest, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // A bound on the whole run, far above what any case needs: a hang fails, it does not block.
  const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => {
    child.on('close', (status) => {
      clearTimeout(kill);
      resolve({ status, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** What a good command line failure never shows. */
function assertNoNoise(r: Run): void {
  const all = `${r.stdout}\n${r.stderr}`;
  assert.doesNotMatch(all, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(all, /ERR_[A-Z_]+|Error:|Node\.js v/, 'no raw error');
  assert.doesNotMatch(all, /worker processes connected/);
}

/** The usage text, as --help prints it. */
const USAGE = /^usage: npm run demo \[-- OPTIONS\][^\n]*\n[\s\S]*--connect HOST:PORT[\s\S]*--connect-timeout SECONDS[\s\S]*-h, --help/;

describe('the demo fails as a command line tool does', () => {
  let nobody: number;
  let silent: Server;
  let silentPort: number;
  const sockets = new Set<Socket>();

  before(async () => {
    nobody = await freePort(); // nothing listens there
    // Accepts connections and never answers: a firewall, a wrong service, a hung server.
    silent = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, LOOPBACK, resolve));
    silentPort = (silent.address() as { port: number }).port;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  it('--connect to a port with no server: one line on what to do, exit 1, within the 5 s connect timeout', async () => {
    const r = await demo(['--connect', `${LOOPBACK}:${nobody}`]);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '', 'nothing claims to have started');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`^demo: no ZooKeeper answered at ${LOOPBACK}:${nobody} \\(--connect\\) within 5 s\\. `));
    assert.match(lines[0]!, /give the right HOST:PORT, or run `npm run demo` without --connect/);
    assertNoNoise(r);
    assert.ok(r.ms < 15_000, `exited after ${Math.round(r.ms)} ms (connect timeout 5 s)`);
  });

  it('ZK_CONNECT naming a server that accepts and never answers, --connect-timeout 1: the same, within about 1 s', async () => {
    const r = await demo(['--connect-timeout', '1'], { ZK_CONNECT: `${LOOPBACK}:${silentPort}` });
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`^demo: no ZooKeeper answered at ${LOOPBACK}:${silentPort} \\(ZK_CONNECT\\) within 1 s\\. [^\\n]+\\n$`));
    assertNoNoise(r);
    assert.ok(r.ms < 10_000, `exited after ${Math.round(r.ms)} ms (connect timeout 1 s)`);
  });

  it('--connect with something that is not a connect string: one line, exit 2, before connecting anywhere', async () => {
    const r = await demo(['--connect', 'zk.example:port']);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^demo: --connect "zk\.example:port" is not a connect string: [^\n]+\n$/);
    assertNoNoise(r);
  });

  for (const flag of ['--help', '-h']) {
    it(`${flag} prints the usage on stdout and exits 0`, async () => {
      const r = await demo([flag]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, USAGE);
      assert.equal(r.stderr, '');
      assertNoNoise(r);
    });
  }

  for (const [args, line] of [
    [['--bogus'], 'demo: unknown option --bogus'],
    [['--connect'], 'demo: --connect needs a value'],
    [['localhost:2181'], 'demo: unexpected argument localhost:2181 (did you mean --connect localhost:2181?)'],
    [['--connect-timeout', 'soon'], 'demo: --connect-timeout takes a number of seconds, more than 0 and at most 600, got "soon"'],
  ] as const) {
    it(`a usage error (${args.join(' ')}): one line, then the usage, on stderr; exit 2`, async () => {
      const r = await demo([...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stdout, '');
      const [first, blank, ...usage] = r.stderr.split('\n');
      assert.equal(first, line);
      assert.equal(blank, '');
      assert.match(usage.join('\n'), USAGE);
      assertNoNoise(r);
    });
  }
});
