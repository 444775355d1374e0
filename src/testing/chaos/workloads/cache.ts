/**
 * The cache workload: writers create, change, delete and re-create nodes of a small subtree
 * (so versions repeat across incarnations), and readers run caches on it (tree caches in both
 * watch modes, a children cache, node caches), recording every event they emit. At the end each
 * cache, once SYNCED, is compared with a fresh read of the server.
 *
 * @internal
 * @module
 */
import { ChildrenCache, NodeCache, TreeCache, type Cache, type CachedNode, type CacheWatchMode } from '../../../cache/index.js';
import type { ZkSession } from '../../../client/session.js';
import { BadVersionError, ConnectionLossError, NodeExistsError, NoNodeError, NotEmptyError } from '../../../errors.js';
import { expectedNodes, sameNodes } from '../checker/cache.js';
import type { CacheKind, CacheNodeRecord } from '../history.js';
import { errorText, inFlows, pause, type FlowContext, type WorkloadContext } from './common.js';

/**
 * The subtree the writers work on, relative to the workload's path: nodes at three depths, so a
 * directory's delete fails while it has children, and its children's creates while it is gone.
 */
const PATHS = ['k0', 'k1', 'k2', 'k3', 'd0', 'd0/k0', 'd0/k1', 'd1', 'd1/k0', 'd1/d2', 'd1/d2/k0'] as const;

/** The caches a reader runs: even readers the first set, odd ones the second, a lone client both. */
interface CachePlan {
  label: string;
  kind: CacheKind;
  /** Relative to the workload's path ('' for the path itself). */
  at: string;
  watchMode: CacheWatchMode;
  cacheData: boolean;
}
const READER_SETS: readonly (readonly CachePlan[])[] = [
  [
    { label: 'tree', kind: 'tree', at: '', watchMode: 'auto', cacheData: true },
    { label: 'children', kind: 'children', at: '', watchMode: 'auto', cacheData: true },
    { label: 'node-k0', kind: 'node', at: 'k0', watchMode: 'auto', cacheData: true },
  ],
  [
    { label: 'tree-one-shot', kind: 'tree', at: '', watchMode: 'one-shot', cacheData: true },
    { label: 'children-d1-one-shot', kind: 'children', at: 'd1', watchMode: 'one-shot', cacheData: true },
    { label: 'node-d0-k0-stats', kind: 'node', at: 'd0/k0', watchMode: 'auto', cacheData: false },
  ],
];

/** Writers, readers, or both, as the plan gave this client. */
export async function cacheWorkload(ctx: WorkloadContext): Promise<void> {
  const role = ctx.role ?? 'both';
  const index = Number(/-(\d+)$/.exec(ctx.name)?.[1] ?? '1');
  const sets = role === 'both' ? READER_SETS : [READER_SETS[index % 2] ?? []];
  await Promise.all([role === 'reader' ? undefined : inFlows(ctx, writerFlow), role === 'writer' ? undefined : read(ctx, sets.flat())]);
}

/** What a writer believes of a path, from its own results (another writer may change it). */
type Belief = 'present' | 'absent' | 'unknown';

/** One writer flow: a write every 20-150 ms until the drain; payloads unique per write. */
async function writerFlow(ctx: FlowContext): Promise<void> {
  const believed = new Map<string, Belief>();
  let n = 0;
  while (!ctx.drain.aborted && !ctx.stop.aborted) {
    const path = `${ctx.spec.path}/${ctx.random.pick(PATHS)}`;
    const belief = believed.get(path) ?? 'unknown';
    const present = belief === 'present' || (belief === 'unknown' && ctx.random.chance(0.5));
    if (!present) {
      believed.set(path, await write(ctx, 'create', path, n++));
    } else {
      const x = ctx.random.next();
      if (x < 0.55) believed.set(path, await write(ctx, 'set', path, n++));
      else if (x < 0.75) believed.set(path, await write(ctx, 'delete', path, n++));
      else {
        // Delete and re-create at once: the same path, versions from 0 again, a new czxid.
        const gone = await write(ctx, 'delete', path, n++);
        believed.set(path, gone === 'absent' ? await write(ctx, 'create', path, n++) : gone);
      }
    }
    await pause(ctx.random.int(20, 150), ctx.drain);
  }
}

