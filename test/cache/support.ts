/**
 * Shared helpers of the cache tests: the three kinds of cache behind one interface, what each
 * should hold read fresh from the server, an event log with the per-node order checks the
 * caches promise, writers that change a tree in tight loops, and leftover checks (server
 * watches, listeners, writes).
 */
import assert from 'node:assert/strict';
import { ChildrenCache, ConnectionLossError, NoNodeError, SessionExpiredError, NodeCache, NodeExistsError, NotEmptyError, TreeCache, ZkRecipesError, type CachedNode, type CacheEvent, type CacheOptions, type CacheState, type TreeCacheOptions, type ZkSession } from '../../src/index.js';
import { SeededRandom, waitFor } from '../../src/testing/index.js';

/** Any of the three caches. */
export type AnyCache = TreeCache | ChildrenCache | NodeCache;

/** The three kinds of cache. */
export type CacheKind = 'tree' | 'children' | 'node';

/** Every kind, for loops over them. */
export const KINDS: readonly CacheKind[] = ['tree', 'children', 'node'];

/** A cache of `kind` on `path`. */
export function makeCache(kind: CacheKind, session: ZkSession, path: string, options: TreeCacheOptions = {}): AnyCache {
  if (kind === 'tree') return new TreeCache(session, path, options);
  const { maxDepth, ...rest } = options;
  assert.equal(maxDepth, undefined, 'maxDepth is for a tree cache only');
  return kind === 'children' ? new ChildrenCache(session, path, rest as CacheOptions) : new NodeCache(session, path, rest as CacheOptions);
}

/** What the tests compare of a node: what moves with its data, and the data. */
export interface Snap {
  czxid: bigint;
  mzxid: bigint;
  version: number;
  dataLength: number;
  ephemeralOwner: bigint;
  /** Hex of the data; undefined when the cache keeps stats only. */
  data: string | undefined;
}

/** The comparable part of a held node. */
export function snapOf(node: CachedNode): Snap {
  const { czxid, mzxid, version, dataLength, ephemeralOwner } = node.stat;
  return { czxid, mzxid, version, dataLength, ephemeralOwner, data: node.data?.toString('hex') };
}

/** What a cache holds: node snaps by path, and (tree and children caches) child names by held parent. */
export interface Copy {
  nodes: Map<string, Snap>;
  children: Map<string, string[]>;
}

