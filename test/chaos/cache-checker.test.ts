// The cache check over hand-made histories: a clean one (delete and re-create with versions
// repeating, a write of unknown outcome, three kinds of cache) passes; phantoms, events out of
// zxid order, duplicates, a wrong final state, a cache left STALE or closed by itself fail.
// No server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHistory, renderHtml, summaryLine, type CacheKind, type CacheNodeRecord, type ChaosEvent, type ChaosHistory, type FinalState, type WorkloadSpec } from '../../src/testing/index.js';

const ROOT = '/c/cache';
const K0 = `${ROOT}/k0`;
const D0 = `${ROOT}/d0`;
const D0K0 = `${ROOT}/d0/k0`;
const CACHE: WorkloadSpec = { name: 'cache', kind: 'cache', path: ROOT, maxLeases: 1 };

const final = (): FinalState => ({
  counters: {},
  queueItems: {},
  ephemerals: [],
  members: [1, 2, 3].map((member) => ({ member, watches: 0, clientConnections: [], ephemerals: 0, trackedSessions: member === 1 ? [] : null, globalSessions: member === 1 ? 0 : null })),
});

function history(events: ChaosEvent[], withFinal = true): ChaosHistory {
  return {
    version: 1,
    meta: {
      seed: 1,
      seconds: 1,
      startedAt: 0,
      endedAt: 10_000,
      sessionTimeoutMs: 4000,
      clients: [
        { name: 'w', workload: 'cache', role: 'writer' },
        { name: 'r', workload: 'cache', role: 'reader' },
      ],
      workloads: [CACHE],
      members: [1, 2, 3],
    },
    events,
    ...(withFinal && { final: final() }),
  };
}

type Phase = 'ok' | 'fail' | 'info' | 'invoke';
let op = 0;
/** A write: invoke, then its outcome (none for `invoke`: still in flight at the end). */
function write(t: number, kind: 'create' | 'set' | 'delete', path: string, phase: Phase, stat?: [number, number, number], data?: string): ChaosEvent[] {
  const id = `a${op++}`;
  const base = { type: 'cache-write' as const, client: 'w', workload: 'cache', op: id, kind, path, ...(data !== undefined && { data }) };
  const invoke: ChaosEvent = { ...base, t, phase: 'invoke' };
  if (phase === 'invoke') return [invoke];
  const outcome: ChaosEvent = { ...base, t: t + 1, phase, ...(stat && { czxid: String(stat[0]), mzxid: String(stat[1]), version: stat[2] }), ...(phase !== 'ok' && { error: 'CONNECTION_LOSS: lost' }) };
  return [invoke, outcome];
}
const rootCreated: ChaosEvent = { type: 'cache-write', t: 0, client: 'runner', phase: 'ok', workload: 'cache', op: 'root', kind: 'create', path: ROOT, data: '', czxid: '10', mzxid: '10', version: 0 };

/** A node event of cache `cache` (stat: czxid, mzxid, version). */
function ev(t: number, cache: string, event: 'added' | 'changed' | 'removed', path: string, stat: [number, number, number], data?: string, previousMzxid?: number): ChaosEvent {
  return {
    type: 'cache',
    t,
    client: 'r',
    workload: 'cache',
    cache,
    event,
    path,
    czxid: String(stat[0]),
    mzxid: String(stat[1]),
    version: stat[2],
    ...(data !== undefined && { data }),
    ...(previousMzxid !== undefined && { previousMzxid: String(previousMzxid) }),
  };
}
const life = (t: number, cache: string, event: 'initialized' | 'resynced' | 'stale' | 'closed'): ChaosEvent => ({ type: 'cache', t, client: 'r', workload: 'cache', cache, event });
const start = (t: number, cache: string, kind: CacheKind, root: string): ChaosEvent[] => [
  { type: 'cache-start', t, client: 'r', workload: 'cache', cache, kind, root, watchMode: 'auto', cacheData: true, phase: 'invoke' },
  { type: 'cache-start', t: t + 5, client: 'r', workload: 'cache', cache, kind, root, watchMode: 'auto', cacheData: true, phase: 'ok', resolvedWatchMode: 'persistent' },
];
const node = (path: string, stat: [number, number, number], data?: string): CacheNodeRecord => ({ path, czxid: String(stat[0]), mzxid: String(stat[1]), version: stat[2], ...(data !== undefined && { data }) });
function end(t: number, cache: string, kind: CacheKind, root: string, nodes: CacheNodeRecord[], server: CacheNodeRecord[] | null, state = 'SYNCED'): ChaosEvent {
  return { type: 'cache-final', t, client: 'r', workload: 'cache', cache, kind, root, state, nodes, server };
}

