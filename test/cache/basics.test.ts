// The caches' basic life on one server, in both watch modes: a load, changes as events, a
// deletion and re-creation, close leaving no server watch.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Acls, NoAuthError, TreeCache, ChildrenCache, NodeCache, UnimplementedError, type CachedNode } from '../../src/index.js';
import type { ZkSession } from '../../src/client/index.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

async function session(): Promise<ZkSession> {
  await fx.observer.mkdirp('/test');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  return s;
}

async function serverWatches(s: { sessionId: bigint }): Promise<string[]> {
  return (await fx.server.watchesBySession()).get(`0x${s.sessionId.toString(16)}`) ?? [];
}

function contents(nodes: Iterable<CachedNode>): string[] {
  return [...nodes].map((n) => `${n.path}=${n.data?.toString() ?? "-"}`).sort();
}

for (const watchMode of ['persistent', 'one-shot'] as const) {
  describe(`caches (${watchMode})`, () => {
    test('a tree cache loads, follows changes, and leaves no watch', async () => {
      const zk = await session();
      const root = uniquePath('tree');
      await fx.observer.mkdirp(`${root}/a/b`, { data: 'b' });
      await fx.observer.create(`${root}/c`, { data: 'c' });
      const cache = new TreeCache(zk, root, { watchMode });
      const seen: string[] = [];
      cache.on('added', (n) => seen.push(`added ${n.path}`));
      cache.on('changed', (n) => seen.push(`changed ${n.path}`));
      cache.on('removed', (n) => seen.push(`removed ${n.path}`));
      let initialized = 0;
      cache.on('initialized', () => initialized++);
      await cache.start({ timeoutMs: 10_000 });
      assert.equal(cache.watchMode, watchMode);
      assert.deepEqual(contents(cache), [`${root}=`, `${root}/a=`, `${root}/a/b=b`, `${root}/c=c`].sort());
      assert.deepEqual(cache.children(), ['a', 'c']);
      seen.length = 0;
      await fx.observer.setData(`${root}/c`, 'c2');
      await fx.observer.create(`${root}/a/b/d`, { data: 'd' });
      await fx.observer.delete(`${root}/a/b/d`);
      await fx.observer.create(`${root}/a/b/d`, { data: 'd' });
      await waitFor(() => cache.get(`${root}/c`)?.data?.toString() === 'c2' && cache.get(`${root}/a/b/d`) !== undefined && seen.length >= 2, { timeoutMs: 5000, message: JSON.stringify(seen) });
      await fx.observer.delete(`${root}/c`);
      await waitFor(() => cache.get(`${root}/c`) === undefined, { timeoutMs: 5000 });
      assert.ok(seen.includes(`changed ${root}/c`), JSON.stringify(seen));
      assert.equal(seen.at(-1), `removed ${root}/c`);
      assert.equal(initialized, 1);
      assert.equal(cache.state, 'SYNCED');
      await cache.close();
      assert.equal(cache.state, 'CLOSED');
      await waitFor(async () => (await serverWatches(zk)).length === 0, { timeoutMs: 5000, message: 'server watches left' });
    });

    test('an absent root: initialized, then added when created', async () => {
      const zk = await session();
      const root = uniquePath('absent');
      const node = new NodeCache(zk, root, { watchMode });
      const kids = new ChildrenCache(zk, root, { watchMode });
      await node.start({ timeoutMs: 10_000 });
      await kids.start({ timeoutMs: 10_000 });
      assert.equal(node.current, undefined);
      assert.equal(kids.size, 0);
      await fx.observer.create(root, { data: 'x' });
      await fx.observer.create(`${root}/k`, { data: 'k' });
      await waitFor(() => node.current?.data?.toString() === 'x' && kids.get(`${root}/k`) !== undefined, { timeoutMs: 5000 });
      assert.equal(kids.get(root), undefined);
      await fx.observer.setData(`${root}/k`, 'k2');
      await waitFor(() => kids.get(`${root}/k`)?.data?.toString() === 'k2', { timeoutMs: 5000 });
      await node.close();
      await kids.close();
      await waitFor(async () => (await serverWatches(zk)).length === 0, { timeoutMs: 5000, message: 'server watches left' });
    });

    test('a disconnect: a node deleted and created again with the same version is removed then added; resynced after', async () => {
      const proxy = await fx.proxy();
      const zk = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
      const root = uniquePath('flap');
      await fx.observer.mkdirp(`${root}/same`);
      await fx.observer.create(`${root}/gone`);
      const cache = new TreeCache(zk, root, { watchMode });
      const seen: string[] = [];
      const note = (type: string) => (n: CachedNode) => void seen.push(`${type} ${n.path.slice(root.length) || '/'}`);
      cache.on('added', note('added'));
      cache.on('changed', note('changed'));
      cache.on('removed', note('removed'));
      for (const type of ['stale', 'resynced'] as const) cache.on(type, () => seen.push(type));
      await cache.start({ timeoutMs: 10_000 });
      const before = cache.get(`${root}/same`)!.stat;
      seen.length = 0;
      const suspended = nextState(zk, 'SUSPENDED', 5000);
      proxy.reject(true);
      proxy.dropAll();
      await suspended;
      await fx.observer.delete(`${root}/same`);
      await fx.observer.create(`${root}/same`);
      await fx.observer.delete(`${root}/gone`);
      proxy.reject(false);
      await waitFor(() => seen.includes('resynced'), { timeoutMs: 10_000, message: JSON.stringify(seen) });
      assert.deepEqual(seen.filter((e) => e !== 'resynced').sort(), ['added /same', 'removed /gone', 'removed /same', 'stale'].sort());
      assert.ok(seen.indexOf('removed /same') < seen.indexOf('added /same'));
      const after = cache.get(`${root}/same`)!.stat;
      assert.equal(after.version, before.version);
      assert.ok(after.czxid > before.czxid);
      await cache.close();
    });

    test('an expired session: sessionLost, then the new session re-reads (changes made meanwhile included)', async () => {
      const proxy = await fx.proxy();
      const zk = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
      const root = uniquePath('expire');
      await fx.observer.mkdirp(`${root}/a`);
      const cache = new TreeCache(zk, root, { watchMode });
      const seen: string[] = [];
      cache.on('sessionLost', () => seen.push('sessionLost'));
      cache.on('resynced', () => seen.push('resynced'));
      await cache.start({ timeoutMs: 10_000 });
      const lost = nextState(zk, 'LOST', 10_000);
      await expireSession(zk, proxy);
      await lost;
      await fx.observer.create(`${root}/b`, { data: 'b' });
      await fx.observer.delete(`${root}/a`);
      await waitFor(() => seen.includes('resynced'), { timeoutMs: 15_000, message: JSON.stringify(seen) });
      assert.deepEqual(contents(cache), [`${root}=`, `${root}/b=b`].sort());
      await fx.observer.setData(`${root}/b`, 'b2');
      await waitFor(() => cache.get(`${root}/b`)?.data?.toString() === 'b2', { timeoutMs: 5000 });
      await cache.close();
      await waitFor(async () => (await serverWatches(zk)).length === 0, { timeoutMs: 5000, message: 'server watches left' });
    });
  });
}

