// The caches against real Apache Curator (Debian's 5.4 jars, driven by test/java/CuratorCacheAgent):
// Curator writes and our TreeCache sees every state of every node with Curator's stats and data,
// event for event as Curator's own CuratorCache; our session writes and both caches end equal to
// the server; both caches on one path create nothing and leave no watch (ours while its session
// stays open; Curator's with ZooKeeper's 3.8 client only once its session ends); ChildrenCache and
// NodeCache equal Curator's children view and SINGLE_NODE_CACHE. One agent JVM for the file.
// Our three kinds of cache share one session on one path; Curator's tree and single-node caches
// need a session each on a server before 3.9 (ZOOKEEPER-4466, see CuratorCacheAgent.cache).
// Without Java or the Curator jars these tests fail (locateCurator names the package), never skip.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import { ChildrenCache, NodeCache, TreeCache, type CachedNode, type CacheWatchMode } from '../../src/index.js';
import { waitFor } from '../../src/testing/index.js';
import { CuratorCacheAgent, type CuratorCacheEvent, type CuratorNode } from '../java/curator-cache.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
let java: CuratorCacheAgent | undefined;
let ids = 0;
/** The file's one agent, started by the first test that needs it (the server is up by then). */
async function agent(): Promise<CuratorCacheAgent> {
  java ??= await CuratorCacheAgent.start(fx.server.connectString);
  return java;
}
after(async () => {
  await java?.close();
});

const WAIT = { timeoutMs: 10_000 };

/** One node, as both sides print it: path, czxid, mzxid, version, data. */
function key(n: CachedNode | CuratorNode): string {
  if ('stat' in n) return `${n.path} ${n.stat.czxid} ${n.stat.mzxid} ${n.stat.version} ${n.data?.toString('hex') ?? '~'}`;
  return `${n.path} ${n.czxid} ${n.mzxid} ${n.version} ${n.data?.toString('hex') ?? '~'}`;
}

const ourContents = (cache: TreeCache | ChildrenCache): string[] => [...cache].map(key).sort();

/** Every node at or under `path` as the server has it (observer reads), sorted by path. */
async function serverContents(path: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (p: string): Promise<void> => {
    const { data, stat } = await fx.observer.getData(p);
    out.push(key({ path: p, stat, data }));
    for (const c of (await fx.observer.getChildren(p)).children) await walk(`${p}/${c}`);
  };
  if (await fx.observer.exists(path)) await walk(path);
  return out.sort();
}

/** Our cache's added/changed/removed events, as Curator's agent names them (one list in order). */
function record(cache: TreeCache | ChildrenCache | NodeCache): string[] {
  const seen: string[] = [];
  cache.on('added', (n) => seen.push(`created ${key(n)}`));
  cache.on('changed', (n) => seen.push(`changed ${key(n)}`));
  cache.on('removed', (n) => seen.push(`deleted ${key(n)}`));
  return seen;
}

const curatorLines = (events: readonly CuratorCacheEvent[]): string[] => events.map((e) => `${e.type} ${key(e.node)}`);

/** The events of one node path, in order. */
const ofPath = (lines: readonly string[], path: string): string[] => lines.filter((l) => l.split(' ')[1] === path);

/** Which watches the server holds for session `hex` under `path` (wchc: data, child and persistent watches). */
async function watchesUnder(hex: string, path: string): Promise<string[]> {
  return ((await fx.server.watchesBySession()).get(hex) ?? []).filter((p) => p === path || p.startsWith(`${path}/`));
}

const hexOf = (s: ZkSession): string => `0x${s.sessionId.toString(16)}`;

