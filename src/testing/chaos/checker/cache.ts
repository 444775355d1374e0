/**
 * The caches' promises (the cache guide): per node, events in the server's order with no
 * duplicate; nothing reported that the writers never produced; and, once everything is healed
 * and the writers have stopped, each cache SYNCED and holding what the server holds.
 *
 * @module
 */
import { hexToken, runSeconds } from '../format.js';
import type { CacheFinalEvent, CacheKind, CacheNodeRecord, CacheObservedEvent, CacheWriteEvent, ChaosEvent, ChaosHistory, WorkloadSpec } from '../history.js';
import type { Violation } from './types.js';

/** What a cache's run looked like, for the summary and the report. */
export interface CacheSummary {
  /** The cache (`<client>/<label>`). */
  cache: string;
  /** Node events (added, changed, removed). */
  events: number;
  /** Full re-reads finished (`resynced`). */
  resyncs: number;
  /** Times it went stale. */
  stale: number;
  /** Its state at the end (absent: no final state recorded). */
  finalState?: string;
  /** Nodes it held at the end. */
  finalNodes?: number;
}

/** A state a writer produced (or may have): the node's version and payload at that zxid. */
interface Produced {
  version: number;
  data: string | undefined;
  event: CacheWriteEvent;
}

/** The most violations reported per cache and kind of fault; the rest are counted in one more. */
const CAP = 10;

const key = (path: string, czxid: string, mzxid: string): string => `${path} ${czxid} ${mzxid}`;

/** `0x..` of a decimal zxid string. */
const hx = (z: string | undefined): string => (z === undefined ? '?' : hexToken(z));

/** Compares (czxid, mzxid) pairs: negative when a is before b. */
function order(a: { czxid?: string; mzxid?: string }, b: { czxid?: string; mzxid?: string }): number {
  const c = BigInt(a.czxid ?? 0) - BigInt(b.czxid ?? 0);
  if (c !== 0n) return c < 0n ? -1 : 1;
  const m = BigInt(a.mzxid ?? 0) - BigInt(b.mzxid ?? 0);
  return m === 0n ? 0 : m < 0n ? -1 : 1;
}

/** The writes' outcomes: states known from acknowledged results, and writes whose outcome is unknown. */
function ledger(history: ChaosHistory, workload: string): { known: Map<string, Produced>; unknown: Map<string, CacheWriteEvent[]>; byPath: Map<string, CacheWriteEvent[]> } {
  const known = new Map<string, Produced>();
  const settled = new Set<string>();
  const invoked = new Map<string, CacheWriteEvent>();
  const unknown = new Map<string, CacheWriteEvent[]>();
  const byPath = new Map<string, CacheWriteEvent[]>();
  const addUnknown = (e: CacheWriteEvent): void => void unknown.set(e.path, [...(unknown.get(e.path) ?? []), e]);
  for (const e of history.events) {
    if (e.type !== 'cache-write' || e.workload !== workload) continue;
    byPath.set(e.path, [...(byPath.get(e.path) ?? []), e]);
    const id = `${e.client} ${e.op}`;
    if (e.phase === 'invoke') {
      invoked.set(id, e);
      continue;
    }
    settled.add(id);
    if (e.phase === 'ok' && e.czxid !== undefined && e.mzxid !== undefined) known.set(key(e.path, e.czxid, e.mzxid), { version: e.version ?? -1, data: e.data, event: e });
    if (e.phase === 'info' && e.kind !== 'delete') addUnknown(e);
  }
  // A write still in flight when its client stopped (or crashed) may have been applied too.
  for (const [id, e] of invoked) if (!settled.has(id) && e.kind !== 'delete') addUnknown(e);
  // The final read of the server pins the writes of unknown outcome it shows: a payload is
  // unique, so the node holding it is in the state that write made.
  for (const f of history.events) {
    if (f.type !== 'cache-final' || f.workload !== workload || f.server === null) continue;
    for (const n of f.server) {
      const list = unknown.get(n.path);
      const w = list?.find((x) => x.data === n.data);
      if (list === undefined || w === undefined) continue;
      known.set(key(n.path, n.czxid, n.mzxid), { version: n.version, data: n.data, event: w });
      unknown.set(n.path, list.filter((x) => x !== w));
    }
  }
  return { known, unknown, byPath };
}

