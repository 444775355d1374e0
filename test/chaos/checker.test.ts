// The chaos checker over doctored histories: a table of histories that must pass, and of
// histories that must fail, each with the check that must catch it. No server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHistory, type ChaosEvent, type ChaosHistory, type CheckName, type FinalState, type WorkloadSpec } from '../../src/testing/index.js';

const MUTEX: WorkloadSpec = { name: 'mutex', kind: 'mutex', path: '/c/mutex', maxLeases: 1, counterPath: '/c/mutex-counter', register: 'mutex' };
const SEM: WorkloadSpec = { name: 'sem', kind: 'semaphore', path: '/c/sem', maxLeases: 2 };
const RW: WorkloadSpec = { name: 'rw', kind: 'rwlock', path: '/c/rw', maxLeases: 1 };
const LATCH: WorkloadSpec = { name: 'latch', kind: 'latch', path: '/c/latch', maxLeases: 1, register: 'latch' };
const TAKE: WorkloadSpec = { name: 'take', kind: 'queue-at-most-once', path: '/c/take', maxLeases: 1 };
const CONSUME: WorkloadSpec = { name: 'consume', kind: 'queue-at-least-once', path: '/c/consume', maxLeases: 1 };
const CACHE: WorkloadSpec = { name: 'cache', kind: 'cache', path: '/c/cache', maxLeases: 1 };
const ZKR: WorkloadSpec = { name: 'zkr', kind: 'zkr', path: '/c/zkr', maxLeases: 1 };
const ALL = [MUTEX, SEM, RW, LATCH, TAKE, CONSUME, CACHE, ZKR];

const clean = (): FinalState => ({
  counters: { mutex: 0 },
  queueItems: { take: [], consume: [] },
  ephemerals: [],
  members: [1, 2, 3].map((member) => ({ member, watches: 0, clientConnections: [], ephemerals: 0, trackedSessions: member === 1 ? [] : null, globalSessions: member === 1 ? 0 : null })),
});

function history(events: ChaosEvent[], final: Partial<FinalState> | null = {}): ChaosHistory {
  return {
    version: 1,
    meta: { seed: 1, seconds: 1, startedAt: 0, endedAt: 10_000, sessionTimeoutMs: 4000, clients: [{ name: 'q', workload: 'take' }], workloads: ALL, members: [1, 2, 3] },
    events,
    ...(final !== null && { final: { ...clean(), ...final } }),
  };
}

let attempt = 0;
/** A belief interval: grant at `from`, end at `to` (undefined: never ended). */
function hold(client: string, workload: string, from: number, to: number | undefined, token: number, extra: { mode?: 'exclusive' | 'read' | 'write' | 'lease'; leases?: number; why?: 'release' | 'lost'; downgradeOf?: string; attempt?: string; lostAtGrant?: boolean; sessionId?: string } = {}): ChaosEvent[] {
  const a = extra.attempt ?? `a${attempt++}`;
  const grant: ChaosEvent = {
    type: 'grant',
    t: from,
    client,
    workload,
    attempt: a,
    token: String(token),
    leases: extra.leases ?? 1,
    mode: extra.mode ?? 'exclusive',
    sessionId: extra.sessionId ?? '0x1',
    lostAtGrant: extra.lostAtGrant ?? false,
    ...(extra.downgradeOf !== undefined && { downgradeOf: extra.downgradeOf }),
  };
  return to === undefined ? [grant] : [grant, { type: 'end', t: to, client, workload, attempt: a, why: extra.why ?? 'release' }];
}
const counter = (t: number, client: string, value: number, phase: 'ok' | 'info' | 'fail' = 'ok'): ChaosEvent => ({ type: 'counter', t, client, phase, workload: 'mutex', attempt: 'x', op: `op${t}`, value });
const resource = (t: number, writer: string, token: number, accepted: boolean, highest = -1): ChaosEvent => ({ type: 'resource', t, client: 'resource', register: 'mutex', writer, token: String(token), value: 1, accepted, highest: String(highest) });
const put = (t: number, workload: string, item: string, phase: 'invoke' | 'ok' | 'fail' = 'ok'): ChaosEvent[] =>
  phase === 'invoke' ? [{ type: 'put', t, client: 'p', phase, workload, item }] : [{ type: 'put', t, client: 'p', phase: 'invoke', workload, item }, { type: 'put', t: t + 1, client: 'p', phase, workload, item }];