// The writers' story: k0 created, changed, deleted, re-created (version 0 again), then a change
// whose reply was lost (it was applied: the caches show it); d0 and d0/k0 created.
const writes = (): ChaosEvent[] => [
  rootCreated,
  ...write(100, 'create', K0, 'ok', [20, 20, 0], 'w-1'),
  ...write(200, 'set', K0, 'ok', [20, 21, 1], 'w-2'),
  ...write(300, 'delete', K0, 'ok'),
  ...write(400, 'create', K0, 'ok', [23, 23, 0], 'w-3'),
  ...write(500, 'set', K0, 'info', undefined, 'w-4'),
  ...write(600, 'create', D0, 'ok', [26, 26, 0], 'w-5'),
  ...write(700, 'create', D0K0, 'ok', [27, 27, 0], 'w-6'),
  ...write(800, 'set', D0K0, 'fail', undefined, 'w-7'),
];
const SERVER = [node(ROOT, [10, 10, 0], ''), node(D0, [26, 26, 0], 'w-5'), node(D0K0, [27, 27, 0], 'w-6'), node(K0, [23, 25, 1], 'w-4')];

/** A tree cache that saw every step, a children cache that missed some (one-shot: it may), a node cache. */
function cleanEvents(): ChaosEvent[] {
  return [
    ...writes(),
    ...start(50, 'r/tree', 'tree', ROOT),
    ev(51, 'r/tree', 'added', ROOT, [10, 10, 0], ''),
    life(52, 'r/tree', 'initialized'),
    ev(102, 'r/tree', 'added', K0, [20, 20, 0], 'w-1'),
    ev(202, 'r/tree', 'changed', K0, [20, 21, 1], 'w-2', 20),
    ev(302, 'r/tree', 'removed', K0, [20, 21, 1], 'w-2'),
    ev(402, 'r/tree', 'added', K0, [23, 23, 0], 'w-3'),
    life(450, 'r/tree', 'stale'),
    // Re-read after a reconnect: what changed meanwhile, once.
    ev(650, 'r/tree', 'changed', K0, [23, 25, 1], 'w-4', 23),
    ev(651, 'r/tree', 'added', D0, [26, 26, 0], 'w-5'),
    life(652, 'r/tree', 'resynced'),
    ev(702, 'r/tree', 'added', D0K0, [27, 27, 0], 'w-6'),
    ...start(50, 'r/children', 'children', ROOT),
    life(52, 'r/children', 'initialized'),
    ev(402, 'r/children', 'added', K0, [23, 23, 0], 'w-3'),
    ev(602, 'r/children', 'added', D0, [26, 26, 0], 'w-5'),
    ev(603, 'r/children', 'changed', K0, [23, 25, 1], 'w-4', 23),
    ...start(50, 'r/node', 'node', K0),
    life(52, 'r/node', 'initialized'),
    ev(102, 'r/node', 'added', K0, [20, 20, 0]),
    ev(302, 'r/node', 'removed', K0, [20, 20, 0]),
    ev(402, 'r/node', 'added', K0, [23, 25, 1]),
    end(9000, 'r/tree', 'tree', ROOT, SERVER, SERVER),
    end(9000, 'r/children', 'children', ROOT, [SERVER[1]!, SERVER[3]!], SERVER),
    end(9000, 'r/node', 'node', K0, [node(K0, [23, 25, 1])], SERVER),
  ];
}