/** The nodes a cache of `kind` on `root` must hold, out of a subtree read from the server. @internal */
export function expectedNodes(kind: CacheKind, root: string, server: readonly CacheNodeRecord[]): CacheNodeRecord[] {
  const parent = (p: string): string => p.slice(0, Math.max(p.lastIndexOf('/'), 1));
  if (kind === 'node') return server.filter((n) => n.path === root);
  if (kind === 'children') return server.filter((n) => n.path !== root && parent(n.path) === root);
  return server.filter((n) => n.path === root || n.path.startsWith(`${root}/`));
}

/** Whether a cache's nodes equal the expected ones (stats; data too where the cache keeps it). @internal */
export function sameNodes(cached: readonly CacheNodeRecord[], expected: readonly CacheNodeRecord[]): boolean {
  if (cached.length !== expected.length) return false;
  const withData = cached.some((n) => n.data !== undefined);
  const truth = new Map(expected.map((n) => [n.path, n]));
  return cached.every((n) => difference(n, truth.get(n.path), withData) === '');
}

/** How two views of one path differ, in words (empty: they agree). */
function difference(cached: CacheNodeRecord | undefined, truth: CacheNodeRecord | undefined, withData: boolean): string {
  if (cached === undefined && truth === undefined) return '';
  if (cached === undefined) return `${truth?.path}: missing (the server has czxid ${hx(truth?.czxid)} mzxid ${hx(truth?.mzxid)} version ${truth?.version})`;
  if (truth === undefined) return `${cached.path}: held (czxid ${hx(cached.czxid)} mzxid ${hx(cached.mzxid)}) but not on the server`;
  const diffs: string[] = [];
  if (cached.czxid !== truth.czxid) diffs.push(`czxid ${hx(cached.czxid)} vs ${hx(truth.czxid)}`);
  if (cached.mzxid !== truth.mzxid) diffs.push(`mzxid ${hx(cached.mzxid)} vs ${hx(truth.mzxid)}`);
  if (cached.version !== truth.version) diffs.push(`version ${cached.version} vs ${truth.version}`);
  if (withData && cached.data !== truth.data) diffs.push(`data ${JSON.stringify(cached.data)} vs ${JSON.stringify(truth.data)}`);
  return diffs.length === 0 ? '' : `${cached.path}: ${diffs.join(', ')} (cache vs server)`;
}

/**
 * Checks the cache workload `spec`:
 * - **order**: per cache and node, `added` only of a node not held, `changed` only of a held
 *   node with the same czxid, `removed` only of a held node (the one held), and (czxid, mzxid)
 *   strictly increasing across a node's `added` and `changed` events: so no duplicate and no
 *   step back, and a delete and re-create shows as `removed` then `added` (decided by czxid,
 *   whatever the versions); `initialized` once;
 * - **no phantom**: every `added` or `changed` state (path, czxid, mzxid) is one a writer
 *   produced, with that version and payload: the stat a create or setData returned, or a write
 *   whose outcome is unknown (its reply lost), matched by its unique payload and shape (a create
 *   is czxid = mzxid at version 0); such a write's state is pinned by the final read of the
 *   server when it shows its payload, and otherwise by the first cache that shows it (one write
 *   makes one state: two caches showing its payload with different zxids is a phantom);
 * - **final**: after the heal and a wait for SYNCED, each cache is SYNCED (not STALE, not
 *   CLOSED), holds exactly the nodes a fresh read of the server found (stats and data), and its
 *   events add up to what it holds; a cache that closed by itself is a violation.
 */
