// Barrier and DoubleBarrier against real Apache Curator (Debian's 5.4 jars, driven by
// test/java/CuratorBarrierAgent): Curator sets a barrier and ours waits, and the reverse; a double
// barrier with Curator and zk-recipes members, who enter together and leave together; nothing is
// left. Without Java or the Curator jars these tests fail (locateCurator names the package), never skip.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Barrier, DoubleBarrier } from '../../src/barrier/index.js';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { CuratorBarrierAgent } from '../java/curator-barrier.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
let agent: CuratorBarrierAgent;
// Inside each suite, so that the fixture's server is up (file-level hooks may run before it).
const startAgent = async (): Promise<void> => {
  agent ??= await CuratorBarrierAgent.start(fx.server.connectString);
};
after(async () => {
  await agent?.close();
});

const watchesOf = async (sessionHex: string): Promise<string[]> => (await fx.server.watchesBySession()).get(sessionHex) ?? [];

describe('Barrier with Curator DistributedBarrier', () => {
  before(startAgent);
  test('Curator sets the barrier and ours waits until Curator removes it', async () => {
    const path = uniquePath('interop-barrier');
    await agent.send('set', path);
    const [s] = await fx.sessionsApart(1);
    const barrier = new Barrier(s!, path);
    assert.equal(await barrier.isSet(), true);
    let done = false;
    const waiting = barrier.wait({ timeoutMs: 20000 }).then(() => (done = true));
    await waitFor(async () => (await watchesOf(`0x${s!.sessionId.toString(16)}`)).includes(path), { timeoutMs: 5000, message: 'ours watches the barrier' });
    assert.equal(done, false);
    await agent.send('remove', path);
    await withTimeout(waiting, 5000, 'ours is released by Curator');
    assert.equal(s!.activeWatchCount, 0);
  });

  test('ours sets the barrier and Curator waits until ours removes it', async () => {
    const path = uniquePath('interop-barrier-rev');
    const [s] = await fx.sessionsApart(1);
    const barrier = new Barrier(s!, path);
    await barrier.set();
    let result: string | undefined;
    const waiting = agent.send('wait', path, 20000).then((r) => (result = r));
    await waitFor(async () => (await watchesOf(agent.sessionId)).includes(path), { timeoutMs: 10000, message: 'Curator watches the barrier' });
    assert.equal(result, undefined);
    await barrier.remove();
    await withTimeout(waiting, 5000, 'Curator is released by ours');
    assert.equal(result, 'true');
    assert.equal(await fx.observer.exists(path), null);
  });
});

describe('DoubleBarrier with Curator DistributedDoubleBarrier', () => {
  before(startAgent);
  test('two Curator members and two of ours enter together and leave together', async () => {
    const path = uniquePath('interop-double');
    const sessions = await fx.sessionsApart(2);
    const ours = sessions.map((s) => new DoubleBarrier(s, path, { memberCount: 4 }));
    let oursEntered = 0;
    const entering = ours.map((m) => m.enter({ timeoutMs: 30000 }).then(() => oursEntered++));
    const javaEnter1 = agent.send('enter', 'j1', path, 4, 30000);
    await waitFor(async () => (await fx.children(path)).length === 3, { timeoutMs: 10000, message: 'three members in' });
    assert.equal(oursEntered, 0, 'nobody passes enter with three of four');
    const javaEnter2 = agent.send('enter', 'j2', path, 4, 30000);
    await withTimeout(Promise.all(entering), 10000, 'ours entered');
    assert.deepEqual(await Promise.all([javaEnter1, javaEnter2]), ['true', 'true']);
    // Leaving: ours first; they must wait for Curator's members.
    let oursLeft = 0;
    const leaving = ours.map((m) => m.leave({ timeoutMs: 30000 }).then(() => oursLeft++));
    const j1 = agent.send('leave', 'j1', 30000);
    await waitFor(async () => (await fx.children(path)).filter((c) => c !== 'ready').length <= 2, { timeoutMs: 10000, message: 'leavers delete their nodes' });
    assert.equal(oursLeft, 0, 'nobody is done leaving while a Curator member is in');
    const j2 = agent.send('leave', 'j2', 30000);
    await withTimeout(Promise.all(leaving), 10000, 'ours left');
    assert.deepEqual(await Promise.all([j1, j2]), ['true', 'true']);
    // No member and no ready node left (the directory is a container, maybe deleted by ours).
    assert.deepEqual(await fx.children(path), []);
    for (const s of sessions) assert.equal(s.activeWatchCount, 0);
    await fx.observer.delete(path).catch(() => undefined);
  });

  test("ours is the last to enter: it creates ready, which Curator's members wait for", async () => {
    const path = uniquePath('interop-double-ready');
    const [s] = await fx.sessionsApart(1);
    const j = agent.send('enter', 'k1', path, 2, 30000);
    await waitFor(async () => (await fx.children(path)).length === 1, { timeoutMs: 10000, message: 'Curator is in' });
    const m = new DoubleBarrier(s!, path, { memberCount: 2 });
    await m.enter({ timeoutMs: 10000 });
    assert.equal(await withTimeout(j, 10000, 'Curator entered'), 'true');
    assert.ok((await fx.children(path)).includes('ready'));
    await Promise.all([m.leave({ timeoutMs: 10000 }), agent.send('leave', 'k1', 10000)]);
    assert.deepEqual(await fx.children(path), []);
    await fx.observer.delete(path).catch(() => undefined);
  });
});
