// The timing rule of `zkr`, through a ChaosProxy between one zkr and the server: a partition
// past the session timeout kills the command and a grandchild it forked (both ignore TERM, so
// only the SIGKILL a grace later ends them) before a second zkr on the same path starts its
// command; a suspension that heals in time leaves the command running; `--on-suspended kill`
// kills at once.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { ChaosProxy, waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import { alive, ZkrRun } from './run-zkr.js';

const fx = new ServerFixture();
const runs = new Set<ZkrRun>();
after(async () => {
  await Promise.all([...runs].map((r) => r.stop()));
});

function start(args: readonly string[], env: NodeJS.ProcessEnv = {}): ZkrRun {
  const r = new ZkrRun(args, { ZK_CONNECT: fx.server.connectString, ...env });
  runs.add(r);
  void r.exit.then(() => runs.delete(r));
  return r;
}

async function proxy(): Promise<ChaosProxy> {
  const p = await ChaosProxy.start({ targetPort: fx.server.port });
  fx.proxies.push(p);
  return p;
}

/** A command that ignores TERM and forks a grandchild that ignores it too; prints both pids. */
const STUBBORN = ['sh', '-c', 'trap "" TERM; (trap "" TERM; exec sleep 60) & echo "pids $$ $!"; while :; do sleep 0.05; done'];

describe('zkr: the timing rule', () => {
  it('a partition past the session timeout: the command and its grandchild are dead before the next holder starts', async () => {
    const path = uniquePath('cli-partition');
    const p = await proxy();
    const a = start(['lock', path, '--connect', p.connectString, '--session-timeout', '4', '--kill-grace', '0.3', '-v', '--', ...STUBBORN]);
    const [, child, grandchild] = (await a.waitFor(/^pids (\d+) (\d+)$/m)).map(Number);
    assert.ok(alive(child as number) && alive(grandchild as number));
    const pids = [child as number, grandchild as number];

    // The next holder checks, as the very first thing its command does, whether they still live.
    const check = 'for p in $A_PIDS; do if [ -e /proc/$p ] && ! grep -q "^[0-9]* ([^)]*) [ZX] " /proc/$p/stat; then echo "alive $p"; fi; done; echo "started $(date +%s%N)"';
    const b = start(['lock', path, '-v', '--', 'sh', '-c', check], { A_PIDS: pids.join(' ') });
    await b.waitFor(/waiting for lock/);
    await waitFor(async () => (await fx.children(path)).length === 2, { timeoutMs: 10_000, message: 'the second zkr queued' });

    // The last instant each was seen alive (wall clock ms), polled from here.
    const lastAlive = new Map<number, number>(pids.map((pid) => [pid, Date.now()]));
    const poll = setInterval(() => {
      for (const pid of pids) if (alive(pid)) lastAlive.set(pid, Date.now());
    }, 5);
    const partitioned = performance.now();
    p.blackhole();
    try {
      const [, started] = await b.waitFor(/^started (\d+)$/m, 30_000, 'stdout');
      const bStart = Number(BigInt(started as string) / 1_000_000n);
      assert.doesNotMatch(b.stdout, /alive/, 'no process of the first holder was alive when the next command started');
      for (const pid of pids) {
        assert.equal(alive(pid), false, `pid ${pid} dead`);
        assert.ok((lastAlive.get(pid) as number) < bStart, `pid ${pid} last seen alive at ${lastAlive.get(pid)}, the next command started at ${bStart}`);
      }
      const end = await a.exit;
      assert.equal(end.code, 75, end.stderr);
      assert.match(end.stderr, /stayed suspended too long.*sending SIGTERM to process group \d+, SIGKILL after 0\.3s/);
      assert.ok(performance.now() - partitioned < 20_000);
      assert.equal((await b.exit).code, 0);
      const margin = Math.min(...pids.map((pid) => bStart - (lastAlive.get(pid) as number)));
      process.stdout.write(`# the next command started ${margin} ms after the first holder's processes were last seen alive\n`);
    } finally {
      clearInterval(poll);
      p.pass();
    }
    assert.deepEqual(await fx.children(path), []);
  });

  it('a suspension that heals in time leaves the command running under the same session', async () => {
    const path = uniquePath('cli-blip');
    const p = await proxy();
    const a = start(['lock', path, '--connect', p.connectString, '--session-timeout', '4', '--kill-grace', '0.3', '-v', '--', 'sh', '-c', 'echo "pid $$"; while [ ! -e "$0" ]; do sleep 0.05; done', `/tmp/zkr-blip-${process.pid}`]);
    const [, pid] = (await a.waitFor(/^pid (\d+)$/m)).map(Number);
    p.reject(true);
    p.dropAll();
    await a.waitFor(/suspended: the child is killed in \d+ ms unless the session is back/);
    p.reject(false);
    await a.waitFor(/reconnected: the same session, still held/);
    assert.equal(alive(pid as number), true, 'still running');
    writeFileSync(`/tmp/zkr-blip-${process.pid}`, '');
    try {
      const end = await a.exit;
      assert.equal(end.code, 0, end.stderr);
    } finally {
      rmSync(`/tmp/zkr-blip-${process.pid}`, { force: true });
    }
  });

  it('--on-suspended kill: the command is killed as soon as the connection is suspended', async () => {
    const path = uniquePath('cli-onsuspended');
    const p = await proxy();
    const a = start(['lock', path, '--connect', p.connectString, '--session-timeout', '4', '--kill-grace', '0.2', '--on-suspended', 'kill', '--', ...STUBBORN]);
    const pids = (await a.waitFor(/^pids (\d+) (\d+)$/m)).slice(1).map(Number);
    p.reject(true);
    p.dropAll();
    const end = await a.exit;
    p.reject(false);
    assert.equal(end.code, 75, end.stderr);
    assert.match(end.stderr, /suspended \(--on-suspended kill\)/);
    for (const pid of pids) assert.equal(alive(pid), false);
    await waitFor(async () => (await fx.children(path)).length === 0, { timeoutMs: 10_000, message: 'the node goes (released once back, or with the session)' });
  });
});