for (const watchMode of ['persistent', 'one-shot'] as const satisfies readonly CacheWatchMode[]) {
  describe(`TreeCache (${watchMode}) beside Curator's CuratorCache`, () => {
    test('Curator writes a tree: ours sees every state of every node with equal stats and data, event for event as CuratorCache', async () => {
      const java = await agent();
      const base = uniquePath(`curator-writes-${watchMode}`);
      await fx.observer.mkdirp('/test');
      const [s] = (await fx.sessionsN(1)) as [ZkSession];
      const ours = new TreeCache(s, base, { watchMode });
      const mine = record(ours);
      const id = `t${++ids}`;
      await java.cache(id, 'tree', base);
      await Promise.all([ours.start(WAIT), java.initialized(id)]);
      assert.equal(ours.watchMode, watchMode);
      assert.equal(ours.size, 0, 'an absent root: nothing held');
      const theirs = java.events(id);

      // After each Curator write, both caches hold that node's new state (or no longer hold it).
      const settled = async (path: string, node: CuratorNode | undefined): Promise<void> => {
        const want = node && key(node);
        await waitFor(() => (ours.get(path) && key(ours.get(path) as CachedNode)) === want, { ...WAIT, message: `our cache at ${path}: ${want ?? 'gone'}` });
        await java.until(() => {
          const last = theirs.filter((e) => e.node.path === path).at(-1);
          return want === undefined ? last?.type === 'deleted' : last !== undefined && last.type !== 'deleted' && key(last.node) === want;
        }, 10_000, `Curator's cache at ${path}: ${want ?? 'gone'}`);
      };
      const create = async (path: string, value: string | Buffer): Promise<CuratorNode> => {
        const n = await java.create(path, value);
        await settled(path, n);
        return n;
      };
      const set = async (path: string, value: string): Promise<CuratorNode> => {
        const n = await java.set(path, value);
        await settled(path, n);
        return n;
      };
      const remove = async (path: string): Promise<void> => {
        await java.delete(path);
        await settled(path, undefined);
      };

      await create(base, 'root');
      await create(`${base}/a`, 'a1');
      await create(`${base}/b`, '');
      await create(`${base}/a/x`, 'x1');
      await create(`${base}/a/y`, Buffer.from([0, 1, 2, 255]));
      await set(`${base}/a/x`, 'x2');
      await set(`${base}/a/x`, 'x2'); // same data, new version: a change
      await set(base, 'root2');
      await remove(`${base}/a/y`);
      await create(`${base}/c`, 'c1');
      await create(`${base}/c/deep`, 'd1');
      await remove(`${base}/b`);
      const b2 = await create(`${base}/b`, ''); // re-created: removed, then added (new czxid)
      await set(`${base}/b`, 'b2');

      // Every node's history is the same on both sides, event for event, with no duplicate.
      const paths = [base, `${base}/a`, `${base}/b`, `${base}/a/x`, `${base}/a/y`, `${base}/c`, `${base}/c/deep`];
      for (const p of paths) assert.deepEqual(ofPath(mine, p), ofPath(curatorLines(theirs), p), `events of ${p}`);
      assert.equal(mine.length, theirs.length, 'as many events on both sides');
      assert.deepEqual(ofPath(mine, `${base}/a/x`).map((l) => l.split(' ')[0]), ['created', 'changed', 'changed']);
      assert.deepEqual(ofPath(mine, `${base}/b`).map((l) => l.split(' ')[0]), ['created', 'deleted', 'created', 'changed']);
      assert.equal(ours.get(`${base}/b`)?.stat.czxid, b2.czxid, 'the re-created node, by czxid');

      // Final contents: ours = Curator's = the server's.
      const server = await serverContents(base);
      assert.equal(server.length, 6);
      assert.deepEqual(ourContents(ours), server);
      assert.deepEqual((await java.dump(id)).map(key), server);
      assert.deepEqual(ours.children(base), ['a', 'b', 'c']);

      await Promise.all([ours.close(), java.closeCache(id)]);
      await s.deleteRecursive(base);
    });
  });
}