const take = (t: number, item?: string): ChaosEvent => (item === undefined ? { type: 'take', t, client: 'q', phase: 'fail', workload: 'take', error: 'CONNECTION_LOSS' } : { type: 'take', t, client: 'q', phase: 'ok', workload: 'take', item });
const handled = (t: number, item: string, outcome: 'resolved' | 'threw' = 'resolved', path = `/c/consume/items/${item}`): ChaosEvent[] => [
  { type: 'deliver', t, client: 'q', workload: 'consume', item, redeliveries: 0, path },
  { type: 'handled', t: t + 1, client: 'q', workload: 'consume', item, redeliveries: 0, outcome, path },
];
const session = (t: number, client: string, state: string, sessionId = '0x1'): ChaosEvent => ({ type: 'session', t, client, state, sessionId });
const deleted = (t: number, target: string): ChaosEvent[] => [
  { type: 'fault', t, client: 'nemesis', phase: 'start', id: t, fault: 'delete-waiter', target, detail: `/c/mutex/_c_x-lock-0000000007: deleted` },
  { type: 'fault', t: t + 1, client: 'nemesis', phase: 'end', id: t, fault: 'delete-waiter', target, detail: 'done' },
];
const expire = (t: number, end: number, target: string): ChaosEvent[] => [
  { type: 'fault', t, client: 'nemesis', phase: 'start', id: t, fault: 'expire', target },
  { type: 'fault', t: end, client: 'nemesis', phase: 'end', id: t, fault: 'expire', target },
];

interface Case {
  name: string;
  history: ChaosHistory;
  /** The checks that must report (empty: the history passes). */
  fails: CheckName[];
  slackMs?: number;
  excused?: number;
}

