// PersistentNode on a 3-member ensemble: the member its session is on is killed (the session
// moves, the node stays, a deletion meanwhile is repaired on the same session); a session lost by
// the client's own clock behind a lagging follower (the previous session's ephemeral may still be
// there): the new node comes only after the server saw the old one go, never two at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PersistentNode } from '../../src/nodes/index.js';
import type { ZkSession } from '../../src/client/session.js';
import { ChaosProxy, TestingCluster, waitFor } from '../../src/testing/index.js';
import { nextState, SessionPool, uniquePath } from '../helpers.js';

let cluster: TestingCluster;
let observer: ZkSession;
const pool = new SessionPool();
const proxies: ChaosProxy[] = [];

before(async () => {
  cluster = await TestingCluster.start(3, { memberLinks: true });
  observer = await pool.connect(cluster.connectString, { sessionTimeoutMs: 30000 });
});
after(async () => {
  await pool.closeAll();
  await Promise.all(proxies.map((p) => p.close()));
  await cluster?.close();
});

async function proxyTo(port: number): Promise<ChaosProxy> {
  const p = await ChaosProxy.start({ targetPort: port });
  proxies.push(p);
  return p;
}

async function children(path: string): Promise<string[]> {
  await observer.sync(path).catch(() => undefined);
  return (await observer.getChildren(path).catch(() => ({ children: [] as string[] }))).children.sort();
}

describe('PersistentNode on an ensemble', () => {
  test('the member the session is on is killed: the session moves, a deletion meanwhile is repaired', async () => {
    const leader = await cluster.waitForQuorum();
    const [first, second] = cluster.members.filter((m) => m.id !== leader);
    assert.ok(first && second);
    const viaFirst = await proxyTo(first.port);
    const viaSecond = await proxyTo(second.port);
    viaSecond.reject(true);
    const s = await pool.connect(`${viaFirst.connectString},${viaSecond.connectString}`, { sessionTimeoutMs: 6000 });
    const base = uniquePath('pn-kill');
    await using node = new PersistentNode(s, `${base}/m`, { data: 'k' });
    node.on('error', () => undefined);
    node.start();
    await node.waitForInitialCreate({ timeoutMs: 15000 });
    const session = s.sessionId;
    await cluster.kill(first.id);
    await observer.delete(`${base}/m`);
    const back = new Promise<string>((resolve) => node.once('created', resolve));
    viaFirst.reject(true);
    viaSecond.reject(false);
    await back;
    assert.equal(s.sessionId, session, 'the same session, moved to the other follower');
    const got = await observer.getData(`${base}/m`);
    assert.equal(got.stat.ephemeralOwner, session);
    assert.equal(got.data.toString(), 'k');
    await node.close();
    assert.deepEqual(await children(base), []);
    await cluster.restart(first.id);
  });

  test('a session lost by its own clock behind a lagging follower: the old ephemeral goes before the new one comes', async () => {
    const leader = await cluster.waitForQuorum();
    const follower = cluster.members.find((m) => m.id !== leader && m.running);
    assert.ok(follower);
    const proxy = await proxyTo(follower.port);
    const s = await pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
    const base = uniquePath('pn-lag');
    await using node = new PersistentNode(s, `${base}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL', protection: true, data: 'l' });
    node.on('error', () => undefined);
    const seen: string[] = [];
    node.on('created', (p) => seen.push(`created ${p}`));
    node.on('deleted', (p) => seen.push(`deleted ${p}`));
    node.start();
    await node.waitForInitialCreate({ timeoutMs: 15000 });
    const old = node.actualPath as string;
    const oldSession = s.sessionId;
    // Every state of the directory an observer sees (re-read on each child event): never two.
    const tracking = new AbortController();
    let most = 0;
    const track = (async () => {
      while (!tracking.signal.aborted) {
        const w = await observer.getChildrenWatch(base, { signal: tracking.signal });
        most = Math.max(most, w.result.children.length);
        await w.changed.catch(() => undefined);
      }
    })().catch(() => undefined);
    // The follower lags behind the leader; the client is cut off until it declares the session
    // lost on its own clock, about when the leader expires it (before or after).
    cluster.delayLinks(follower.id, 300);
    const lost = nextState(s, 'LOST', 20000);
    proxy.blackhole();
    await lost;
    const back = new Promise<string>((resolve) => node.once('created', resolve));
    proxy.pass();
    const fresh = await back;
    assert.notEqual(fresh, old);
    assert.notEqual(s.sessionId, oldSession);
    // Created only once our server had seen the old one deleted: ZooKeeper orders our create after it.
    assert.deepEqual(seen.slice(-2), [`deleted ${old}`, `created ${fresh}`]);
    cluster.delayLinks(follower.id, 0);
    await waitFor(async () => JSON.stringify(await children(base)) === JSON.stringify([fresh.slice(base.length + 1)]), { timeoutMs: 15000, message: 'one node, the new one' });
    assert.equal((await observer.exists(fresh))?.ephemeralOwner, s.sessionId);
    tracking.abort();
    await track;
    assert.equal(most, 1, 'never two nodes at once');
    await node.close();
    assert.deepEqual(await children(base), []);
  });
});
