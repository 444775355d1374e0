// ServiceDiscovery on a 3-member ensemble: a query through a lagging follower misses a
// registration the leader has already acknowledged, and the same query with `sync: true` sees
// it (what the guide promises of `sync`); the member a registered instance's session is on is
// killed: the session moves, the instance stays, and a cache on another member never sees it go.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServiceDiscovery, type ServiceInstance } from '../../src/discovery/index.js';
import type { ZkSession } from '../../src/client/session.js';
import { waitFor } from '../../src/testing/index.js';
import { ClusterFixture, uniquePath } from '../helpers.js';

const fx = new ClusterFixture({ memberLinks: true });

async function started(s: ZkSession, basePath: string): Promise<ServiceDiscovery> {
  const d = new ServiceDiscovery(s, { basePath });
  await d.start({ timeoutMs: 15_000 });
  return d;
}

const ids = (list: readonly ServiceInstance<unknown>[]): string[] => list.map((i) => i.id);

describe('ServiceDiscovery on an ensemble', () => {
  test('a query through a lagging follower misses a fresh registration; with sync: true it sees it', async () => {
    const leader = await fx.cluster.waitForQuorum();
    const [lagging] = fx.cluster.members.filter((m) => m.id !== leader);
    assert.ok(lagging);
    const leaderMember = fx.cluster.member(leader);
    // Long timeouts: the lag slows every heartbeat through that member (its sync goes to the leader and back).
    const writer = await fx.pool.connect(`127.0.0.1:${leaderMember.port}`, { sessionTimeoutMs: 20_000 });
    const reader = await fx.pool.connect(`127.0.0.1:${lagging.port}`, { sessionTimeoutMs: 20_000 });
    const base = uniquePath('disc-lag');
    const w = await started(writer, base);
    const r = await started(reader, base);
    try {
      fx.cluster.delayLinks(lagging.id, 800);
      // The leader and the other follower make the quorum: acknowledged at once, the lagging
      // follower learns of it 0.8 s later at the earliest.
      await w.register({ name: 'api', id: 'fresh', port: 1 }, { timeoutMs: 10_000 });
      assert.deepEqual(ids(await r.queryForInstances('api', { timeoutMs: 1000 })), [], 'the lagging member answers from its own copy');
      assert.deepEqual(ids(await r.queryForInstances('api', { sync: true, timeoutMs: 20_000 })), ['fresh']);
      assert.equal((await r.queryForInstance('api', 'fresh', { sync: true, timeoutMs: 20_000 }))?.port, 1);
    } finally {
      fx.cluster.delayLinks(lagging.id, 0);
      await w.close();
      await r.close();
    }
  });

  test('the member a registration\'s session is on is killed: the session moves, the instance stays, a cache elsewhere never sees it go', async () => {
    const leader = await fx.cluster.waitForQuorum();
    const [first, second] = fx.cluster.members.filter((m) => m.id !== leader && m.running);
    assert.ok(first && second);
    const viaFirst = await fx.proxyTo(first.port);
    const viaSecond = await fx.proxyTo(second.port);
    viaSecond.reject(true);
    const s = await fx.pool.connect(`${viaFirst.connectString},${viaSecond.connectString}`, { sessionTimeoutMs: 6000 });
    const o = await fx.pool.connect(`127.0.0.1:${fx.cluster.member(leader).port}`, { sessionTimeoutMs: 30_000 });
    const base = uniquePath('disc-kill');
    const d = await started(s, base);
    const watcher = await started(o, base);
    const cache = watcher.serviceCache('api');
    await cache.start({ timeoutMs: 15_000 });
    const lists: string[][] = [];
    cache.on('changed', (list) => lists.push(ids(list)));
    await d.register({ name: 'api', id: 'stays', port: 2 }, { timeoutMs: 15_000 });
    await waitFor(() => ids(cache.instances).join() === 'stays', { timeoutMs: 15_000, message: 'the cache sees it' });
    const session = s.sessionId;
    const czxid = (await o.exists(`${base}/api/stays`))?.czxid;
    await fx.cluster.kill(first.id);
    viaFirst.reject(true);
    viaSecond.reject(false);
    await waitFor(() => s.state === 'RECONNECTED' || s.state === 'CONNECTED', { timeoutMs: 20_000, message: 'reconnected to the other follower' });
    await d.update({ name: 'api', id: 'stays', port: 3 }, { timeoutMs: 15_000 });
    await waitFor(() => cache.instances[0]?.port === 3, { timeoutMs: 15_000, message: 'the update reaches the cache' });
    assert.equal(s.sessionId, session, 'the same session');
    assert.equal((await o.exists(`${base}/api/stays`))?.czxid, czxid, 'the same node');
    assert.ok(lists.every((l) => l.includes('stays')), `never seen gone: ${JSON.stringify(lists)}`);
    await d.close();
    await waitFor(() => cache.instances.length === 0, { timeoutMs: 15_000, message: 'gone at close' });
    await watcher.close();
    await fx.cluster.restart(first.id);
  });
});