describe('caches on a server without persistent watches', () => {
  test("auto turns to one-shot watches; 'persistent' fails start with UnimplementedError and leaves nothing", async () => {
    const proxy = await fx.proxy();
    const zk = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
    proxy.unknownOps([106]);
    const root = uniquePath('old-server');
    await fx.observer.mkdirp(`${root}/a`);
    const strict = new TreeCache(zk, root, { watchMode: 'persistent' });
    await assert.rejects(strict.start({ timeoutMs: 10_000 }), UnimplementedError);
    assert.equal(strict.state, 'CLOSED');
    const cache = new TreeCache(zk, root);
    await cache.start({ timeoutMs: 10_000 });
    assert.equal(cache.watchMode, 'one-shot');
    await fx.observer.create(`${root}/a/b`, { data: 'b' });
    await waitFor(() => cache.get(`${root}/a/b`)?.data?.toString() === 'b', { timeoutMs: 5000 });
    await cache.close();
    await waitFor(async () => (await serverWatches(zk)).length === 0, { timeoutMs: 5000, message: 'server watches left' });
  });
});

describe('caches: a node the session may not read', () => {
  test('a node under the root it may not read is left out: NoAuth emitted once, not retried, the rest loads', async () => {
    const zk = await session();
    const [owner] = await Promise.all([fx.pool.connect(fx.server.connectString, { auth: [{ scheme: 'digest', credentials: 'owner:secret' }] })]);
    const root = uniquePath('noauth');
    await fx.observer.mkdirp(`${root}/open`);
    await owner!.create(`${root}/secret`, { data: 's', acl: Acls.CREATOR_ALL });
    const cache = new TreeCache(zk, root, { errorBackoff: { baseDelayMs: 1, maxDelayMs: 1 } });
    const errors: Error[] = [];
    cache.on('error', (err) => errors.push(err));
    await cache.start({ timeoutMs: 10_000 });
    assert.deepEqual([root, `${root}/open`].filter((p) => cache.get(p) !== undefined), [root, `${root}/open`]);
    assert.equal(cache.get(`${root}/secret`), undefined);
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof NoAuthError, String(errors[0]));
    // With a 1 ms backoff a retrying cache would read dozens of times meanwhile.
    const reads = zk.counters.getData + zk.counters.getChildren + zk.counters.exists;
    for (let i = 0; i < 30; i++) await fx.observer.exists('/');
    assert.equal(zk.counters.getData + zk.counters.getChildren + zk.counters.exists, reads);
    // The rest follows the server as ever.
    await fx.observer.create(`${root}/later`);
    await waitFor(() => cache.get(`${root}/later`) !== undefined, { timeoutMs: 5000, message: 'later cached' });
    await cache.close();
    await waitFor(async () => (await serverWatches(zk)).length === 0, { timeoutMs: 5000, message: 'server watches left' });
    await owner!.delete(`${root}/secret`);
  });

  test("a root it may not read: NoAuth emitted once, start rejects with it at once, the cache closes", async () => {
    const zk = await session();
    const [owner] = await Promise.all([fx.pool.connect(fx.server.connectString, { auth: [{ scheme: 'digest', credentials: 'owner:secret' }] })]);
    const root = uniquePath('noauth-root');
    await owner!.mkdirp(root, { acl: Acls.CREATOR_ALL });
    const cache = new TreeCache(zk, root, { errorBackoff: { baseDelayMs: 1, maxDelayMs: 1 } });
    const errors: Error[] = [];
    cache.on('error', (err) => errors.push(err));
    const started = performance.now();
    await assert.rejects(cache.start({ timeoutMs: 20_000 }), NoAuthError);
    assert.ok(performance.now() - started < 3000, 'refused at once, not at the timeout');
    assert.equal(errors.length, 1);
    assert.equal(cache.state, 'CLOSED');
    await cache.close();
    await waitFor(async () => (await serverWatches(zk)).length === 0, { timeoutMs: 5000, message: 'server watches left' });
    await owner!.delete(root);
  });
});