describe("TreeCache and Curator's CuratorCache on what our session writes", () => {
  test('creates, sets and deletes, many in flight: both caches end equal to the server', async () => {
    const java = await agent();
    const base = uniquePath('ours-write');
    const [writer, reader] = (await fx.sessionsN(2)) as [ZkSession, ZkSession];
    await writer.mkdirp(base, { data: 'r' });
    // Some nodes exist before the caches start, the rest come while they run.
    await Promise.all(Array.from({ length: 5 }, (_, i) => writer.create(`${base}/pre-${i}`, { data: `p${i}` })));
    const ours = new TreeCache(reader, base);
    const id = `t${++ids}`;
    await java.cache(id, 'tree', base);
    await Promise.all([ours.start(WAIT), java.initialized(id)]);
    assert.equal(ours.size, 6);

    const dirs = Array.from({ length: 6 }, (_, i) => `${base}/d${i}`);
    await Promise.all(dirs.map((d) => writer.create(d, { data: d })));
    await Promise.all(dirs.flatMap((d) => Array.from({ length: 8 }, (_, j) => writer.create(`${d}/n${j}`, { data: `${j}` }))));
    // A burst of sets, all in flight at once, several per node; then deletes, and a re-creation.
    await Promise.all(dirs.flatMap((d) => Array.from({ length: 8 }, (_, j) => [1, 2, 3].map((k) => writer.setData(`${d}/n${j}`, `${j}-${k}`)))).flat());
    await Promise.all([writer.setData(base, 'r2'), writer.delete(`${base}/pre-0`), writer.deleteRecursive(`${base}/d5`), writer.setData(`${base}/pre-1`, Buffer.alloc(0))]);
    await writer.create(`${base}/pre-0`, { data: 'again' });

    const server = await serverContents(base);
    assert.equal(server.length, 1 + 5 + 5 * 9);
    await waitFor(() => JSON.stringify(ourContents(ours)) === JSON.stringify(server), { ...WAIT, message: 'our cache equal to the server' });
    let curator: string[] = [];
    await waitFor(async () => JSON.stringify((curator = (await java.dump(id)).map(key))) === JSON.stringify(server), { ...WAIT, message: "Curator's cache equal to the server" });
    assert.deepEqual(ourContents(ours), curator);

    await Promise.all([ours.close(), java.closeCache(id)]);
    await writer.deleteRecursive(base);
  });
});

describe('both caches on one path at once', () => {
  test('neither creates a node; after both close no watch is left on the server', async () => {
    const java = await agent();
    const base = uniquePath('both');
    await fx.observer.mkdirp('/test');
    const [s] = (await fx.sessionsN(1)) as [ZkSession];
    const znodes = Number((await fx.server.mntr()).zk_znode_count);
    const tree = new TreeCache(s, base);
    const children = new ChildrenCache(s, base);
    const node = new NodeCache(s, base);
    const id = `t${++ids}`;
    const idNode = `t${++ids}`;
    // Curator's two caches in sessions of their own, closed with them (ZOOKEEPER-4466 and -4472,
    // see CuratorCacheAgent.cache); ours share one session, which stays open.
    const curatorSessions = [await java.cache(id, 'tree', base, true), await java.cache(idNode, 'node', base, true)];
    await Promise.all([tree.start(WAIT), children.start(WAIT), node.start(WAIT), java.initialized(id), java.initialized(idNode)]);
    assert.equal(await fx.observer.exists(base), null, 'the absent root is not created by either cache');
    assert.equal(Number((await fx.server.mntr()).zk_znode_count), znodes, 'no node created anywhere');

    // While they run, both sessions hold watches on the path (so the check below means something).
    const watchers = [hexOf(s), ...curatorSessions];
    const watched = async (): Promise<number[]> => Promise.all(watchers.map(async (hex) => (await watchesUnder(hex, base)).length));
    await waitFor(async () => (await watched()).every((n) => n > 0), { ...WAIT, message: 'watches of every session on the path' });

    await fx.observer.create(base, { data: 'r' });
    await fx.observer.create(`${base}/k`, { data: 'k' });
    await fx.observer.create(`${base}/k/leaf`, { data: 'l' });
    await waitFor(async () => tree.size === 3 && children.size === 1 && node.current !== undefined && (await java.dump(id)).length === 3, { ...WAIT, message: 'all caches see the three nodes' });
    await fx.observer.deleteRecursive(base);
    let sizes = '';
    await waitFor(async () => (sizes = `${tree.size} ${children.size} ${node.current ? 1 : 0} ${(await java.dump(id)).length} ${(await java.dump(idNode)).length}`) === '0 0 0 0 0', { ...WAIT, message: 'all caches see them gone' }).catch((err: Error) => {
      throw new Error(`${err.message}: tree, children, node, Curator's tree and node hold ${sizes}; ours: ${[...tree].map(key).join(', ')} / ${[...children].map(key).join(', ')}`);
    });
    assert.equal(await fx.observer.exists(base), null, 'nothing re-created by either cache');

    await Promise.all([tree.close(), children.close(), node.close(), java.closeCache(id), java.closeCache(idNode)]);
    assert.equal(s.closed, false, 'our session stays open: its caches removed their watches');
    await waitFor(async () => (await watched()).every((n) => n === 0), { ...WAIT, message: 'no watch of any session left on the path (wchc)' }).catch(async (err: Error) => {
      const left = await Promise.all(watchers.map(async (hex, i) => `${['ours', "Curator's tree", "Curator's node"][i]} ${hex}: ${(await watchesUnder(hex, base)).join(' ') || 'none'}`));
      throw new Error(`${err.message}; left: ${left.join('; ')}`);
    });
    assert.equal(s.activeWatchCount, 0, 'no watch left in our session');
    assert.equal(Number((await fx.server.mntr()).zk_znode_count), znodes, 'no node left behind');
  });
});

