/**
 * The behaviour of the caches, as one suite run once per watch mode (persistent.test.ts and
 * one-shot.test.ts) on one standalone server per file: loading, following changes made in tight
 * loops by another session, events in zxid order per node, stats only, listeners that throw,
 * the async iterator's overflow, what close() leaves (nothing), session expiry, disconnects,
 * bad input, a start that times out, and the node and byte limits.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CacheLimitError,
  ChildrenCache,
  ClosedError,
  IllegalStateError,
  InvalidArgumentError,
  NodeCache,
  OperationTimeoutError,
  TreeCache,
  ZkSession,
  type CachedNode,
  type CacheEvent,
  type SessionOptions,
} from '../../src/index.js';
import { expireSession, waitFor, withTimeout, type ChaosProxy } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import {
  assertNoWrites,
  churn,
  copyOf,
  drain,
  EventLog,
  expectInSync,
  footprint,
  isTyped,
  KINDS,
  makeCache,
  serverWatchesOf,
  snapOf,
  treePlan,
  type AnyCache,
  type CacheKind,
} from './support.js';

/** The watch modes a suite runs in. */
export type SuiteMode = 'persistent' | 'one-shot';

/** Seed of the writers; a failing run is replayed with ZK_TEST_SEED. */
const SEED = Number(process.env.ZK_TEST_SEED ?? Date.now() % 100_000);