/** The clean history with `edit` applied to its events. */
function doctored(edit: (events: ChaosEvent[]) => ChaosEvent[]): ChaosHistory {
  return history(edit(cleanEvents()));
}
const isEv = (e: ChaosEvent, cache: string, event: string, t?: number): boolean => e.type === 'cache' && e.cache === cache && e.event === event && (t === undefined || e.t === t);
const cacheViolations = (h: ChaosHistory): string[] => checkHistory(h).violations.map((v) => `[${v.check}] ${v.message}`);

test('cache check: a clean history passes (re-creation with versions repeating, an unknown write applied, three kinds of cache)', () => {
  const result = checkHistory(history(cleanEvents()));
  assert.deepEqual(result.violations, [], result.violations.map((v) => v.message).join('\n'));
  const stats = result.stats.cache.cache;
  assert.ok(stats);
  assert.equal(stats.writes, 6); // the runner's root creation is not a writer's
  assert.equal(stats.unknownWrites, 1);
  assert.deepEqual(
    stats.caches.map((c) => [c.cache, c.events, c.resyncs, c.stale, c.finalState, c.finalNodes]),
    [
      ['r/children', 3, 0, 0, 'SYNCED', 2],
      ['r/node', 3, 0, 0, 'SYNCED', 1],
      ['r/tree', 8, 1, 1, 'SYNCED', 4],
    ],
  );
  assert.match(summaryLine(history(cleanEvents()), result), / cache-writes=6 cache-events=14 /);
});