export function checkCache(history: ChaosHistory, spec: WorkloadSpec): { violations: Violation[]; caches: CacheSummary[] } {
  const violations: Violation[] = [];
  const t0 = history.meta.startedAt;
  const { known, unknown, byPath } = ledger(history, spec.name);
  const perCache = new Map<string, CacheObservedEvent[]>();
  const finals = new Map<string, CacheFinalEvent>();
  const started = new Map<string, ChaosEvent[]>();
  for (const e of history.events) {
    if (e.type === 'cache' && e.workload === spec.name) perCache.set(e.cache, [...(perCache.get(e.cache) ?? []), e]);
    if (e.type === 'cache-final' && e.workload === spec.name) finals.set(e.cache, e);
    if (e.type === 'cache-start' && e.workload === spec.name) started.set(e.cache, [...(started.get(e.cache) ?? []), e]);
  }
  const names = [...new Set([...started.keys(), ...perCache.keys(), ...finals.keys()])].sort();
  // A payload of a write of unknown outcome, as first shown (by any cache): one write makes one state.
  const shownAs = new Map<string, CacheObservedEvent>();
  const caches: CacheSummary[] = [];
  /** The writes of a path that made, or may have made, the state of `e`, for a violation's excerpt. */
  const writesOf = (path: string, czxid?: string): CacheWriteEvent[] => (byPath.get(path) ?? []).filter((w) => w.phase !== 'invoke' && (czxid === undefined || w.czxid === czxid || w.phase === 'info')).slice(-4);

  for (const name of names) {
    const events = perCache.get(name) ?? [];
    const held = new Map<string, CacheObservedEvent>();
    const last = new Map<string, CacheObservedEvent>();
    const counts = new Map<string, number>();
    const report = (kind: string, v: Omit<Violation, 'check' | 'workload'>): void => {
      const n = (counts.get(kind) ?? 0) + 1;
      counts.set(kind, n);
      if (n <= CAP) violations.push({ check: 'cache', workload: spec.name, ...v });
    };
    const at = (e: ChaosEvent): string => runSeconds(e.t, t0);
    const node = (e: CacheObservedEvent): string => `${e.path} (czxid ${hx(e.czxid)} mzxid ${hx(e.mzxid)} version ${e.version})`;
    let initialized = 0;
    const summary: CacheSummary = { cache: name, events: 0, resyncs: 0, stale: 0 };
    for (const e of events) {
      if (e.event === 'initialized') {
        initialized++;
        if (initialized === 2) report('initialized', { t: e.t, message: `${name} emitted initialized twice (once per start is promised), at ${at(e)}`, events: events.filter((x) => x.event === 'initialized').slice(0, 3) });
        continue;
      }
      if (e.event === 'resynced') summary.resyncs++;
      if (e.event === 'stale') summary.stale++;
      if (e.event === 'closed') {
        report('closed', { t: e.t, message: `${name} closed by itself at ${at(e)} (it was never told to close)${e.error ? `: ${e.error}` : ''}`, events: [e, ...events.filter((x) => x.event === 'error').slice(-2)] });
        continue;
      }
      if (e.event !== 'added' && e.event !== 'changed' && e.event !== 'removed') continue;
      summary.events++;
      if (e.path === undefined || e.czxid === undefined || e.mzxid === undefined) {
        report('malformed', { t: e.t, message: `${name} recorded a ${e.event} event without a path or zxids`, events: [e] });
        continue;
      }
      const path = e.path;
      const cur = held.get(path);
      const prev = last.get(path);
      if (e.event === 'removed') {
        if (cur === undefined) report('order', { t: e.t, message: `${name} removed ${node(e)} at ${at(e)}, which it did not hold`, events: [...(prev ? [prev] : []), e] });
        else if (cur.czxid !== e.czxid || cur.mzxid !== e.mzxid) report('order', { t: e.t, message: `${name} removed ${node(e)} at ${at(e)}, but held ${node(cur)}`, events: [cur, e] });
        held.delete(path);
        continue;
      }
      // added or changed: in order, after what was seen of this path, and a state the writers made.
      if (e.event === 'added' && cur !== undefined) {
        report('order', { t: e.t, message: `${name} added ${node(e)} at ${at(e)} while it held ${node(cur)} (no removed between)`, events: [cur, e] });
      } else if (e.event === 'changed' && cur === undefined) {
        report('order', { t: e.t, message: `${name} changed ${node(e)} at ${at(e)}, which it did not hold`, events: [...(prev ? [prev] : []), e] });
      } else if (e.event === 'changed' && cur !== undefined && cur.czxid !== e.czxid) {
        report('order', { t: e.t, message: `${name} reported ${node(e)} as changed at ${at(e)}, but it held another incarnation, ${node(cur)}: a delete and re-create must be removed, then added`, events: [cur, e] });
      } else if (e.event === 'changed' && cur !== undefined && e.previousMzxid !== undefined && e.previousMzxid !== cur.mzxid) {
        report('order', { t: e.t, message: `${name} changed ${node(e)} at ${at(e)} with previous mzxid ${hx(e.previousMzxid)}, but held ${node(cur)}`, events: [cur, e] });
      }
      if (prev !== undefined && order(e, prev) <= 0) {
        const same = order(e, prev) === 0;
        report('order', { t: e.t, message: `${name} ${same ? 'repeated' : 'went back on'} ${path} at ${at(e)}: ${e.event} czxid ${hx(e.czxid)} mzxid ${hx(e.mzxid)} after ${prev.event} czxid ${hx(prev.czxid)} mzxid ${hx(prev.mzxid)} at ${at(prev)}${same ? ' (a duplicate)' : ' (out of zxid order)'}`, events: [prev, e] });
      }
      held.set(path, e);
      if (prev === undefined || order(e, prev) > 0) last.set(path, e);
      let phantom = phantomOf(e, known, unknown);
      if (phantom === undefined && e.data !== undefined && !known.has(key(path, e.czxid, e.mzxid))) {
        const first = shownAs.get(`${path} ${e.data}`);
        if (first === undefined) shownAs.set(`${path} ${e.data}`, e);
        else if (first.czxid !== e.czxid || first.mzxid !== e.mzxid) phantom = `${first.cache} showed the same payload (one write, of unknown outcome) as czxid ${hx(first.czxid)} mzxid ${hx(first.mzxid)} at ${at(first)}: one of the two never existed`;
      }
      if (phantom !== undefined) report('phantom', { t: e.t, message: `${name} reported ${node(e)}${e.data === undefined ? '' : ` data ${JSON.stringify(e.data)}`} (${e.event} at ${at(e)}): ${phantom}`, events: [e, ...writesOf(path, e.czxid)] });
    }
    const final = finals.get(name);
    if (final !== undefined) {
      summary.finalState = final.state;
      summary.finalNodes = final.nodes.length;
    }
    const starts = started.get(name) ?? [];
    const failed = starts.find((s) => s.type === 'cache-start' && s.phase === 'fail');
    if (failed !== undefined) report('start', { t: failed.t, message: `${name}'s start() rejected at ${at(failed)}: ${failed.type === 'cache-start' ? (failed.error ?? '') : ''}`, events: [failed] });
    const okStart = starts.some((s) => s.type === 'cache-start' && s.phase === 'ok');
    if (okStart && initialized === 0) report('initialized', { message: `${name}'s start() resolved but it never emitted initialized`, events: starts.slice(0, 2) });
    if (history.final !== undefined) {
      if (final === undefined) {
        report('final', { message: `${name} recorded no final state (its client did not get to compare it with the server)`, events: starts.slice(0, 1) });
      } else {
        checkFinal(name, final, held, at, report);
      }
    }
    for (const [kind, n] of counts) {
      if (n > CAP) violations.push({ check: 'cache', workload: spec.name, message: `${name}: ${n - CAP} more violations of the same kind (${kind}) not listed`, events: [] });
    }
    caches.push(summary);
  }
  return { violations, caches };
}

