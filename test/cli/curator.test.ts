// `zkr lock` and Apache Curator's InterProcessMutex on one path exclude each other (Debian's
// Curator jars, driven by test/java/CuratorSemaphoreAgent in its mutex mode): either way round
// the second is busy with -n or a timeout, and is granted once the first releases. Without Java
// or the Curator jars this fails (locateCurator names the package), never skips.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../src/testing/index.js';
import { CuratorAgent } from '../java/curator.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import { zkr, ZkrRun } from './run-zkr.js';

const fx = new ServerFixture();
const agents = new Set<CuratorAgent>();
const runs = new Set<ZkrRun>();
after(async () => {
  await Promise.all([...runs].map((r) => r.stop()));
  await Promise.all([...agents].map((a) => a.close()));
});

async function agent(path: string): Promise<CuratorAgent> {
  const a = await CuratorAgent.start(fx.server.connectString, path, 1, 'mutex');
  agents.add(a);
  return a;
}

function start(args: readonly string[]): ZkrRun {
  const r = new ZkrRun(args, { ZK_CONNECT: fx.server.connectString }, { keepStdin: true });
  runs.add(r);
  void r.exit.then(() => runs.delete(r));
  return r;
}

describe('zkr lock and Curator InterProcessMutex on one path', () => {
  it('Curator holds: zkr is busy with -n, waits without, and runs once Curator releases', async () => {
    const path = uniquePath('cli-curator-first');
    const curator = await agent(path);
    const held = curator.acquire('c1');
    assert.deepEqual(await held.granted, ['mutex']);
    const busy = await zkr(['lock', path, '-n', '--', 'echo', 'ran'], { ZK_CONNECT: fx.server.connectString });
    assert.equal(busy.code, 1, busy.stderr);
    assert.equal(busy.stdout, '');
    const waiting = start(['lock', path, '-v', '--', 'sh', '-c', 'echo "ran $ZKR_NODE_PATH"']);
    await waiting.waitFor(/waiting for lock/);
    await waitFor(async () => (await fx.children(path)).length === 2, { timeoutMs: 10_000, message: 'zkr queued behind Curator' });
    assert.equal(waiting.stdout, '', 'not run while Curator holds');
    await curator.release('c1');
    const end = await waiting.exit;
    assert.equal(end.code, 0, end.stderr);
    assert.match(end.stdout, new RegExp(`^ran ${path}/_c_[0-9a-f-]{36}-lock-\\d{10}\\n$`));
    await waitFor(async () => (await fx.children(path)).length === 0, { timeoutMs: 10_000, message: 'no node left' });
    await curator.close();
    agents.delete(curator);
  });

  it('zkr holds: Curator times out, and is granted only after zkr released', async () => {
    const path = uniquePath('cli-curator-second');
    const curator = await agent(path);
    const holder = start(['lock', path, '--pass-stdin', '--', 'sh', '-c', 'echo held; read x']);
    await holder.waitFor(/^held$/m);
    assert.equal(await curator.acquire('late', { timeoutMs: 300 }).granted, null, 'Curator timed out');
    const queued = curator.acquire('c2');
    await queued.started;
    await waitFor(async () => (await fx.children(path)).length === 2, { timeoutMs: 10_000, message: 'Curator queued behind zkr' });
    // zkr's command runs until its stdin closes: a grant before that would be two holders.
    let ending = false;
    const granted = queued.granted.then((g) => ({ g, afterEnd: ending }));
    await new Promise((resolve) => setImmediate(resolve));
    ending = true;
    holder.child.stdin?.end('\n');
    assert.equal((await holder.exit).code, 0);
    const { g, afterEnd } = await granted;
    assert.deepEqual(g, ['mutex']);
    assert.equal(afterEnd, true, "granted only once zkr's command had been told to end");
    await curator.release('c2');
    await curator.close();
    agents.delete(curator);
  });
});