/** Whether a failed write certainly was not applied: the server refused it, or it was never sent. */
function refused(err: unknown): boolean {
  if (err instanceof ConnectionLossError) return !err.sent;
  return err instanceof NoNodeError || err instanceof NodeExistsError || err instanceof NotEmptyError || err instanceof BadVersionError;
}

/** One write, recorded (invoke, then ok with the node's stat, fail or info); resolves to what it says of the path. */
async function write(ctx: FlowContext, kind: 'create' | 'set' | 'delete', path: string, n: number): Promise<Belief> {
  const session = ctx.session;
  const op = `${ctx.flow}${n}`;
  const data = kind === 'delete' ? undefined : `${ctx.name}-${op}`;
  const base = { type: 'cache-write' as const, workload: ctx.spec.name, op, kind, path, ...(data !== undefined && { data }) };
  ctx.recorder.record({ ...base, phase: 'invoke' });
  try {
    if (kind === 'delete') {
      await session.delete(path);
      ctx.recorder.record({ ...base, phase: 'ok' });
      return 'absent';
    }
    const stat = kind === 'create' ? (await session.createWithStat(path, { data })).stat : await session.setData(path, data ?? '');
    ctx.recorder.record({ ...base, phase: 'ok', czxid: String(stat.czxid), mzxid: String(stat.mzxid), version: stat.version });
    return 'present';
  } catch (err) {
    ctx.recorder.record({ ...base, phase: refused(err) ? 'fail' : 'info', error: errorText(err) });
    if (err instanceof NodeExistsError || err instanceof NotEmptyError) return 'present';
    if (err instanceof NoNodeError) return 'absent';
    if (!refused(err)) await pause(ctx.random.int(50, 300), ctx.drain);
    return 'unknown';
  }
}

/** A cached node as recorded. */
function record(node: CachedNode): CacheNodeRecord {
  return { path: node.path, czxid: String(node.stat.czxid), mzxid: String(node.stat.mzxid), version: node.stat.version, ...(node.data !== undefined && { data: node.data.toString('utf8') }) };
}