/** Why the state of `e` was never produced by a writer (undefined: it was, or may have been). */
function phantomOf(e: CacheObservedEvent, known: ReadonlyMap<string, Produced>, unknown: ReadonlyMap<string, readonly CacheWriteEvent[]>): string | undefined {
  const path = e.path ?? '';
  const czxid = e.czxid ?? '';
  const mzxid = e.mzxid ?? '';
  const state = known.get(key(path, czxid, mzxid));
  if (state !== undefined) {
    if (state.version !== -1 && e.version !== undefined && e.version !== state.version) return `the write that made this state (${state.event.client} ${state.event.op}) left version ${state.version}`;
    if (e.data !== undefined && state.data !== undefined && e.data !== state.data) return `the write that made this state (${state.event.client} ${state.event.op}) wrote ${JSON.stringify(state.data)}`;
    return undefined;
  }
  // A write whose reply was lost may have made it: its payload is unique, and its shape fixed.
  const created = czxid === mzxid;
  const possible = (unknown.get(path) ?? []).some((w) => {
    if (e.data !== undefined && w.data !== e.data) return false;
    if (w.kind === 'create') return created && (e.version === undefined || e.version === 0);
    return !created && (e.version === undefined || e.version >= 1);
  });
  if (possible) return undefined;
  return 'no writer produced this state (no acknowledged create or setData returned these zxids, and no write of unknown outcome could have)';
}

