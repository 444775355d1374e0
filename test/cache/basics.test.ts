// The caches' basic life on one server, in both watch modes: a load, changes as events, a
// deletion and re-creation, close leaving no server watch.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TreeCache, ChildrenCache, NodeCache, type CachedNode } from '../../src/index.js';
import type { ZkSession } from '../../src/client/index.js';
import { waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

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
  });
}