const cases: Case[] = [
  {
    name: 'mutex: disjoint holders, tokens up, counter and resource consistent',
    history: history([...hold('a', 'mutex', 100, 200, 10), counter(150, 'a', 1), resource(160, 'a', 10, true), ...hold('b', 'mutex', 300, 400, 11), counter(350, 'b', 2), resource(360, 'b', 11, true, 10)], { counters: { mutex: 2 } }),
    fails: [],
  },
  { name: 'mutex: two holders overlap', history: history([...hold('a', 'mutex', 100, 300, 10), ...hold('b', 'mutex', 250, 400, 11)]), fails: ['exclusion'] },
  // Two flows of one client (attempts a-a0, a-b0): beliefs are keyed by client and attempt, so
  // one process's two acquisitions exclude each other like two processes'.
  {
    name: 'mutex: two flows of one client hand over, tokens up, counter and resource consistent',
    history: history([...hold('a', 'mutex', 100, 200, 10, { attempt: 'a-a0' }), counter(150, 'a', 1), resource(160, 'a', 10, true), ...hold('a', 'mutex', 200, 300, 11, { attempt: 'a-b0' }), counter(250, 'a', 2), resource(260, 'a', 11, true, 10)], { counters: { mutex: 2 } }),
    fails: [],
  },
  // zkr: a hold runs from zkr's "holding" stamp to its "process group is gone" stamp.
  { name: 'zkr: one command after another', history: history([...hold('a', 'zkr', 100, 300, 10), ...hold('b', 'zkr', 310, 400, 11)]), fails: [] },
  { name: "zkr: the next command starts before the last one's group is gone", history: history([...hold('a', 'zkr', 100, 300, 10, { why: 'lost' }), ...hold('b', 'zkr', 250, 400, 11)]), fails: ['exclusion'] },
  { name: 'mutex: two flows of one client overlap', history: history([...hold('a', 'mutex', 100, 300, 10, { attempt: 'a-a0' }), ...hold('a', 'mutex', 250, 400, 11, { attempt: 'a-b0' })]), fails: ['exclusion'] },
  { name: 'mutex: one token granted to two flows of one client', history: history([...hold('a', 'mutex', 100, 200, 10, { attempt: 'a-a0' }), ...hold('a', 'mutex', 300, 400, 10, { attempt: 'a-b0' })]), fails: ['tokens'] },
  { name: 'mutex: an overlap within the clock slack is not counted', history: history([...hold('a', 'mutex', 100, 300, 10), ...hold('b', 'mutex', 298, 400, 11)]), fails: [], slackMs: 5 },
  { name: 'mutex: the same overlap without slack is', history: history([...hold('a', 'mutex', 100, 300, 10), ...hold('b', 'mutex', 298, 400, 11)]), fails: ['exclusion'] },
  { name: 'mutex: a holder that never said it stopped holds to the end', history: history([...hold('a', 'mutex', 100, undefined, 10), ...hold('b', 'mutex', 5000, 5100, 11)]), fails: ['exclusion'] },
  { name: 'mutex: a grant already lost when handed out is no belief', history: history([...hold('a', 'mutex', 100, 300, 10), ...hold('b', 'mutex', 200, 200, 11, { lostAtGrant: true, why: 'lost' })]), fails: [] },
  { name: 'mutex: token goes backwards in grant order', history: history([...hold('a', 'mutex', 100, 200, 11), ...hold('b', 'mutex', 300, 400, 10)]), fails: ['tokens'] },
  { name: 'mutex: one token granted twice', history: history([...hold('a', 'mutex', 100, 200, 10), ...hold('b', 'mutex', 300, 400, 10)]), fails: ['tokens'] },
  {
    name: 'forced expiry: the old holder was SUSPENDED before the next grant: excused',
    history: history([...hold('a', 'mutex', 100, 330, 10, { why: 'lost' }), session(290, 'a', 'SUSPENDED'), ...expire(280, 320, 'a'), session(330, 'a', 'LOST'), ...hold('b', 'mutex', 310, 400, 11)]),
    fails: [],
    excused: 1,
  },
  {
    name: 'forced expiry: the old holder still CONNECTED when the next was granted',
    history: history([...hold('a', 'mutex', 100, 330, 10, { why: 'lost' }), ...expire(280, 320, 'a'), session(320, 'a', 'SUSPENDED'), ...hold('b', 'mutex', 310, 400, 11)]),
    fails: ['exclusion'],
  },
  {
    name: 'a SUSPENDED holder without a forced expiry is not excused',
    history: history([...hold('a', 'mutex', 100, 330, 10, { why: 'lost' }), session(290, 'a', 'SUSPENDED'), session(330, 'a', 'LOST'), ...hold('b', 'mutex', 310, 400, 11)]),
    fails: ['exclusion'],
  },
  {
    name: 'a holder frozen (paused) past its timeout overlaps the next: excused, fencing rejects its late write',
    history: history([
      ...hold('a', 'mutex', 100, 9000, 10, { why: 'lost' }),
      { type: 'fault', t: 200, client: 'nemesis', phase: 'start', id: 1, fault: 'pause', target: 'a' },
      ...hold('b', 'mutex', 5000, 6000, 11),
      resource(5100, 'b', 11, true, 10),
      { type: 'fault', t: 8990, client: 'nemesis', phase: 'end', id: 1, fault: 'pause', target: 'a' },
      resource(8995, 'a', 10, false, 11),
    ]),
    fails: [],
    excused: 1,
  },
  {
    name: 'a holder not paused overlapping the next is not excused by a later pause',
    history: history([...hold('a', 'mutex', 100, 9000, 10, { why: 'lost' }), ...hold('b', 'mutex', 5000, 6000, 11), { type: 'fault', t: 7000, client: 'nemesis', phase: 'start', id: 1, fault: 'pause', target: 'a' }]),
    fails: ['exclusion'],
  },
  // Issue 21's three, as the ensemble nemeses and the two-session clients find them.
  {
    name: "delete-waiter: a waiter whose node was deleted is granted beside its successor (the deletion excuses nothing)",
    history: history([...hold('a', 'mutex', 100, 200, 10), ...deleted(120, 'b'), ...hold('b', 'mutex', 200, 400, 11, { attempt: 'b-a0' }), ...hold('c', 'mutex', 201, 300, 12)]),
    fails: ['exclusion'],
    excused: 0,
  },
  {
    name: 'delete-waiter: the waiter started over and queued behind its successor',
    history: history([...hold('a', 'mutex', 100, 200, 10), ...deleted(120, 'b'), ...hold('c', 'mutex', 201, 300, 12), ...hold('b', 'mutex', 300, 400, 13)]),
    fails: [],
  },
  {
    name: 'isolate-follower: a holder behind a cut-off follower, never told, overlaps the next holder (no fault excuses it)',
    history: history([
      ...hold('a', 'mutex', 100, 7000, 10),
      { type: 'fault', t: 500, client: 'nemesis', phase: 'start', id: 1, fault: 'isolate-follower', target: 'member-2' },
      ...hold('b', 'mutex', 4700, 5000, 11),
      { type: 'fault', t: 7500, client: 'nemesis', phase: 'end', id: 1, fault: 'isolate-follower', target: 'member-2' },
    ]),
    fails: ['exclusion'],
    excused: 0,
  },
  {
    name: 'two sessions of one client: a handoff whose next holder read stale data (two acknowledged increments wrote one value)',
    history: history([...hold('a', 'mutex', 100, 200, 10, { attempt: 'a-a0', sessionId: '0x1' }), counter(150, 'a', 1), ...hold('a', 'mutex', 201, 300, 11, { attempt: 'a-b0', sessionId: '0x2' }), counter(250, 'a', 1)], { counters: { mutex: 1 } }),
    fails: ['counter'],
  },
  {
    name: "two sessions of one client: the other session's suspension and forced expiry do not excuse a holder",
    history: history([...hold('a', 'mutex', 100, 330, 10, { why: 'lost', sessionId: '0x2' }), session(290, 'a', 'SUSPENDED', '0x1'), ...expire(280, 320, 'a'), session(330, 'a', 'LOST', '0x2'), ...hold('b', 'mutex', 310, 400, 11)]),
    fails: ['exclusion'],
    excused: 0,
  },
  {
    name: "two sessions of one client: the holder's own session SUSPENDED and force-expired: excused",
    history: history([...hold('a', 'mutex', 100, 330, 10, { why: 'lost', sessionId: '0x2' }), session(290, 'a', 'SUSPENDED', '0x2'), session(295, 'a', 'CONNECTED', '0x1'), ...expire(280, 320, 'a'), session(330, 'a', 'LOST', '0x2'), ...hold('b', 'mutex', 310, 400, 11)]),
    fails: [],
    excused: 1,
  },
  { name: 'semaphore: two leases at once, tokens in any order', history: history([...hold('a', 'sem', 100, 300, 12, { mode: 'lease' }), ...hold('b', 'sem', 150, 400, 11, { mode: 'lease' })]), fails: [] },
  { name: 'semaphore: three leases at once', history: history([...hold('a', 'sem', 100, 300, 10, { mode: 'lease' }), ...hold('b', 'sem', 150, 400, 11, { mode: 'lease' }), ...hold('c', 'sem', 200, 250, 12, { mode: 'lease' })]), fails: ['exclusion'] },
  { name: 'semaphore: a two-lease grant beside a one-lease grant', history: history([...hold('a', 'sem', 100, 300, 10, { mode: 'lease', leases: 2 }), ...hold('b', 'sem', 150, 400, 11, { mode: 'lease' })]), fails: ['exclusion'] },
  { name: 'rwlock: readers share', history: history([...hold('a', 'rw', 100, 300, 10, { mode: 'read' }), ...hold('b', 'rw', 150, 400, 11, { mode: 'read' })]), fails: [] },
  { name: 'rwlock: a reader beside a writer', history: history([...hold('a', 'rw', 100, 300, 10, { mode: 'write' }), ...hold('b', 'rw', 150, 400, 11, { mode: 'read' })]), fails: ['exclusion'] },
  {
    name: 'rwlock: a downgrade overlaps its own write and carries its token',
    history: history([...hold('a', 'rw', 100, 300, 10, { mode: 'write', attempt: 'w1' }), ...hold('a', 'rw', 200, 400, 10, { mode: 'read', downgradeOf: 'w1' }), ...hold('b', 'rw', 500, 600, 12, { mode: 'write' })]),
    fails: [],
  },
  {
    name: "rwlock: another client's read during a downgraded write",
    history: history([...hold('a', 'rw', 100, 300, 10, { mode: 'write', attempt: 'w2' }), ...hold('a', 'rw', 200, 400, 10, { mode: 'read', downgradeOf: 'w2' }), ...hold('b', 'rw', 250, 280, 12, { mode: 'read' })]),
    fails: ['exclusion'],
  },
  {
    name: "rwlock: one flow reads during another flow's write, in one client (a downgrade is matched by attempt, not client)",
    history: history([...hold('a', 'rw', 100, 300, 10, { mode: 'write', attempt: 'a-a0' }), ...hold('a', 'rw', 200, 400, 11, { mode: 'read', attempt: 'a-b0' })]),
    fails: ['exclusion'],
  },
  {
    name: "rwlock: a flow's downgrade beside its own write only, the other flow's read after both",
    history: history([...hold('a', 'rw', 100, 300, 10, { mode: 'write', attempt: 'a-a0' }), ...hold('a', 'rw', 200, 400, 10, { mode: 'read', attempt: 'a-a0-d', downgradeOf: 'a-a0' }), ...hold('a', 'rw', 350, 450, 12, { mode: 'read', attempt: 'a-b0' })]),
    fails: [],
  },
  { name: 'rwlock: a writer after a reader with a smaller token', history: history([...hold('a', 'rw', 100, 200, 12, { mode: 'read' }), ...hold('b', 'rw', 300, 400, 11, { mode: 'write' })]), fails: ['tokens'] },
  { name: 'latch: two leaders at once', history: history([...hold('a', 'latch', 100, 300, 10), ...hold('b', 'latch', 299, 400, 11)]), fails: ['exclusion'] },
  { name: 'counter: fewer than acknowledged (a lost update)', history: history([counter(100, 'a', 1), counter(200, 'b', 2), counter(300, 'a', 3)], { counters: { mutex: 2 } }), fails: ['counter'] },
  { name: 'counter: one more than acknowledged, one outcome unknown', history: history([counter(100, 'a', 1), counter(200, 'b', 2, 'info'), counter(300, 'a', 3)], { counters: { mutex: 3 } }), fails: [] },
  { name: 'counter: more than acknowledged with no unknown outcome', history: history([counter(100, 'a', 1), counter(300, 'a', 2)], { counters: { mutex: 3 } }), fails: ['counter'] },
  { name: 'counter: two acknowledged increments wrote the same value', history: history([counter(100, 'a', 1), counter(200, 'b', 1)], { counters: { mutex: 2 } }), fails: ['counter'] },
  { name: 'resource: accepts a stale token', history: history([...hold('a', 'mutex', 100, 200, 10), ...hold('b', 'mutex', 300, 400, 11), resource(350, 'b', 11, true), resource(360, 'a', 10, true, 11)]), fails: ['resource'] },
  { name: 'resource: rejecting a stale token is its job', history: history([...hold('a', 'mutex', 100, 200, 10), ...hold('b', 'mutex', 300, 400, 11), resource(350, 'b', 11, true), resource(360, 'a', 10, false, 11)]), fails: [] },
  { name: 'resource: accepts a token never granted to the writer', history: history([...hold('a', 'mutex', 100, 200, 10), resource(150, 'b', 10, true)]), fails: ['resource'] },
  { name: 'at-most-once: every acknowledged put taken once or left', history: history([...put(10, 'take', 'i1'), ...put(20, 'take', 'i2'), take(30, 'i1'), take(40, 'i2')]), fails: [] },
  { name: 'at-most-once: an item handed out twice', history: history([...put(10, 'take', 'i1'), take(30, 'i1'), take(40, 'i1')]), fails: ['queue'] },
  { name: 'at-most-once: taken and still queued', history: history([...put(10, 'take', 'i1'), take(30, 'i1')], { queueItems: { take: ['i1'], consume: [] } }), fails: ['queue'] },
  { name: 'at-most-once: one put, two items left', history: history([...put(10, 'take', 'i1')], { queueItems: { take: ['i1', 'i1'], consume: [] } }), fails: ['queue'] },
  { name: 'at-most-once: an item nobody put', history: history([take(30, 'ghost')]), fails: ['queue'] },
  { name: 'at-most-once: an acknowledged put vanished', history: history([...put(10, 'take', 'i1')]), fails: ['queue'] },
  { name: 'at-most-once: a failed take may have lost one', history: history([...put(10, 'take', 'i1'), take(30)]), fails: [] },
  { name: "at-most-once: a taker's dropped connection may have lost one", history: history([...put(10, 'take', 'i1'), session(30, 'q', 'SUSPENDED'), session(40, 'q', 'RECONNECTED')]), fails: [] },
  { name: "at-most-once: another client's dropped connection loses nothing", history: history([...put(10, 'take', 'i1'), session(30, 'p', 'SUSPENDED')]), fails: ['queue'] },
  { name: 'at-most-once: a put that failed may be missing', history: history([...put(10, 'take', 'i1', 'fail')]), fails: [] },
  { name: 'at-least-once: every put handled, once or more', history: history([...put(10, 'consume', 'c1'), ...handled(20, 'c1', 'threw'), ...handled(30, 'c1'), ...handled(40, 'c1')]), fails: [] },
  { name: 'at-least-once: an acknowledged put never handled to completion', history: history([...put(10, 'consume', 'c1'), ...handled(20, 'c1', 'threw')]), fails: ['queue'] },
  { name: 'at-least-once: delivered from two nodes', history: history([...put(10, 'consume', 'c1'), ...handled(20, 'c1', 'resolved', '/a'), ...handled(30, 'c1', 'resolved', '/b')]), fails: ['queue'] },
  { name: 'at-least-once: delivered but never put', history: history([...handled(20, 'ghost')]), fails: ['queue'] },
  { name: 'at-least-once: still queued after the drain', history: history([...put(10, 'consume', 'c1'), ...handled(20, 'c1')], { queueItems: { take: [], consume: ['c1'] } }), fails: ['queue'] },
  // The cache check in full: test/chaos/cache-checker.test.ts.
  {
    name: 'cache: a cache shows a state no writer produced',
    history: history([
      { type: 'cache-write', t: 10, client: 'w', phase: 'invoke', workload: 'cache', op: 'a0', kind: 'create', path: '/c/cache/k0', data: 'w-a0' },
      { type: 'cache-write', t: 11, client: 'w', phase: 'ok', workload: 'cache', op: 'a0', kind: 'create', path: '/c/cache/k0', data: 'w-a0', czxid: '20', mzxid: '20', version: 0 },
      { type: 'cache', t: 12, client: 'r', workload: 'cache', cache: 'r/tree', event: 'added', path: '/c/cache/k0', czxid: '20', mzxid: '21', version: 0, data: 'w-a0' },
    ], null),
    fails: ['cache', 'leftovers'],
  },
  { name: 'leftovers: an ephemeral node', history: history([], { ephemerals: [{ path: '/c/mutex/_c_x-lock-0000000001', owner: '0x1' }] }), fails: ['leftovers'] },
  { name: 'leftovers: a watch', history: history([], { members: [{ member: 1, watches: 2, clientConnections: [], ephemerals: 0, trackedSessions: null, globalSessions: null }] }), fails: ['leftovers'] },
  { name: 'leftovers: a session the leader still tracks', history: history([], { members: [{ member: 1, watches: 0, clientConnections: [], ephemerals: 0, trackedSessions: ['0x2'], globalSessions: 1 }] }), fails: ['leftovers'] },
  { name: 'leftovers: a client session still connected', history: history([], { members: [{ member: 2, watches: 0, clientConnections: ['0x1'], ephemerals: 0, trackedSessions: null, globalSessions: null }] }), fails: ['leftovers'] },
  { name: 'leftovers: a member that did not answer', history: history([], { members: [{ member: 3, watches: null, clientConnections: [], ephemerals: null, trackedSessions: null, globalSessions: null }] }), fails: ['leftovers'] },
  { name: 'leftovers: no final state', history: history([], null), fails: ['leftovers'] },
  { name: 'harness: a client crashed', history: history([{ type: 'note', t: 5, client: 'a', level: 'error', message: 'client crashed: boom' }]), fails: ['harness'] },
];