describe("ChildrenCache and NodeCache beside Curator's views", () => {
  test("ChildrenCache equals CuratorCache's direct children, NodeCache equals SINGLE_NODE_CACHE, at every step", async () => {
    const java = await agent();
    const base = uniquePath('views');
    const [s] = (await fx.sessionsN(1)) as [ZkSession];
    await s.mkdirp(base, { data: 'r1' });
    await s.create(`${base}/a`, { data: 'a1' });
    const children = new ChildrenCache(s, base);
    const node = new NodeCache(s, base);
    const nodeEvents = record(node);
    const idTree = `t${++ids}`;
    const idNode = `t${++ids}`;
    await java.cache(idTree, 'tree', base);
    await java.cache(idNode, 'node', base, true);
    await Promise.all([children.start(WAIT), node.start(WAIT), java.initialized(idTree), java.initialized(idNode)]);

    const directChildren = (nodes: readonly CuratorNode[]): string[] => nodes.filter((n) => n.path.startsWith(`${base}/`) && !n.path.slice(base.length + 1).includes('/')).map(key).sort();
    /** After a write: both sides equal, and equal to the server. */
    const agree = async (what: string): Promise<void> => {
      const serverChildren = (await serverContents(base)).filter((l) => l.split(' ')[0]!.startsWith(`${base}/`) && !l.split(' ')[0]!.slice(base.length + 1).includes('/'));
      const serverNode = (await fx.observer.exists(base)) ? (await serverContents(base)).find((l) => l.split(' ')[0] === base) : undefined;
      const want = JSON.stringify({ children: serverChildren, curatorChildren: serverChildren, node: serverNode ? [serverNode] : [], curatorNode: serverNode ? [serverNode] : [] });
      let seen = '';
      const views = async (): Promise<string> =>
        JSON.stringify({
          children: ourContents(children),
          curatorChildren: directChildren(await java.dump(idTree)),
          node: node.current ? [key(node.current)] : [],
          curatorNode: (await java.dump(idNode)).map(key),
        });
      await waitFor(async () => (seen = await views()) === want, { ...WAIT, message: `the views agree after ${what}` }).catch((err: Error) => {
        throw new Error(`${err.message}: want ${want}, have ${seen}`);
      });
    };
    await agree('start');
    assert.equal(children.get(base), undefined, 'ChildrenCache does not hold its path');
    await s.create(`${base}/b`, { data: 'b1' });
    await s.create(`${base}/a/grandchild`, { data: 'g' });
    await agree('two creates');
    assert.equal(children.get(`${base}/a/grandchild`), undefined, 'nor grandchildren');
    await s.setData(`${base}/a`, 'a2');
    await s.setData(base, 'r2');
    await agree('two sets');
    await s.deleteRecursive(`${base}/a`);
    await agree('a delete');
    await s.deleteRecursive(base);
    await agree('the path deleted');
    await s.create(base, { data: 'r3' });
    await agree('the path re-created');

    // NodeCache's history equals Curator's SINGLE_NODE_CACHE's.
    assert.deepEqual(nodeEvents, curatorLines(java.events(idNode)));
    assert.deepEqual(nodeEvents.map((l) => l.split(' ')[0]), ['created', 'changed', 'deleted', 'created']);

    await Promise.all([children.close(), node.close(), java.closeCache(idTree), java.closeCache(idNode)]);
    await s.deleteRecursive(base);
  });
});