/** Registers the whole suite, with every cache in `mode`, on a server of its own. */
export function cacheSuite(mode: SuiteMode): void {
  const fx = new ServerFixture();

  /** A fresh session for a cache (closed with the file's others). */
  async function session(options: SessionOptions = {}): Promise<ZkSession> {
    await fx.observer.mkdirp('/test');
    return fx.pool.connect(fx.server.connectString, options);
  }

  /** A session reaching the server only through a proxy of its own. */
  async function proxied(options: SessionOptions = {}): Promise<{ s: ZkSession; proxy: ChaosProxy }> {
    await fx.observer.mkdirp('/test');
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 2000, ...options });
    return { s, proxy };
  }

  /** Creates `paths` (parents first) with data `d:<name>`. */
  async function build(paths: readonly string[]): Promise<void> {
    for (const p of paths) await fx.observer.create(p, { data: `d:${p.slice(p.lastIndexOf('/') + 1)}` });
  }

  /** Waits until the server holds no data or persistent watch of `s` on `root` or under it. */
  async function noWatchesLeft(s: ZkSession, root: string): Promise<void> {
    await waitFor(async () => !(await serverWatchesOf(fx.server, s)).some((p) => p === root || p.startsWith(`${root}/`)), { timeoutMs: 10_000, message: `no server watch of the cache's session on ${root}` });
    await waitFor(() => s.activeWatchCount === 0, { timeoutMs: 10_000, message: `no watch held by the session (${s.activeWatchCount})` });
  }

  /** The watches mode promises for what `cache` holds: one persistent watch, or a data watch per node. */
  async function expectWatches(cache: AnyCache, kind: CacheKind, s: ZkSession, root: string): Promise<void> {
    await waitFor(
      async () => {
        const watched = await serverWatchesOf(fx.server, s);
        if (mode === 'persistent') return watched.length === 1 && watched[0] === root;
        const held = [...cache].map((n) => n.path);
        // One-shot: a data watch on every node held, an exists watch on an absent root (child
        // watches are not listed by wchc).
        const rootExists = (await fx.observer.exists(root)) !== null;
        const want = rootExists ? held : [root];
        return want.every((p) => watched.includes(p)) && watched.every((p) => p === root || p.startsWith(`${root}/`));
      },
      { timeoutMs: 10_000, message: `the ${mode} watches of the ${kind} cache on ${root}: ${JSON.stringify(await serverWatchesOf(fx.server, s))}` },
    );
  }

  describe(`caches (${mode} watches)`, () => {
    for (const kind of KINDS) {
      test(`${kind}: loads an absent root, an empty root and a small tree: initialized exactly once, equal to a fresh read, then follows the root's creation`, async () => {
        const s = await session();
        const base = uniquePath(`load-${kind}`);
        await fx.observer.mkdirp(base);
        const absent = `${base}/absent`;
        const empty = `${base}/empty`;
        const small = `${base}/small`;
        await build([empty, small, `${small}/a`, `${small}/a/x`, `${small}/a/y`, `${small}/b`]);
        for (const root of [absent, empty, small]) {
          const cache = makeCache(kind, s, root, { watchMode: mode });
          assert.equal(cache.state, 'LATENT');
          assert.equal(cache.watchMode, undefined);
          const log = new EventLog(cache);
          await cache.start({ timeoutMs: 10_000 });
          assert.equal(cache.state, 'SYNCED');
          assert.equal(cache.watchMode, mode);
          const expected = await expectInSync(cache, fx.observer, kind, root);
          // Everything loaded was announced before initialized.
          const init = log.entries.findIndex((e) => e.type === 'initialized');
          assert.equal(log.entries.slice(0, init).filter((e) => e.type === 'added').length, expected.nodes.size, `added before initialized: ${log.tail()}`);
          assert.equal(cache.size, expected.nodes.size);
          if (kind === 'node') assert.equal((cache as NodeCache).current === undefined, root === absent);
          // The cache's own path always has a list (empty for an absent root); a path not held has none.
          if (kind === 'tree') assert.deepEqual(cache.children(root), root === small ? ['a', 'b'] : []);
          assert.equal(cache.children(`${root}/not-held`), undefined);
          assert.deepEqual(cache.children(), cache.children(root));
          if (kind === 'children' && root === small) assert.deepEqual(cache.children(), ['a', 'b']);
          await expectWatches(cache, kind, s, root);
          log.check({ errors: 0 });
          await cache.close();
        }
        // The absent root, created later: the cache follows it, and initialized is not repeated.
        const cache = makeCache(kind, s, absent, { watchMode: mode });
        const log = new EventLog(cache);
        await cache.start({ timeoutMs: 10_000 });
        await build([absent, `${absent}/c`]);
        await fx.observer.setData(absent, 'later');
        await expectInSync(cache, fx.observer, kind, absent);
        await fx.observer.deleteRecursive(absent);
        await expectInSync(cache, fx.observer, kind, absent);
        assert.equal(cache.size, 0);
        log.check({ errors: 0 });
        assert.ok(log.count('added') > 0 && log.count('removed') > 0, log.tail());
        await cache.close();
        assertNoWrites(s);
        await fx.observer.deleteRecursive(base);
      });
    }

    test('three caches (tree, children, node), each on its own session, follow another session creating, setting, deleting and re-creating in tight loops: per-node events in zxid order without duplicates, final state equal to a fresh read', async () => {
      const root = uniquePath('churn');
      await fx.observer.mkdirp(root);
      const caches: { kind: CacheKind; path: string; cache: AnyCache; log: EventLog; s: ZkSession; maxDepth?: number }[] = [];
      for (const [kind, path, maxDepth] of [['tree', root], ['children', root], ['node', `${root}/a`], ['tree', root, 1]] as const) {
        const s = await session();
        const cache = makeCache(kind, s, path, { watchMode: mode, ...(maxDepth !== undefined && { maxDepth }) });
        caches.push({ kind, path, cache, log: new EventLog(cache), s, ...(maxDepth !== undefined && { maxDepth }) });
      }
      await Promise.all(caches.map(({ cache }) => cache.start({ timeoutMs: 10_000 })));
      const seed = SEED;
      const applied = await churn(fx.observer, treePlan(root, seed, 150, 4));
      assert.ok(applied > 200, `writes applied: ${applied}`);
      for (const { kind, path, cache, log, s, maxDepth } of caches) {
        await expectInSync(cache, fx.observer, kind, path, maxDepth === undefined ? {} : { maxDepth });
        log.check({ errors: 0 });
        assert.ok(log.count('changed') + log.count('removed') > 0, `the ${kind} cache saw changes (seed ${seed})`);
        if (maxDepth === 1) assert.ok([...cache].every((n) => n.path.split('/').length <= root.split('/').length + 1), 'maxDepth 1 holds the root and its children only');
        assertNoWrites(s);
        await cache.close();
      }
      await fx.observer.deleteRecursive(root);
    });

    test('three caches on one session follow the same tight loops, and closing one leaves the others working', async () => {
      const s = await session();
      const root = uniquePath('churn-shared');
      await fx.observer.mkdirp(root);
      const specs = [
        { kind: 'tree', path: root },
        { kind: 'children', path: root },
        { kind: 'node', path: `${root}/b` },
      ] as const;
      const caches = specs.map(({ kind, path }) => {
        const cache = makeCache(kind, s, path, { watchMode: mode });
        return { kind, path, cache, log: new EventLog(cache) };
      });
      await Promise.all(caches.map(({ cache }) => cache.start({ timeoutMs: 10_000 })));
      await churn(fx.observer, treePlan(root, SEED + 1, 100, 4));
      for (const { kind, path, cache, log } of caches) {
        await expectInSync(cache, fx.observer, kind, path);
        log.check({ errors: 0 });
      }
      // The children cache goes; the others still follow.
      const [tree, children, node] = caches;
      assert.ok(tree && children && node);
      await children.cache.close();
      await churn(fx.observer, treePlan(root, SEED + 2, 60, 3));
      await fx.observer.mkdirp(`${root}/b`);
      await fx.observer.setData(`${root}/b`, 'last');
      for (const { kind, path, cache, log } of [tree, node]) {
        await expectInSync(cache, fx.observer, kind, path);
        log.check({ errors: 0 });
      }
      await tree.cache.close();
      await node.cache.close();
      await noWatchesLeft(s, root);
      assertNoWrites(s);
      await fx.observer.deleteRecursive(root);
    });

    test('cacheData: false keeps stats only, in the copy and in events, and still follows data changes', async () => {
      const root = uniquePath('stats-only');
      await build([root, `${root}/a`, `${root}/a/x`, `${root}/b`]);
      for (const kind of KINDS) {
        const s = await session();
        const cache = makeCache(kind, s, kind === 'node' ? `${root}/a` : root, { watchMode: mode, cacheData: false });
        const log = new EventLog(cache);
        await cache.start({ timeoutMs: 10_000 });
        await fx.observer.setData(`${root}/a`, 'new data');
        await fx.observer.setData(`${root}/b`, 'more data');
        await fx.observer.create(`${root}/c`, { data: 'c' });
        const path = kind === 'node' ? `${root}/a` : root;
        await expectInSync(cache, fx.observer, kind, path, { withData: false });
        assert.ok([...cache].every((n) => n.data === undefined), 'no data held');
        assert.ok(log.entries.every((e) => !('node' in e) || (e.node.data === undefined && (e.type !== 'changed' || e.previous.data === undefined))), 'no data in events');
        assert.ok(log.count('changed') >= 1, `the data changes were seen: ${log.tail()}`);
        log.check({ errors: 0 });
        await cache.close();
        await fx.observer.delete(`${root}/c`);
      }
      await fx.observer.deleteRecursive(root);
    });

    test('a listener that throws is reported as an error event and breaks neither the cache nor the other listeners', async () => {
      const s = await session();
      const root = uniquePath('throwing-listener');
      await build([root, `${root}/a`]);
      const cache = makeCache('tree', s, root, { watchMode: mode });
      const log = new EventLog(cache);
      const bug = new Error('listener bug');
      cache.on('added', () => {
        throw bug;
      });
      cache.on('changed', () => {
        throw bug;
      });
      const after: string[] = [];
      cache.on('added', (n) => after.push(`added ${n.path}`));
      cache.on('changed', (n) => after.push(`changed ${n.path}`));
      await cache.start({ timeoutMs: 10_000 });
      await fx.observer.create(`${root}/b`);
      await fx.observer.setData(`${root}/a`, 'x');
      await waitFor(() => after.length === 4, { timeoutMs: 10_000, message: `the listeners after the throwing one: ${JSON.stringify(after)}` });
      assert.deepEqual(after.sort(), [`added ${root}`, `added ${root}/a`, `added ${root}/b`, `changed ${root}/a`].sort());
      const errors = log.errors();
      assert.equal(errors.length, 4, `an error event per throw: ${errors.map((e) => e.message).join('; ')}`);
      assert.ok(errors.every((e) => e === bug || (e as Error & { cause?: unknown }).cause === bug), 'the error events carry what the listener threw');
      assert.equal(cache.state, 'SYNCED');
      await expectInSync(cache, fx.observer, 'tree', root);
      log.check({ errors: 4 });
      await cache.close();
      await fx.observer.deleteRecursive(root);
    });

    test('events(): a snapshot first on request; a slow consumer overflows into a snapshot and, replayed, equals the cache; the iterator ends at close', async () => {
      const s = await session();
      const root = uniquePath('iterator');
      await build([root, `${root}/a`, `${root}/b`]);
      const cache = makeCache('tree', s, root, { watchMode: mode });
      const early = cache.events();
      await cache.start({ timeoutMs: 10_000 });
      // From before start: the load, then initialized.
      const loaded = await drain(early, (items) => items.some((i) => i.type === 'initialized'));
      assert.deepEqual(loaded.map((i) => (i.type === 'added' ? i.node.path : i.type)).sort(), [root, `${root}/a`, `${root}/b`, 'initialized'].sort());
      assert.equal(loaded.at(-1)?.type, 'initialized');
      // return() from elsewhere ends a next() that is waiting.
      const idle = cache.events();
      const waitingNext = idle.next();
      await idle.return?.();
      assert.deepEqual(await withTimeout(waitingNext, 5000, 'the waiting next() to end'), { value: undefined, done: true });
      const withSnapshot = cache.events({ snapshot: true });
      const first = await withTimeout(withSnapshot.next(), 5000, 'the first item');
      assert.equal(first.done, false);
      assert.equal(first.value.type, 'snapshot');
      assert.deepEqual(first.value.type === 'snapshot' ? first.value.nodes.map((n: CachedNode) => n.path).sort() : [], [root, `${root}/a`, `${root}/b`].sort());
      // A slow consumer: nothing read while a burst of changes comes.
      const slow = cache.events({ bufferSize: 4 });
      await churn(fx.observer, treePlan(root, SEED + 3, 80, 4));
      const expected = await expectInSync(cache, fx.observer, 'tree', root);
      const replay = new Map<string, CachedNode>();
      let snapshots = 0;
      const apply = (item: CacheEvent): void => {
        if (item.type === 'snapshot') {
          snapshots++;
          replay.clear();
          for (const n of item.nodes) replay.set(n.path, n);
        } else if (item.type === 'added') {
          assert.ok(!replay.has(item.node.path), `added while held: ${item.node.path}`);
          replay.set(item.node.path, item.node);
        } else if (item.type === 'changed') {
          const was = replay.get(item.node.path);
          assert.ok(was && was.stat.mzxid === item.previous.stat.mzxid && item.node.stat.mzxid > was.stat.mzxid, `changed in order: ${item.node.path}`);
          replay.set(item.node.path, item.node);
        } else if (item.type === 'removed') {
          assert.equal(replay.get(item.node.path)?.stat.czxid, item.node.stat.czxid, `removed what was held: ${item.node.path}`);
          replay.delete(item.node.path);
        }
      };
      const same = (): boolean => replay.size === expected.nodes.size && [...expected.nodes].every(([p, snap]) => {
        const n = replay.get(p);
        return n !== undefined && snapOf(n).mzxid === snap.mzxid && snapOf(n).czxid === snap.czxid;
      });
      const items = await drain(slow, (got) => {
        const last = got.at(-1);
        if (last) apply(last);
        return got.length > 0 && same();
      });
      assert.equal(items[0]?.type, 'snapshot', `overflowed into a snapshot first: ${items.map((i) => i.type).join(' ')}`);
      assert.ok(snapshots >= 1, `overflowed: ${items.length} items, ${snapshots} snapshots`);
      await cache.close();
      // What came after the copy matched (a node created and deleted late, say) keeps it matching.
      for (const item of await drain(slow, () => false)) apply(item);
      assert.deepEqual([...replay.keys()].sort(), [...copyOf(cache, 'tree', root).nodes.keys()].sort());
      assert.ok(same(), 'the replay ends equal to the fresh read');
      assert.deepEqual(await withTimeout(slow.next(), 5000, 'the end of the slow iterator'), { value: undefined, done: true });
      assert.equal((await withTimeout(withSnapshot.next(), 5000, 'the snapshot iterator after close')).done, false, 'buffered items still come out');
      await drain(withSnapshot, () => false);
      // The first iterator kept every event of the burst; they come out, then it ends.
      const rest = await drain(early, () => false);
      assert.ok(rest.length > 0 && rest.every((i) => i.type !== 'snapshot'), 'the default buffer held the burst');
      assert.deepEqual(await early.next(), { value: undefined, done: true });
      await fx.observer.deleteRecursive(root);
    });

    for (const kind of KINDS) {
      test(`${kind}: close() leaves no server watch, no listener on the session and no node (also with await using, and when closed twice)`, async () => {
        const s = await session();
        const base = uniquePath(`close-${kind}`);
        const held = `${base}/held`;
        const absent = `${base}/absent`;
        await build([base, held, `${held}/a`, `${held}/a/x`]);
        const before = footprint(s);
        const watchesBefore = await fx.watchTotal();
        for (const root of [held, absent]) {
          const cache = makeCache(kind, s, root, { watchMode: mode });
          const it = cache.events();
          await cache.start({ timeoutMs: 10_000 });
          await expectWatches(cache, kind, s, root);
          await cache.close();
          assert.equal(cache.state, 'CLOSED');
          await cache.close();
          await drain(it, () => false);
          await noWatchesLeft(s, root);
        }
        {
          await using cache = makeCache(kind, s, held, { watchMode: mode });
          await cache.start({ timeoutMs: 10_000 });
          await expectWatches(cache, kind, s, held);
        }
        await noWatchesLeft(s, held);
        // Child watches show only in the server's count.
        await fx.waitWatchTotal(watchesBefore, 'back to the count before', 10_000);
        assert.deepEqual(footprint(s), before, 'listeners and watches of the session as before');
        assert.equal(await fx.observer.exists(absent), null, 'the absent root was not created');
        assertNoWrites(s);
        await fx.observer.deleteRecursive(base);
      });
    }

    test(`the server watches of each cache: ${mode === 'persistent' ? 'one persistent watch, on its path' : 'a data watch per node held, and a child watch per node whose children are held'}`, async () => {
      const root = uniquePath('watch-count');
      await build([root, `${root}/a`, `${root}/a/x`, `${root}/b`]);
      for (const kind of KINDS) {
        const s = await session();
        const before = await fx.watchTotal();
        const cache = makeCache(kind, s, root, { watchMode: mode });
        await cache.start({ timeoutMs: 10_000 });
        // One-shot: a tree of 4 nodes, a data and a child watch each; children: the root's child
        // watch and a data watch on a and b; node: a data watch. Persistent: the server counts a
        // persistent watch in its data and its child watch tables alike (2).
        const want = mode === 'persistent' ? 2 : { tree: 8, children: 1 + 2, node: 1 }[kind];
        await waitFor(async () => (await fx.watchTotal()) - before === want, { timeoutMs: 10_000, message: `${kind}: the server's watch count up by ${want} (${(await fx.watchTotal()) - before})` });
        if (mode === 'persistent') assert.deepEqual(await serverWatchesOf(fx.server, s), [root], 'one watch, on the root');
        await cache.close();
        await fx.waitWatchTotal(before, `${kind}: back to the count before`, 10_000);
      }
      await fx.observer.deleteRecursive(root);
    });

    test('a forced session expiry: sessionLost, then resynced with the copy equal to a fresh read, changes made while expired included', async () => {
      const { s, proxy } = await proxied({ sessionTimeoutMs: 3000 });
      const root = uniquePath('expiry');
      await build([root, `${root}/gone`, `${root}/same`, `${root}/same/k`, `${root}/set`]);
      const specs = [
        { kind: 'tree', path: root },
        { kind: 'children', path: root },
        { kind: 'node', path: `${root}/same` },
      ] as const;
      const caches = specs.map(({ kind, path }) => {
        const cache = makeCache(kind, s, path, { watchMode: mode });
        return { kind, path, cache, log: new EventLog(cache) };
      });
      await Promise.all(caches.map(({ cache }) => cache.start({ timeoutMs: 10_000 })));
      const before = caches.map(({ cache }) => cache.get(`${root}/same`)?.stat.czxid);
      const oldSession = s.sessionId;
      // Once the loss is known, the way back stays shut until the changes are made.
      const lost = new Promise<void>((resolve) => {
        const onState = (state: string): void => {
          if (state !== 'LOST') return;
          s.off('state', onState);
          proxy.reject(true);
          proxy.dropAll();
          resolve();
        };
        s.on('state', onState);
      });
      await expireSession(s, proxy);
      await withTimeout(lost, 5000, 'LOST');
      await fx.observer.delete(`${root}/gone`);
      await fx.observer.deleteRecursive(`${root}/same`);
      await build([`${root}/same`]); // back with the same version and data
      await fx.observer.setData(`${root}/set`, 'while expired');
      await build([`${root}/new`]);
      for (const { log } of caches) await log.waitCount('sessionLost', 1);
      for (const { cache } of caches) assert.notEqual(cache.state, 'SYNCED');
      proxy.reject(false);
      for (const { kind, path, cache, log } of caches) {
        await log.waitCount('resynced', 1);
        await expectInSync(cache, fx.observer, kind, path);
        log.check({ errors: 0 });
        assert.equal(log.count('sessionLost'), 1);
        // Deleted and re-created with the same version: removed, then added.
        const same = log.of(`${root}/same`);
        assert.deepEqual(same.map((e) => e.split(' ')[0]), ['added', 'removed', 'added'], `${kind}: ${same.join(', ')}`);
      }
      assert.notEqual(s.sessionId, oldSession);
      assert.ok(caches.every(({ cache }, i) => cache.get(`${root}/same`)?.stat.czxid !== before[i]));
      // The new session holds the watches now.
      const watched = await serverWatchesOf(fx.server, s);
      if (mode === 'persistent') assert.deepEqual(watched, [root, `${root}/same`].sort());
      else for (const p of [root, `${root}/same`, `${root}/set`, `${root}/new`]) assert.ok(watched.includes(p), `a data watch on ${p}: ${watched.join(' ')}`);
      for (const { cache } of caches) await cache.close();
      await noWatchesLeft(s, root);
      assertNoWrites(s);
      await fx.observer.deleteRecursive(root);
    });

    for (const outage of ['blackholed past the session timeout', 'dropped for a moment'] as const) {
      test(`a connection ${outage}: stale, then resynced; a node deleted and re-created with the same version gives removed + added, one deleted gives removed`, async () => {
        const { s, proxy } = await proxied({ sessionTimeoutMs: 2000 });
        const root = uniquePath('outage');
        const x = `${root}/x`;
        await build([root, x, `${root}/y`, `${root}/z`]);
        const specs = [
          { kind: 'tree', path: root },
          { kind: 'children', path: root },
          { kind: 'node', path: x },
          { kind: 'node', path: `${root}/y` },
        ] as const;
        const caches = specs.map(({ kind, path }) => {
          const cache = makeCache(kind, s, path, { watchMode: mode });
          return { kind, path, cache, log: new EventLog(cache) };
        });
        await Promise.all(caches.map(({ cache }) => cache.start({ timeoutMs: 10_000 })));
        const oldSession = s.sessionId;
        if (outage === 'blackholed past the session timeout') proxy.blackhole();
        else {
          proxy.reject(true);
          proxy.dropAll();
        }
        for (const { log } of caches) await log.waitCount('stale', 1);
        const [tree] = caches;
        assert.ok(tree);
        assert.equal(tree.cache.state, 'STALE');
        await assert.rejects(tree.cache.ready({ timeoutMs: 100 }), isTyped(OperationTimeoutError));
        await fx.observer.delete(x);
        await fx.observer.create(x, { data: 'd:x' }); // same data, same version 0: only the czxid differs
        await fx.observer.delete(`${root}/y`);
        await fx.observer.setData(`${root}/z`, 'changed');
        if (outage === 'blackholed past the session timeout') {
          for (const { log } of caches) await log.waitCount('sessionLost', 1);
          proxy.pass();
        } else proxy.reject(false);
        for (const { kind, path, cache, log } of caches) {
          await log.waitCount('resynced', 1);
          await expectInSync(cache, fx.observer, kind, path);
          log.check({ errors: 0 });
          if (path === root || path === x) assert.deepEqual(log.of(x).map((e) => e.split(' ')[0]), ['added', 'removed', 'added'], `${kind} on ${path}: ${log.of(x).join(', ')}`);
          if (path !== x) assert.deepEqual(log.of(`${root}/y`).map((e) => e.split(' ')[0]), ['added', 'removed'], `${kind} on ${path}: ${log.of(`${root}/y`).join(', ')}`);
          if (kind !== 'node') assert.deepEqual(log.of(`${root}/z`).map((e) => e.split(' ')[0]), ['added', 'changed']);
          assert.equal(log.count('sessionLost'), outage === 'dropped for a moment' ? 0 : 1);
        }
        if (outage === 'dropped for a moment') assert.equal(s.sessionId, oldSession, 'the same session');
        for (const { cache } of caches) await cache.close();
        await noWatchesLeft(s, root);
        assertNoWrites(s);
        await fx.observer.deleteRecursive(root);
      });
    }

    test('bad input: typed errors at construction and on misuse, nothing sent', async () => {
      const s = await session();
      const root = uniquePath('bad-input');
      const sent = (): number => {
        const c = s.counters;
        return c.exists + c.getData + c.getChildren + c.addWatch + c.sync;
      };
      const before = sent();
      const rows: [string, () => unknown][] = [];
      for (const kind of KINDS) {
        for (const path of ['', 'relative', '/trailing/', '/a//b', '/a/./b', '/zookeeper\u0000x', 42 as unknown as string, undefined as unknown as string]) rows.push([`${kind} on ${JSON.stringify(path)}`, () => makeCache(kind, s, path)]);
        rows.push([`${kind} with no session`, () => makeCache(kind, {} as ZkSession, root)]);
        for (const options of [{ cacheDta: false }, { concurrency: 0 }, { concurrency: 1.5 }, { concurrency: -1 }, { maxNodes: 0 }, { maxNodes: -5 }, { maxBytes: 0 }, { watchMode: 'sometimes' }, { cacheData: 'yes' }, { errorBackoff: { baseDelayMs: -1 } }, { errorBackoff: { baseDelay: 5 } }, { errorBackoff: { baseDelayMs: 500, maxDelayMs: 100 } }]) {
          rows.push([`${kind} with ${JSON.stringify(options)}`, () => makeCache(kind, s, root, options as never)]);
        }
      }
      rows.push(['tree with maxDepth -1', () => new TreeCache(s, root, { maxDepth: -1 })]);
      rows.push(['tree with maxDepth 0.5', () => new TreeCache(s, root, { maxDepth: 0.5 })]);
      rows.push(['children with maxDepth (a tree option)', () => new ChildrenCache(s, root, { maxDepth: 1 } as never)]);
      rows.push(['tree with maxDepht', () => new TreeCache(s, root, { maxDepht: 1 } as never)]);
      rows.push(['node with options "x"', () => new NodeCache(s, root, 'x' as never)]);
      for (const [what, fn] of rows) assert.throws(fn, isTyped(InvalidArgumentError), what);
      // The misspelled key is named with the one meant.
      assert.throws(() => makeCache('tree', s, root, { cacheDta: false } as never), /cacheData/);
      const cache = makeCache('tree', s, root, { watchMode: mode });
      await assert.rejects(async () => cache.start({ timeoutMs: -1 }), isTyped(InvalidArgumentError));
      await assert.rejects(async () => cache.start({ timeotMs: 100 } as never), isTyped(InvalidArgumentError));
      assert.throws(() => cache.events({ bufferSize: 0 }), isTyped(InvalidArgumentError));
      assert.throws(() => cache.events({ bufersize: 3 } as never), isTyped(InvalidArgumentError));
      assert.equal(cache.state, 'LATENT', 'refused options leave the cache unstarted');
      assert.equal(sent(), before, 'nothing sent for bad input');
      // Started twice: refused, while starting and once started.
      const starting = cache.start({ timeoutMs: 10_000 });
      await assert.rejects(async () => cache.start(), isTyped(IllegalStateError));
      await starting;
      await assert.rejects(async () => cache.start(), isTyped(IllegalStateError));
      await assert.rejects(async () => cache.ready({ timeoutMs: -1 }), isTyped(InvalidArgumentError));
      await assert.rejects(async () => cache.ready({ signal: 'now' } as never), isTyped(InvalidArgumentError));
      // Use after close.
      await cache.close();
      await assert.rejects(async () => cache.start(), isTyped(ClosedError));
      await assert.rejects(async () => cache.ready(), isTyped(ClosedError));
      assert.equal(cache.state, 'CLOSED');
      const late = makeCache('tree', s, root, { watchMode: mode });
      await late.close();
      await assert.rejects(async () => late.start(), isTyped(ClosedError), 'closed before it started');
      const unstarted = makeCache('node', s, root, { watchMode: mode });
      await assert.rejects(async () => unstarted.ready(), isTyped(IllegalStateError), 'ready() before start()');
      // A closed session.
      const gone = await session();
      await gone.close();
      await assert.rejects(async () => makeCache('tree', gone, root, { watchMode: mode }).start(), isTyped(ClosedError));
      assert.equal(await fx.observer.exists(root), null);
      assertNoWrites(s);
    });

    test('start() with timeoutMs against a blackholed server: OperationTimeoutError in time, the cache closed, nothing left behind once the server is reached again; an abort rejects with its reason', async () => {
      const { s, proxy } = await proxied({ sessionTimeoutMs: 10_000 });
      const root = uniquePath('start-timeout');
      await build([root, `${root}/a`]);
      const before = footprint(s);
      proxy.blackhole();
      const cache = makeCache('tree', s, root, { watchMode: mode });
      const log = new EventLog(cache);
      const t0 = performance.now();
      await assert.rejects(cache.start({ timeoutMs: 300 }), isTyped(OperationTimeoutError));
      const took = performance.now() - t0;
      assert.ok(took >= 290 && took < 3000, `rejected after ${Math.round(took)} ms`);
      assert.equal(cache.state, 'CLOSED');
      const aborted = makeCache('children', s, root, { watchMode: mode });
      const ac = new AbortController();
      const reason = new Error('given up');
      const starting = aborted.start({ signal: ac.signal });
      setImmediate(() => ac.abort(reason));
      await assert.rejects(starting, (e: unknown) => e === reason);
      assert.equal(aborted.state, 'CLOSED');
      // What was held in the blackhole now reaches the server: whatever it set is taken back.
      proxy.pass();
      await s.sync(root);
      await noWatchesLeft(s, root);
      assert.deepEqual(footprint(s), before, 'listeners and watches as before');
      assert.equal(log.count('initialized'), 0);
      assert.deepEqual(log.entries.map((e) => `${e.type} in ${e.state}`), [], 'nothing announced by a cache that never started (nor after it closed)');
      assert.equal(cache.size, 0, 'nothing read into a closed cache');
      assert.equal(s.state === 'CONNECTED' || s.state === 'RECONNECTED', true);
      assertNoWrites(s);
      await fx.observer.deleteRecursive(root);
    });

    test('maxNodes or maxBytes crossed, at load or later: CacheLimitError as an error event, the cache CLOSED, its watches removed, its iterator ended', async () => {
      const s = await session();
      const root = uniquePath('limits');
      await build([root, `${root}/a`, `${root}/b`, `${root}/c`]);
      // At load: start() rejects with it too.
      for (const options of [{ maxNodes: 3 }, { maxBytes: 40 }]) {
        const cache = makeCache('tree', s, root, { watchMode: mode, ...options });
        const log = new EventLog(cache);
        await assert.rejects(cache.start({ timeoutMs: 10_000 }), isTyped(CacheLimitError));
        assert.equal(cache.state, 'CLOSED');
        assert.ok(log.errors().some((e) => e instanceof CacheLimitError), `the error event: ${log.tail()}`);
        assert.equal(log.count('initialized'), 0);
        await noWatchesLeft(s, root);
      }
      // Later: a tree that grows past maxNodes (4 held, 7 after), children past maxNodes (the tree's
      // run leaves six, 8 after), a node whose data grows past maxBytes.
      const runs = [
        { kind: 'tree', path: root, options: { maxNodes: 6 }, grow: async () => build([`${root}/d`, `${root}/e`, `${root}/f`]) },
        { kind: 'children', path: root, options: { maxNodes: 7 }, grow: async () => build([`${root}/g`, `${root}/h`]) },
        { kind: 'node', path: `${root}/a`, options: { maxBytes: 200 }, grow: async () => void (await fx.observer.setData(`${root}/a`, 'x'.repeat(500))) },
      ] as const;
      for (const { kind, path, options, grow } of runs) {
        const cache = makeCache(kind, s, path, { watchMode: mode, ...options });
        const log = new EventLog(cache);
        await cache.start({ timeoutMs: 10_000 });
        const it = cache.events();
        await grow();
        await log.waitCount('error', 1);
        assert.ok(log.errors()[0] instanceof CacheLimitError, `${kind}: ${log.tail()}`);
        await waitFor(() => cache.state === 'CLOSED', { timeoutMs: 5000, message: `${kind} cache closed` });
        await drain(it, () => false);
        await noWatchesLeft(s, root);
        // Waits reject with the error that closed it.
        await assert.rejects(cache.ready(), isTyped(CacheLimitError));
      }
      assertNoWrites(s);
      await fx.observer.deleteRecursive(root);
    });
  });
}