const failing: { name: string; edit: (events: ChaosEvent[]) => ChaosEvent[]; message: RegExp }[] = [
  {
    name: 'a phantom: a change to zxids no writer produced',
    edit: (es) => [...es.filter((e) => !isEv(e, 'r/tree', 'changed', 650)), ev(650, 'r/tree', 'changed', K0, [23, 24, 1], 'w-4', 23)],
    message: /r\/tree reported .*k0 \(czxid 0x17 mzxid 0x18 version 1\).*no writer produced this state/,
  },
  {
    name: 'a phantom: the zxids of a real write with another payload',
    edit: (es) => es.map((e) => (isEv(e, 'r/tree', 'changed', 202) ? ev(202, 'r/tree', 'changed', K0, [20, 21, 1], 'w-9', 20) : e)),
    message: /the write that made this state \(w a\d+\) wrote "w-2"/,
  },
  {
    name: 'a phantom: the zxids of a real write with another version',
    edit: (es) => es.map((e) => (isEv(e, 'r/tree', 'changed', 202) ? ev(202, 'r/tree', 'changed', K0, [20, 21, 2], 'w-2', 20) : e)),
    message: /left version 1/,
  },
  {
    name: 'a phantom: a failed write (certainly not applied) shown as applied',
    edit: (es) => [...es, ev(850, 'r/tree', 'changed', D0K0, [27, 30, 1], 'w-7', 27)],
    message: /no writer produced this state/,
  },
  {
    name: 'a phantom: a create of unknown outcome cannot have made a changed node',
    edit: (es) => [...es, ...write(880, 'create', `${ROOT}/k1`, 'info', undefined, 'w-8'), ev(890, 'r/tree', 'added', `${ROOT}/k1`, [31, 32, 1], 'w-8')],
    message: /no writer produced this state/,
  },
  {
    name: 'out of zxid order: a change older than the one shown before it',
    edit: (es) => [...es.filter((e) => !isEv(e, 'r/tree', 'changed', 202)), ev(202, 'r/tree', 'changed', K0, [20, 21, 1], 'w-2', 20), ev(203, 'r/tree', 'changed', K0, [20, 20, 0], 'w-1', 21)],
    message: /went back on .*k0.*out of zxid order/,
  },
  {
    name: 'a duplicate: the same change twice',
    edit: (es) => es.flatMap((e) => (isEv(e, 'r/tree', 'changed', 202) ? [e, ev(203, 'r/tree', 'changed', K0, [20, 21, 1], 'w-2', 21)] : [e])),
    message: /repeated .*k0.*a duplicate/,
  },
  {
    name: 'a re-creation shown as a change (no removed, then added)',
    edit: (es) => es.filter((e) => !isEv(e, 'r/tree', 'removed', 302)).map((e) => (isEv(e, 'r/tree', 'added', 402) ? ev(402, 'r/tree', 'changed', K0, [23, 23, 0], 'w-3', 21) : e)),
    message: /another incarnation.*removed, then added/,
  },
  {
    name: 'a node added twice without a removal between',
    edit: (es) => es.filter((e) => !isEv(e, 'r/tree', 'removed', 302)),
    message: /added .*k0 .* while it held/,
  },
  {
    name: 'a removal of a node not held',
    edit: (es) => [...es, ev(890, 'r/node', 'removed', `${ROOT}/k0`, [23, 25, 1]), ev(891, 'r/node', 'removed', `${ROOT}/k0`, [23, 25, 1])],
    message: /removed .*k0.*which it did not hold/,
  },
  {
    name: 'a final state that differs from the server: an old incarnation kept',
    edit: (es) => es.map((e) => (e.type === 'cache-final' && e.cache === 'r/node' ? end(9000, 'r/node', 'node', K0, [node(K0, [20, 20, 0])], SERVER) : e)),
    message: /r\/node \(node cache on .*k0\) does not hold what the server holds.*czxid 0x14 vs 0x17/,
  },
  {
    name: 'a final state missing a node the server has',
    edit: (es) => es.map((e) => (e.type === 'cache-final' && e.cache === 'r/tree' ? end(9000, 'r/tree', 'tree', ROOT, SERVER.slice(0, 3), SERVER) : e)),
    message: /k0: missing/,
  },
  {
    name: "a final state whose events do not add up (d0/k0 added, never removed, not held)",
    edit: (es) => es.map((e) => (e.type === 'cache-final' && e.cache === 'r/tree' ? end(9000, 'r/tree', 'tree', ROOT, SERVER.filter((n) => n.path !== D0K0), SERVER.filter((n) => n.path !== D0K0)) : e)),
    message: /events do not add up to what it holds.*d0\/k0/,
  },
  {
    name: 'a cache STALE at the end',
    edit: (es) => es.map((e) => (e.type === 'cache-final' && e.cache === 'r/children' ? { ...e, state: 'STALE', error: 'OPERATION_TIMEOUT: ready() timed out' } : e)),
    message: /r\/children ended STALE, not SYNCED/,
  },
  {
    name: 'a cache that closed by itself',
    edit: (es) => [...es, life(5000, 'r/tree', 'closed')],
    message: /r\/tree closed by itself/,
  },
  {
    name: 'initialized twice',
    edit: (es) => [...es, life(5000, 'r/node', 'initialized')],
    message: /initialized twice/,
  },
  {
    name: 'a cache without a final state',
    edit: (es) => es.filter((e) => !(e.type === 'cache-final' && e.cache === 'r/node')),
    message: /r\/node recorded no final state/,
  },
  {
    name: "the server's copy not read at the end",
    edit: (es) => es.map((e) => (e.type === 'cache-final' && e.cache === 'r/tree' ? end(9000, 'r/tree', 'tree', ROOT, SERVER, null) : e)),
    message: /could not be read at the end/,
  },
];

for (const c of failing) {
  test(`cache check: ${c.name} -> fails cache`, () => {
    const found = cacheViolations(doctored(c.edit));
    assert.ok(found.length > 0, 'no violation');
    assert.ok(found.every((v) => v.startsWith('[cache] ')), found.join('\n'));
    assert.ok(found.some((v) => c.message.test(v)), found.join('\n'));
  });
}

