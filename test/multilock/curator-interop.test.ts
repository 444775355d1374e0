// MultiLock against real Apache Curator's InterProcessMultiLock (Debian's 5.4 jars, driven by
// test/java/CuratorBarrierAgent) on the same lock paths: each excludes the other, a waiter on
// either side is granted after the other's release, nothing is left.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MultiLock } from '../../src/multilock/index.js';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { CuratorBarrierAgent } from '../java/curator-barrier.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
let agent: CuratorBarrierAgent;
after(async () => {
  await agent?.close();
});

describe('MultiLock with Curator InterProcessMultiLock', () => {
  before(async () => {
    agent = await CuratorBarrierAgent.start(fx.server.connectString);
  });

  test('a Curator multi-lock and ours on the same paths exclude each other, both ways', async () => {
    const base = uniquePath('multi-interop');
    const paths = [`${base}/a`, `${base}/b`];
    const [s] = await fx.sessionsApart(1);
    const ours = new MultiLock(s!, [...paths].reverse());
    assert.equal(await agent.send('lock', 'c1', 20000, ...paths), 'true');
    assert.equal(await ours.tryAcquire(), null, 'Curator holds them');
    let granted = false;
    const waiting = ours.acquire({ timeoutMs: 20000 }).then((h) => {
      granted = true;
      return h;
    });
    await waitFor(async () => (await fx.children(paths[0]!)).length === 2, { timeoutMs: 5000, message: 'ours queued behind Curator' });
    assert.equal(granted, false);
    await agent.send('unlock', 'c1');
    const held = await withTimeout(waiting, 10000, "ours granted after Curator's release");
    // Now the reverse: Curator cannot have them while ours holds.
    assert.equal(await agent.send('lock', 'c2', 500, ...paths), 'false');
    const curatorWaits = agent.send('lock', 'c3', 20000, ...paths);
    await waitFor(async () => (await fx.children(paths[0]!)).length === 2, { timeoutMs: 5000, message: 'Curator queued behind ours' });
    await held.release();
    assert.equal(await withTimeout(curatorWaits, 10000, "Curator granted after ours' release"), 'true');
    await agent.send('unlock', 'c3');
    for (const p of paths) assert.deepEqual((await fx.children(p)).filter((c) => c.includes('lock-')), []);
    await ours.close();
  });
});
