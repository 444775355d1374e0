// SharedCount and SharedValue against real Apache Curator (Debian's 5.4 jars, driven by
// test/java/CuratorSharedAgent): Curator's setCount reaches our changed event and ours reaches
// Curator's listener; both sides increment one count with compare-and-set loops at once and the
// final count is the sum of the successful trySets on both sides (none lost, none doubled); raw
// bytes both ways, the empty value included. Without Java or the Curator jars these tests fail
// (locateCurator names the package), never skip.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SharedCount, SharedValue } from '../../src/index.js';
import { waitFor } from '../../src/testing/index.js';
import { CuratorSharedAgent } from '../java/curator-shared.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
let agent: CuratorSharedAgent;
// Inside each test, so that the fixture's server is up (file-level hooks may run before it).
const startAgent = async (): Promise<void> => {
  agent ??= await CuratorSharedAgent.start(fx.server.connectString);
};
after(async () => {
  await agent?.close();
});

test('counts: Curator sets and ours sees the change; ours sets and Curator sees it; same bytes on the node', async () => {
  await startAgent();
  const path = uniquePath('interop-count');
  const [s] = await fx.sessionsApart(1);
  await agent.send('count', 'c1', path, 41);
  await using ours = new SharedCount(s!, path, 0);
  await ours.start({ timeoutMs: 10_000 });
  assert.equal(ours.count, 41, "Curator's seed, as Curator encoded it");
  const seen: number[] = [];
  ours.on('changed', (v) => seen.push(v.value));

  await agent.send('setcount', 'c1', 42);
  await waitFor(() => seen.includes(42), { timeoutMs: 10_000, message: "ours sees Curator's setCount" });
  await ours.set(-7);
  await agent.changed('c1', -7);
  assert.deepEqual(await agent.send('get', 'c1'), ['-7', '2']);
  // Curator's own trySetCount against our write.
  await ours.set(2 ** 31 - 1);
  await agent.changed('c1', 2 ** 31 - 1);
  assert.deepEqual([...(await fx.observer.getData(path)).data], [0x7f, 0xff, 0xff, 0xff]);
  await agent.send('close', 'c1');
  await ours.close();
  await fx.waitNoWatches(s!, path);
});

test('both sides increment one count with trySet loops at once: final = every successful trySet, none lost', async () => {
  await startAgent();
  const path = uniquePath('interop-race');
  const [s1, s2] = await fx.sessionsApart(2);
  await agent.send('count', 'race', path, 0);
  await using a = new SharedCount(s1!, path, 0);
  await using b = new SharedCount(s2!, path, 0);
  await a.start({ timeoutMs: 10_000 });
  await b.start({ timeoutMs: 10_000 });
  let refusedOurs = 0;
  const loop = async (c: SharedCount, n: number): Promise<number> => {
    let wins = 0;
    while (wins < n) {
      const seen = c.get();
      if (await c.trySet(seen.value + 1, seen, { timeoutMs: 10_000 })) wins++;
      else refusedOurs++;
    }
    return wins;
  };
  const N = 60;
  const [curator, oursA, oursB] = await Promise.all([agent.send('incr', 'race', N), loop(a, N), loop(b, N)]);
  const curatorWins = Number(curator[0]);
  assert.equal(curatorWins, N);
  const total = curatorWins + oursA + oursB;
  await fx.observer.sync(path);
  const { data, stat } = await fx.observer.getData(path);
  assert.equal(data.readInt32BE(0), total, `final count = successful trySets (Curator ${curatorWins}, ours ${oursA} + ${oursB})`);
  assert.equal(stat.version, total, 'one write per successful trySet');
  assert.ok(refusedOurs + Number(curator[1]) > 0, 'the loops really raced (some trySets were refused)');
  await waitFor(() => a.count === total && b.count === total, { timeoutMs: 10_000, message: 'ours have the final count' });
  await agent.send('close', 'race');
});

test('values: raw bytes both ways, the empty value included', async () => {
  await startAgent();
  const path = uniquePath('interop-value');
  const [s] = await fx.sessionsApart(1);
  await using ours = new SharedValue(s!, path, Buffer.from([0, 1, 0xfe, 0xff]));
  await ours.start({ timeoutMs: 10_000 });
  await agent.send('value', 'v1', path, 'aa');
  assert.deepEqual(await agent.send('get', 'v1'), ['0001feff', '0'], "ours created it: Curator reads our seed as it is");
  const seen: string[] = [];
  ours.on('changed', (v) => seen.push(v.value.toString('hex') || '-'));
  await agent.send('setvalue', 'v1', '00ff00');
  await waitFor(() => seen.includes('00ff00'), { timeoutMs: 10_000, message: "ours sees Curator's bytes" });
  await agent.send('setvalue', 'v1', '-');
  await waitFor(() => seen.includes('-'), { timeoutMs: 10_000, message: "ours sees Curator's empty value" });
  assert.equal(ours.value.length, 0);
  await ours.set('héllo');
  await agent.changed('v1', Buffer.from('héllo').toString('hex'));
  const before = agent.changes.get('v1')!.length;
  assert.equal(await ours.trySet(Buffer.alloc(0), ours.get()), true);
  await waitFor(() => agent.changes.get('v1')!.slice(before).includes('-'), { timeoutMs: 10_000, message: 'Curator sees our empty value' });
  await agent.send('close', 'v1');
  await ours.close();
  await fx.waitNoWatches(s!, path);
});