test('cache check: a write still in flight at the end (no outcome) may have been applied', () => {
  const h = doctored((es) => [...es, ...write(880, 'set', D0, 'invoke', undefined, 'w-8'), ev(890, 'r/tree', 'changed', D0, [26, 33, 1], 'w-8', 26)]);
  const vs = cacheViolations(h);
  // Not a phantom; but the final state still shows d0 unchanged, which its events contradict.
  assert.ok(!vs.some((v) => /no writer produced/.test(v)), vs.join('\n'));
  assert.ok(vs.some((v) => /events do not add up/.test(v)), vs.join('\n'));
});

test('cache check: a cache of stats only (no data) is matched by zxids and version', () => {
  const h = doctored((es) => [...es, ...start(50, 'r/stats', 'node', D0K0), life(52, 'r/stats', 'initialized'), ev(702, 'r/stats', 'added', D0K0, [27, 27, 0]), end(9000, 'r/stats', 'node', D0K0, [node(D0K0, [27, 27, 0])], SERVER)]);
  assert.deepEqual(cacheViolations(h), []);
});

test('cache check: violations of one kind in one cache are capped, the rest counted', () => {
  const dupes = Array.from({ length: 15 }, (_, i) => ev(203 + i, 'r/tree', 'changed', K0, [20, 21, 1], 'w-2', 21));
  const h = doctored((es) => es.flatMap((e) => (isEv(e, 'r/tree', 'changed', 202) ? [e, ...dupes] : [e])));
  const vs = cacheViolations(h);
  assert.equal(vs.filter((v) => /a duplicate/.test(v)).length, 10);
  assert.ok(vs.some((v) => /5 more violations of the same kind \(order\)/.test(v)), vs.join('\n'));
});

test('cache check: without a final state (a run cut short) the final checks are left to leftovers', () => {
  const h = history(cleanEvents().filter((e) => e.type !== 'cache-final'), false);
  assert.deepEqual([...new Set(checkHistory(h).violations.map((v) => v.check))], ['leftovers']);
});

test('cache check: two caches show one write of unknown outcome with different zxids: a phantom', () => {
  // d0/k0's last set was refused; a set of unknown outcome (w-8) is shown by two caches, differently.
  const h = doctored((es) => [
    ...es,
    ...write(880, 'set', `${ROOT}/k3`, 'info', undefined, 'w-8'),
    ev(890, 'r/tree', 'added', `${ROOT}/k3`, [40, 41, 1], 'w-8'),
    ev(891, 'r/children', 'added', `${ROOT}/k3`, [40, 42, 1], 'w-8'),
    ev(892, 'r/tree', 'removed', `${ROOT}/k3`, [40, 41, 1], 'w-8'),
    ev(893, 'r/children', 'removed', `${ROOT}/k3`, [40, 42, 1], 'w-8'),
  ]);
  const vs = cacheViolations(h);
  assert.equal(vs.length, 1, vs.join('\n'));
  assert.match(vs[0]!, /r\/(tree|children) reported .*k3.*r\/(tree|children) showed the same payload .*: one of the two never existed/);
});

test('cache report: the page has a table of the caches, and a cache stale until re-read on its client lane', () => {
  const h = history(cleanEvents());
  const html = renderHtml(h, checkHistory(h));
  assert.match(html, /<h2>Caches<\/h2><p>cache: 6 acknowledged writes, 1 of unknown outcome\.<\/p>/);
  assert.match(html, /<tr><td>r\/tree<\/td><td>tree on <code>\/c\/cache<\/code><\/td><td>auto \(persistent\)<\/td><td>8<\/td><td>1<\/td><td>1<\/td><td>SYNCED, 4 nodes<\/td><\/tr>/);
  assert.match(html, /<rect class="cachestale"[^>]*><title>cache r\/tree STALE until re-read<\/title>/);
});