/** The path of child `name` of `parent`. */
function joinChild(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

/** Data and stat of `path`, or undefined when it does not exist. */
async function readNode(session: ZkSession, path: string, withData: boolean): Promise<Snap | undefined> {
  try {
    const { data, stat } = await session.getData(path);
    const { czxid, mzxid, version, dataLength, ephemeralOwner } = stat;
    return { czxid, mzxid, version, dataLength, ephemeralOwner, data: withData ? data.toString('hex') : undefined };
  } catch (err) {
    if (err instanceof NoNodeError) return undefined;
    throw err;
  }
}

/** Sorted child names of `path`, or undefined when it does not exist. */
async function readChildren(session: ZkSession, path: string): Promise<string[] | undefined> {
  try {
    return (await session.getChildren(path)).children.sort();
  } catch (err) {
    if (err instanceof NoNodeError) return undefined;
    throw err;
  }
}

/** Options of {@link freshRead}. */
export interface FreshReadOptions {
  /** False: data is left out, as a cache with `cacheData: false` holds it. */
  withData?: boolean;
  /** A tree cache's `maxDepth`. */
  maxDepth?: number;
  /** Reads in flight at once (default 256). */
  concurrency?: number;
}

/**
 * What a cache of `kind` on `root` should hold, read now from the server by `session` after a
 * `sync` (so it is at least as new as every write acknowledged before). The tree must not change
 * while it is read.
 */
export async function freshRead(session: ZkSession, kind: CacheKind, root: string, options: FreshReadOptions = {}): Promise<Copy> {
  const withData = options.withData ?? true;
  const maxDepth = options.maxDepth ?? Infinity;
  const width = options.concurrency ?? 256;
  await session.sync(root);
  const nodes = new Map<string, Snap>();
  const children = new Map<string, string[]>();
  if (kind === 'node') {
    const snap = await readNode(session, root, withData);
    if (snap) nodes.set(root, snap);
    return { nodes, children };
  }
  if (kind === 'children') {
    const names = await readChildren(session, root);
    if (names === undefined) return { nodes, children };
    children.set(root, names);
    await inBatches(names, width, async (name) => {
      const p = joinChild(root, name);
      const snap = await readNode(session, p, withData);
      assert.ok(snap, `${p} vanished during a fresh read: the tree must be still`);
      nodes.set(p, snap);
    });
    return { nodes, children };
  }
  let level: { path: string; depth: number }[] = [{ path: root, depth: 0 }];
  while (level.length > 0) {
    const next: { path: string; depth: number }[] = [];
    await inBatches(level, width, async ({ path, depth }) => {
      const snap = await readNode(session, path, withData);
      if (!snap) {
        assert.equal(path, root, `${path} vanished during a fresh read: the tree must be still`);
        return;
      }
      nodes.set(path, snap);
      if (depth >= maxDepth) {
        children.set(path, []);
        return;
      }
      const names = (await readChildren(session, path)) ?? [];
      children.set(path, names);
      for (const name of names) next.push({ path: joinChild(path, name), depth: depth + 1 });
    });
    level = next;
  }
  return { nodes, children };
}

/** Runs `fn` over `items`, at most `width` at once. */
export async function inBatches<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let i = 0;
  const worker = async (): Promise<void> => {
    while (i < items.length) {
      const item = items[i++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

/** What `cache` holds now, in the shape of {@link freshRead}. */
export function copyOf(cache: AnyCache, kind: CacheKind, root: string): Copy {
  const nodes = new Map<string, Snap>();
  for (const node of cache) nodes.set(node.path, snapOf(node));
  const children = new Map<string, string[]>();
  if (kind === 'tree') {
    for (const path of nodes.keys()) children.set(path, cache.children(path) ?? ['<undefined>']);
  } else if (kind === 'children') {
    const names = cache.children(root);
    if (names !== undefined && (names.length > 0 || nodes.size > 0 || cache.state !== 'CLOSED')) children.set(root, names);
  }
  return { nodes, children };
}

/** Sorted entries, for a readable deepEqual. */
function sorted<V>(map: Map<string, V>): [string, V][] {
  return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The nodes of two copies are equal (and for tree caches, the child lists). */
export function copiesEqual(a: Copy, b: Copy, kind: CacheKind): boolean {
  if (a.nodes.size !== b.nodes.size) return false;
  for (const [path, snap] of a.nodes) {
    const other = b.nodes.get(path);
    if (!other || !snapEqual(snap, other)) return false;
  }
  if (kind === 'tree') {
    for (const [path, names] of a.children) if ((b.children.get(path) ?? []).join('/') !== names.join('/')) return false;
  }
  return true;
}

function snapEqual(a: Snap, b: Snap): boolean {
  return a.czxid === b.czxid && a.mzxid === b.mzxid && a.version === b.version && a.dataLength === b.dataLength && a.ephemeralOwner === b.ephemeralOwner && a.data === b.data;
}

/** Asserts the copies are equal, with a readable difference. */
export function assertCopiesEqual(actual: Copy, expected: Copy, kind: CacheKind, what: string): void {
  if (copiesEqual(actual, expected, kind)) return;
  const show = (c: Copy): unknown => ({
    nodes: sorted(c.nodes).map(([p, s]) => `${p} c${s.czxid} m${s.mzxid} v${s.version} ${s.data ?? '-'}`),
    ...(kind === 'tree' && { children: sorted(c.children).map(([p, n]) => `${p}: ${n.join(',')}`) }),
  });
  assert.deepEqual(show(actual), show(expected), what);
  assert.fail(`${what}: copies differ`);
}

/**
 * Waits until `cache` holds exactly what a fresh read of the server gives (the tree still), then
 * waits for `ready()` and checks again: the final state after `ready` equals the fresh read.
 */
export async function expectInSync(cache: AnyCache, reader: ZkSession, kind: CacheKind, root: string, options: FreshReadOptions & { timeoutMs?: number } = {}): Promise<Copy> {
  const { timeoutMs = 15_000, ...readOptions } = options;
  const expected = await freshRead(reader, kind, root, readOptions);
  await waitFor(() => copiesEqual(copyOf(cache, kind, root), expected, kind), { timeoutMs, message: `the ${kind} cache on ${root} equal to a fresh read (it holds ${cache.size}, the server ${expected.nodes.size}; state ${cache.state})` }).catch(
    (err: unknown) => {
      assertCopiesEqual(copyOf(cache, kind, root), expected, kind, `the ${kind} cache on ${root} after ${timeoutMs} ms`);
      throw err;
    },
  );
  await cache.ready({ timeoutMs });
  assert.equal(cache.state, 'SYNCED');
  assertCopiesEqual(copyOf(cache, kind, root), expected, kind, `the ${kind} cache on ${root} after ready()`);
  if (kind === 'node') {
    const current = (cache as NodeCache).current;
    assert.deepEqual(current && snapOf(current), expected.nodes.get(root), 'NodeCache.current');
  }
  for (const [path, snap] of expected.nodes) assert.deepEqual(snapOf(cache.get(path) ?? assert.fail(`get(${path})`)), snap, `get(${path})`);
  return expected;
}

/** One entry of an {@link EventLog}. */
export type Logged =
  | { type: 'added' | 'removed'; node: CachedNode; state: CacheState }
  | { type: 'changed'; node: CachedNode; previous: CachedNode; state: CacheState }
  | { type: 'initialized' | 'resynced' | 'stale'; state: CacheState }
  | { type: 'sessionLost' | 'error'; error: Error; state: CacheState };

/**
 * Everything a cache emits, in order, with the cache's state at each event. Attach before
 * `start()`: {@link EventLog.check} then replays the log and compares it with the cache.
 */
export class EventLog {
  readonly entries: Logged[] = [];

  /** Listens to every event of `cache`. */
  constructor(readonly cache: AnyCache) {
    cache.on('added', (node) => this.entries.push({ type: 'added', node, state: cache.state }));
    cache.on('changed', (node, previous) => this.entries.push({ type: 'changed', node, previous, state: cache.state }));
    cache.on('removed', (node) => this.entries.push({ type: 'removed', node, state: cache.state }));
    cache.on('initialized', () => this.entries.push({ type: 'initialized', state: cache.state }));
    cache.on('resynced', () => this.entries.push({ type: 'resynced', state: cache.state }));
    cache.on('stale', () => this.entries.push({ type: 'stale', state: cache.state }));
    cache.on('sessionLost', (error) => this.entries.push({ type: 'sessionLost', error, state: cache.state }));
    cache.on('error', (error) => this.entries.push({ type: 'error', error, state: cache.state }));
  }

  /** How many events of `type` came. */
  count(type: Logged['type']): number {
    return this.entries.filter((e) => e.type === type).length;
  }

  /** The errors emitted. */
  errors(): Error[] {
    return this.entries.flatMap((e) => (e.type === 'error' ? [e.error] : []));
  }

  /** Resolves once `n` events of `type` came in all (rejects after `timeoutMs`). */
  async waitCount(type: Logged['type'], n: number, timeoutMs = 15_000): Promise<void> {
    await waitFor(() => this.count(type) >= n, { timeoutMs, message: `${n} '${type}' events of the cache (got ${this.count(type)}; state ${this.cache.state}): ${this.tail()}` });
  }

  /** The node events of `path`, as `added c.. m..` strings. */
  of(path: string): string[] {
    return this.entries.flatMap((e) => (e.type === 'added' || e.type === 'changed' || e.type === 'removed') && e.node.path === path ? [`${e.type} c${e.node.stat.czxid} m${e.node.stat.mzxid}`] : []);
  }

  /** The last entries, for messages. */
  tail(n = 12): string {
    return this.entries
      .slice(-n)
      .map((e) => ('node' in e ? `${e.type} ${e.node.path} c${e.node.stat.czxid} m${e.node.stat.mzxid}` : 'error' in e ? `${e.type} ${e.error.name}: ${e.error.message}` : e.type))
      .join(' | ');
  }

  /**
   * Checks what the caches promise of their events: per node, in zxid order and without a
   * duplicate (an `added` only for a node not held, with a czxid above every earlier one of
   * that path; a `changed` only when the mzxid moves up, its `previous` being what was held; a
   * `removed` of what was held); `initialized` exactly once (unless `initialized: false`);
   * and the log replayed equals what the cache holds now.
   */
  check(options: { initialized?: number; errors?: number } = {}): void {
    const held = new Map<string, CachedNode>();
    const lastCzxid = new Map<string, bigint>();
    for (const [i, e] of this.entries.entries()) {
      // The message is built only for a failure: the node's events are a scan of the whole log.
      const need = (ok: boolean, why: string): void => {
        if (!ok) assert.fail(`${why}: event ${i} (${e.type}${'node' in e ? ` ${e.node.path}` : ''}, cache state ${e.state}); the node's events: ${'node' in e ? this.of(e.node.path).join(', ') : '-'}`);
      };
      // A closed cache follows nothing: only the error that closed it may come as it closes.
      need(e.type === 'error' || e.state !== 'CLOSED', 'an event from a closed cache');
      if (e.type === 'added') {
        need(!held.has(e.node.path), 'added while held');
        const before = lastCzxid.get(e.node.path);
        need(before === undefined || e.node.stat.czxid > before, 'added with a czxid not above the last one');
        need(e.node.stat.mzxid >= e.node.stat.czxid, 'mzxid below czxid');
        held.set(e.node.path, e.node);
        lastCzxid.set(e.node.path, e.node.stat.czxid);
      } else if (e.type === 'changed') {
        const was = held.get(e.node.path);
        if (!was) return need(false, 'changed while not held');
        // What was held: the last announced node, or a silent refresh of it (its children's
        // counters moved, its data did not).
        need(e.previous.stat.czxid === was.stat.czxid && e.previous.stat.mzxid === was.stat.mzxid, 'changed: previous is not what was held');
        need(e.node.stat.czxid === was.stat.czxid, 'changed across a re-creation (should be removed + added)');
        need(e.node.stat.mzxid > was.stat.mzxid, 'changed without the mzxid moving up');
        need(e.node.stat.version > was.stat.version, 'changed without the version moving up');
        held.set(e.node.path, e.node);
      } else if (e.type === 'removed') {
        const was = held.get(e.node.path);
        if (!was) return need(false, 'removed while not held');
        need(e.node.stat.czxid === was.stat.czxid, 'removed another incarnation than held');
        held.delete(e.node.path);
      } else if (e.type === 'initialized' || e.type === 'resynced') {
        need(e.state === 'SYNCED', 'not SYNCED at the event');
      } else if (e.type === 'stale' || e.type === 'sessionLost') {
        need(e.state !== 'SYNCED', 'SYNCED at the event');
      }
    }
    assert.equal(this.count('initialized'), options.initialized ?? 1, `initialized exactly ${options.initialized ?? 1} time(s)`);
    const firstInit = this.entries.findIndex((e) => e.type === 'initialized');
    const firstResync = this.entries.findIndex((e) => e.type === 'resynced');
    assert.ok(firstResync === -1 || firstResync > firstInit, 'resynced before initialized');
    if (options.errors !== undefined) assert.equal(this.errors().length, options.errors, `errors: ${this.errors().map((e) => e.message).join('; ')}`);
    if (this.cache.state !== 'CLOSED') {
      const replay = new Map([...held].map(([p, n]) => [p, snapOf(n)]));
      const now = new Map([...this.cache].map((n) => [n.path, snapOf(n)]));
      assert.deepEqual(sorted(replay), sorted(now), 'the events replayed equal what the cache holds');
    }
  }
}

/** Paths a writer works on under `root`: a small fixed tree so that operations collide. */
export interface WriterPlan {
  /** Paths written, parents before children. */
  paths: readonly string[];
  /** Ops per worker. */
  ops: number;
  /** Workers at once. */
  workers: number;
  /** Seed of the choices. */
  seed: number;
  /** When given, workers go on past `ops` until it aborts. */
  until?: AbortSignal;
  /** Counts the writes applied as they are (for a caller waiting for progress). */
  progress?: { applied: number };
  /** Connection losses (and a lost session) are taken as "not known whether applied", and the loop goes on: on an ensemble whose members are killed. */
  tolerateLoss?: boolean;
}

/** The default plan: three top nodes with three children each, the root itself excluded. */
export function treePlan(root: string, seed: number, ops = 120, workers = 4): WriterPlan {
  const paths: string[] = [];
  for (const a of ['a', 'b', 'c']) {
    paths.push(`${root}/${a}`);
    for (const b of ['x', 'y', 'z']) paths.push(`${root}/${a}/${b}`);
  }
  return { paths, ops, workers, seed };
}

/**
 * Creates, sets, deletes and re-creates nodes of `plan` in tight loops from `workers` workers at
 * once (each op awaited, no pause), ignoring the races between workers (a node created or deleted
 * under another's feet). Re-creations reuse the data, so a node can come back with the same
 * version and data and differ only in its czxid. Resolves to the number of writes applied.
 */
export async function churn(session: ZkSession, plan: WriterPlan): Promise<number> {
  const random = new SeededRandom(plan.seed);
  let applied = 0;
  const worker = async (): Promise<void> => {
    for (let i = 0; plan.until ? !plan.until.aborted : i < plan.ops; i++) {
      const path = random.pick(plan.paths);
      const what = random.weighted({ create: 3, set: 4, delete: 2, recreate: 2 });
      try {
        if (what === 'create') await session.create(path, { data: 'v' });
        else if (what === 'set') await session.setData(path, `d${random.int(0, 3)}`);
        else if (what === 'delete') await session.delete(path);
        else {
          await session.delete(path);
          applied++;
          if (plan.progress) plan.progress.applied++;
          await session.create(path, { data: 'v' });
        }
        applied++;
        if (plan.progress) plan.progress.applied++;
      } catch (err) {
        if (err instanceof NoNodeError || err instanceof NodeExistsError || err instanceof NotEmptyError) continue;
        if (plan.tolerateLoss && (err instanceof ConnectionLossError || err instanceof SessionExpiredError)) continue;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: plan.workers }, worker));
  return applied;
}

/** What a session holds that a cache may leave behind: listeners and watches. */
export interface SessionFootprint {
  listeners: Record<string, number>;
  activeWatchCount: number;
}

/** The listeners on `session` by event name, and its active watches. */
export function footprint(session: ZkSession): SessionFootprint {
  const listeners: Record<string, number> = {};
  for (const name of ['state', 'session', 'error'] as const) listeners[name] = session.listenerCount(name);
  return { listeners, activeWatchCount: session.activeWatchCount };
}

/** The paths the server holds data (and persistent) watches on for `session` (wchc). */
export async function serverWatchesOf(server: { watchesBySession(): Promise<Map<string, string[]>> }, session: ZkSession): Promise<string[]> {
  return ((await server.watchesBySession()).get(`0x${session.sessionId.toString(16)}`) ?? []).sort();
}

/** Asserts `session` never sent a write: a cache never creates (or changes) a node. */
export function assertNoWrites(session: ZkSession, what = 'the cache'): void {
  const { create, delete: del, setData, multi } = session.counters;
  assert.deepEqual({ create, delete: del, setData, multi }, { create: 0, delete: 0, setData: 0, multi: 0 }, `${what} sent no write`);
}

/** Asserts `err` is a zk-recipes error of `type` (a typed error with a code). */
export function isTyped<T extends ZkRecipesError>(type: abstract new (...args: never[]) => T): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof type, `expected a ${type.name}, got ${String(err)}`);
    assert.equal(typeof (err as ZkRecipesError).code, 'string');
    return true;
  };
}

/** Collects a cache's iterator into an array until `stop` says so or it ends. */
export async function drain(iterator: AsyncIterableIterator<CacheEvent>, stop: (items: CacheEvent[]) => boolean, timeoutMs = 10_000): Promise<CacheEvent[]> {
  const items: CacheEvent[] = [];
  const deadline = performance.now() + timeoutMs;
  while (!stop(items)) {
    const left = Math.max(1, deadline - performance.now());
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      iterator.next(),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), left);
      }),
    ]).finally(() => clearTimeout(timer));
    if (next === 'timeout') throw new Error(`the iterator gave ${items.length} items in ${timeoutMs} ms, not what was awaited: ${items.map((i) => i.type).join(' ')}`);
    if (next.done) break;
    items.push(next.value);
  }
  return items;
}