/** The final state of one cache: SYNCED, equal to the server's, and to what its events add up to. */
function checkFinal(
  name: string,
  final: CacheFinalEvent,
  held: ReadonlyMap<string, CacheObservedEvent>,
  at: (e: ChaosEvent) => string,
  report: (kind: string, v: Omit<Violation, 'check' | 'workload'>) => void,
): void {
  if (final.state !== 'SYNCED') {
    report('final', { t: final.t, message: `${name} ended ${final.state}, not SYNCED, after the heal and the settle wait${final.error ? ` (${final.error})` : ''}`, events: [final] });
  }
  if (final.server === null) {
    report('final', { t: final.t, message: `${name}: the server's copy of ${final.root} could not be read at the end, so the cache could not be compared with it`, events: [final] });
    return;
  }
  const withData = final.nodes.some((n) => n.data !== undefined);
  const truth = new Map(expectedNodes(final.kind, final.root, final.server).map((n) => [n.path, n]));
  const cached = new Map(final.nodes.map((n) => [n.path, n]));
  const diffs = [...new Set([...truth.keys(), ...cached.keys()])]
    .sort()
    .map((p) => difference(cached.get(p), truth.get(p), withData))
    .filter((d) => d !== '');
  if (diffs.length > 0) {
    report('final', {
      t: final.t,
      message: `${name} (${final.kind} cache on ${final.root}) does not hold what the server holds at the end (${at(final)}): ${diffs.length} differences: ${diffs.slice(0, 5).join('; ')}${diffs.length > 5 ? '; ...' : ''}`,
      events: [final],
    });
  }
  // What its events say it holds must be what it holds.
  const replayed = [...held.values()].map((e) => ({ path: e.path ?? '', czxid: e.czxid ?? '', mzxid: e.mzxid ?? '', version: e.version ?? -1 }));
  const fromEvents = new Map(replayed.map((n) => [n.path, n]));
  const mismatched = [...new Set([...fromEvents.keys(), ...cached.keys()])]
    .sort()
    .filter((p) => {
      const a = fromEvents.get(p);
      const b = cached.get(p);
      return a === undefined || b === undefined || a.czxid !== b.czxid || a.mzxid !== b.mzxid;
    });
  if (mismatched.length > 0) {
    const shown = [...held.values()].filter((e) => mismatched.includes(e.path ?? '')).slice(0, 3);
    report('final', {
      t: final.t,
      message: `${name}'s events do not add up to what it holds at the end: ${mismatched.length} paths differ (${mismatched.slice(0, 5).join(', ')}${mismatched.length > 5 ? ', ...' : ''})`,
      events: [...shown, final],
    });
  }
}