for (const c of cases) {
  test(`checker: ${c.name} -> ${c.fails.length === 0 ? 'passes' : `fails ${c.fails.join(', ')}`}`, () => {
    const result = checkHistory(c.history, { slackMs: c.slackMs ?? 0 });
    const found = [...new Set(result.violations.map((v) => v.check))].sort();
    assert.deepEqual(found, [...c.fails].sort(), result.violations.map((v) => v.message).join('\n'));
    for (const v of result.violations) assert.ok(v.message.length > 0);
    if (c.excused !== undefined) assert.equal(result.excused.length, c.excused);
  });
}

test('checker: every check is shown able to fail', () => {
  const all: CheckName[] = ['exclusion', 'tokens', 'counter', 'resource', 'queue', 'cache', 'leftovers', 'harness'];
  for (const name of all) assert.ok(cases.some((c) => c.fails.includes(name)), `no doctored history makes ${name} fail`);
});

test('checker: options.checks reports only the checks asked for', () => {
  const h = history([...hold('a', 'mutex', 100, 300, 11), ...hold('b', 'mutex', 250, 400, 10)], null);
  assert.deepEqual([...new Set(checkHistory(h).violations.map((v) => v.check))].sort(), ['exclusion', 'leftovers']);
  assert.deepEqual(checkHistory(h, { checks: ['tokens'] }).violations, []);
  assert.deepEqual([...new Set(checkHistory(h, { checks: ['exclusion', 'tokens'] }).violations.map((v) => v.check))], ['exclusion']);
});

test('checker: a violation carries the events that show it', () => {
  const result = checkHistory(history([...hold('a', 'mutex', 100, 300, 10), ...hold('b', 'mutex', 250, 400, 11)]));
  const [v] = result.violations;
  assert.ok(v);
  assert.equal(v.t, 250);
  assert.deepEqual(v.events.map((e) => `${e.client} ${e.type}`), ['a grant', 'b grant', 'a end', 'b end']);
});