/** Every node of `root`'s subtree on the server, after a sync, in path order (null when it cannot be read). */
async function readSubtree(session: ZkSession, root: string, signal: AbortSignal): Promise<CacheNodeRecord[] | null> {
  const out: CacheNodeRecord[] = [];
  const visit = async (path: string): Promise<void> => {
    try {
      const { data, stat } = await session.getData(path, { signal });
      out.push({ path, czxid: String(stat.czxid), mzxid: String(stat.mzxid), version: stat.version, data: data.toString('utf8') });
      const { children } = await session.getChildren(path, { signal });
      await Promise.all(children.map((c) => visit(`${path}/${c}`)));
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
  };
  try {
    await session.sync(root, { signal });
    await visit(root);
  } catch {
    return null;
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A cache of the plan, made on the client's session. */
type AnyCache = Cache;

/** Runs the readers' caches until the stop, then compares each with the server and closes it. */
async function read(ctx: WorkloadContext, plans: readonly CachePlan[]): Promise<void> {
  const caches = plans.map((plan) => startCache(ctx, plan));
  await new Promise<void>((resolve) => (ctx.stop.aborted ? resolve() : ctx.stop.addEventListener('abort', () => resolve(), { once: true })));
  // Everything is healed and the writers have stopped: wait for each to be SYNCED (a session
  // lost in the last faults renews and is re-read first), then compare.
  const settleMs = 2 * ctx.session.timeoutMs + 10_000;
  const readies = await Promise.all(caches.map((c) => c.cache.ready({ timeoutMs: settleMs }).then(() => undefined, (err: unknown) => errorText(err))));
  const deadline = performance.now() + 10_000;
  const pending = new Set(caches.map((_, i) => i));
  let server: CacheNodeRecord[] | null = null;
  const finalOf = (i: number): void => {
    const c = caches[i];
    if (!c) return;
    const error = readies[i];
    ctx.recorder.record({
      type: 'cache-final',
      workload: ctx.spec.name,
      cache: c.name,
      kind: c.plan.kind,
      root: c.root,
      state: c.cache.state,
      ...(error !== undefined && { error }),
      nodes: contents(c.cache),
      server,
    });
    pending.delete(i);
  };
  // A cache may still be applying the last notifications when first compared: compare again
  // until it agrees with the server or the deadline passes (the last comparison is recorded).
  const signal = AbortSignal.timeout(15_000);
  for (;;) {
    server = await readSubtree(ctx.session, ctx.spec.path, signal);
    for (const i of [...pending]) {
      const c = caches[i];
      if (c && server !== null && c.cache.state === 'SYNCED' && sameNodes(contents(c.cache), expectedNodes(c.plan.kind, c.root, server))) finalOf(i);
    }
    if (pending.size === 0 || performance.now() >= deadline) break;
    await pause(100);
  }
  for (const i of [...pending]) finalOf(i);
  for (const c of caches) c.closing = true;
  await Promise.all(caches.map((c) => c.cache.close().catch(() => undefined)));
}

/** What a cache holds, in path order. */
function contents(cache: AnyCache): CacheNodeRecord[] {
  return [...cache].map(record).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Makes a cache, records every event it emits and whether it closed by itself, and starts it. */
function startCache(ctx: WorkloadContext, plan: CachePlan): { name: string; plan: CachePlan; root: string; cache: AnyCache; closing: boolean } {
  const root = plan.at === '' ? ctx.spec.path : `${ctx.spec.path}/${plan.at}`;
  const options = { watchMode: plan.watchMode, cacheData: plan.cacheData };
  const cache: AnyCache = plan.kind === 'tree' ? new TreeCache(ctx.session, root, options) : plan.kind === 'children' ? new ChildrenCache(ctx.session, root, options) : new NodeCache(ctx.session, root, options);
  const name = `${ctx.name}/${plan.label}`;
  const entry = { name, plan, root, cache, closing: false };
  const base = { type: 'cache' as const, workload: ctx.spec.name, cache: name };
  const nodeFields = (node: CachedNode): { path: string; czxid: string; mzxid: string; version: number; data?: string } => {
    const r = record(node);
    return { path: r.path, czxid: r.czxid, mzxid: r.mzxid, version: r.version, ...(r.data !== undefined && { data: r.data }) };
  };
  cache.on('added', (node) => void ctx.recorder.record({ ...base, event: 'added', ...nodeFields(node) }));
  cache.on('changed', (node, previous) => void ctx.recorder.record({ ...base, event: 'changed', ...nodeFields(node), previousMzxid: String(previous.stat.mzxid) }));
  cache.on('removed', (node) => void ctx.recorder.record({ ...base, event: 'removed', ...nodeFields(node) }));
  cache.on('initialized', () => void ctx.recorder.record({ ...base, event: 'initialized' }));
  cache.on('resynced', () => void ctx.recorder.record({ ...base, event: 'resynced' }));
  cache.on('stale', () => void ctx.recorder.record({ ...base, event: 'stale' }));
  cache.on('sessionLost', (error) => void ctx.recorder.record({ ...base, event: 'sessionLost', error: errorText(error) }));
  cache.on('error', (error) => void ctx.recorder.record({ ...base, event: 'error', error: errorText(error) }));
  // The iterator ends when the cache closes: by close() at the end, or by itself (a violation).
  void (async () => {
    for await (const _ of cache.events({ bufferSize: 1000 })) {
      // Drained only to learn when it ends.
    }
    if (!entry.closing) ctx.recorder.record({ ...base, event: 'closed', error: `state ${cache.state}` });
  })().catch((err: unknown) => ctx.recorder.record({ ...base, event: 'closed', error: errorText(err) }));
  ctx.recorder.record({ type: 'cache-start', workload: ctx.spec.name, cache: name, kind: plan.kind, root, watchMode: plan.watchMode, cacheData: plan.cacheData, phase: 'invoke' });
  void cache.start().then(
    () => ctx.recorder.record({ type: 'cache-start', workload: ctx.spec.name, cache: name, kind: plan.kind, root, watchMode: plan.watchMode, cacheData: plan.cacheData, phase: 'ok', resolvedWatchMode: String(cache.watchMode) }),
    (err: unknown) => ctx.recorder.record({ type: 'cache-start', workload: ctx.spec.name, cache: name, kind: plan.kind, root, watchMode: plan.watchMode, cacheData: plan.cacheData, phase: 'fail', error: errorText(err) }),
  );
  return entry;
}
