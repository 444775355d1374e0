// The discovery check on hand-made histories (T = 4000 ms, so the bound is 18 s): caches that
// hold every registered instance at its acknowledged version a bound after faults heal, and drop
// an unregistered one within it, pass; a cache still lacking an instance or a write past the
// bound, still holding an unregistered instance, going back to an older version, or holding a
// version nobody wrote, fails; what a cache shows during a fault, or within the bound after it,
// is not judged.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHistory, DEFAULT_CLIENT_COUNTS, CI_CLIENT_COUNTS, type ChaosEvent, type ChaosHistory } from '../../src/testing/index.js';
import { planWorkloads } from '../../src/testing/chaos/plan.js';
import { byTime, historyOf } from './histories.js';

const spec = { name: 'disc', kind: 'discovery' as const, path: '/c/disc', maxLeases: 1 };
const history = (events: ChaosEvent[]): ChaosHistory => historyOf(spec, byTime(events), { endedAt: 200_000 });
const op = (t: number, instance: string, what: 'register' | 'update' | 'unregister', phase: 'invoke' | 'ok' | 'fail', version?: number): ChaosEvent => ({
  t,
  client: instance.split('-i')[0]!,
  type: 'discovery',
  phase,
  workload: 'disc',
  op: what,
  instance,
  ...(version !== undefined && { version }),
});
/** A call's invoke and ok, 10 ms apart. */
const call = (t: number, instance: string, what: 'register' | 'update' | 'unregister', version?: number): ChaosEvent[] => [op(t, instance, what, 'invoke', version), op(t + 10, instance, what, 'ok', version)];
const view = (t: number, client: string, instances: Record<string, number>, final?: boolean): ChaosEvent => ({ t, client, type: 'discovery-view', workload: 'disc', instances, synced: true, ...(final && { final }) });
const fault = (t0: number, t1: number, id: number): ChaosEvent[] => [
  { t: t0, client: 'nemesis', type: 'fault', phase: 'start', id, fault: 'partition', target: 'a' },
  { t: t1, client: 'nemesis', type: 'fault', phase: 'end', id, fault: 'partition', target: 'a' },
];
const check = (events: ChaosEvent[]) => checkHistory(history(events), { checks: ['discovery'] }).violations;

// Two clients a and b; a's instance a-i0 (v0, then v1 at 5 s, v2 during a partition of a from
// 10 s to 20 s, seen by b at 25 s); b's instance b-i0.
const base: ChaosEvent[] = [
  view(500, 'a', {}),
  view(600, 'b', {}),
  ...call(1000, 'a-i0', 'register', 0),
  view(1020, 'a', { 'a-i0': 0 }),
  view(1030, 'b', { 'a-i0': 0 }),
  ...call(2000, 'b-i0', 'register', 0),
  view(2020, 'a', { 'a-i0': 0, 'b-i0': 0 }),
  view(2030, 'b', { 'a-i0': 0, 'b-i0': 0 }),
  ...call(5000, 'a-i0', 'update', 1),
  view(5020, 'a', { 'a-i0': 1, 'b-i0': 0 }),
  view(5030, 'b', { 'a-i0': 1, 'b-i0': 0 }),
  ...fault(10_000, 20_000, 1),
  ...call(12_000, 'a-i0', 'update', 2),
  view(12_020, 'a', { 'a-i0': 2, 'b-i0': 0 }),
  view(15_000, 'b', { 'b-i0': 0 }),
  view(25_000, 'b', { 'a-i0': 2, 'b-i0': 0 }),
  view(90_000, 'a', { 'a-i0': 2, 'b-i0': 0 }, true),
  view(90_000, 'b', { 'a-i0': 2, 'b-i0': 0 }, true),
  ...call(90_100, 'a-i0', 'unregister'),
  ...call(90_100, 'b-i0', 'unregister'),
];

test('discovery check: caches complete and fresh a bound after the heal, an instance missing only during the fault and the bound, pass', () => {
  assert.deepEqual(check(base), []);
});

test('discovery check: an instance or a write still missing from a cache past the bound after the heal is reported', () => {
  const lacking = base.filter((e) => !(e.type === 'discovery-view' && e.t === 25_000));
  const found = check(lacking);
  assert.ok(found.length >= 1);
  assert.match(found[0]!.message, /b's cache lacked a-i0 18000 ms after version \d was acknowledged/);
  // Back, but at the old version: the write acknowledged during the fault is missing.
  const stale = lacking.concat([view(25_000, 'b', { 'a-i0': 1, 'b-i0': 0 })]);
  const found2 = check(stale);
  assert.equal(found2.length, 1);
  assert.match(found2[0]!.message, /b's cache held a-i0 at version 1 18000 ms after version 2 was acknowledged/);
  // Late but within the bound (37 s < 20 s + 18 s): fine.
  assert.deepEqual(check(lacking.concat([view(37_000, 'b', { 'a-i0': 2, 'b-i0': 0 })])), []);
});

test('discovery check: an unregistered instance still in a cache past the bound is reported', () => {
  const leaves = [...base, ...call(40_000, 'b-i1', 'register', 0), view(40_020, 'a', { 'a-i0': 2, 'b-i0': 0, 'b-i1': 0 }), ...call(50_000, 'b-i1', 'unregister'), view(50_020, 'b', { 'a-i0': 2, 'b-i0': 0 })];
  // a never drops b-i1 (its later views hold it): reported.
  const ghost = leaves.map((e) => (e.type === 'discovery-view' && e.client === 'a' && e.t === 90_000 ? view(90_000, 'a', { 'a-i0': 2, 'b-i0': 0, 'b-i1': 0 }, true) : e));
  const found = check(ghost);
  assert.ok(found.some((v) => /a's cache still held b-i1 18000 ms or more after it was unregistered/.test(v.message)), JSON.stringify(found));
  // a drops it within the bound: fine.
  assert.deepEqual(check(leaves.concat([view(51_000, 'a', { 'a-i0': 2, 'b-i0': 0 })]).map((e) => e)), []);
});

test('discovery check: a version going back, or one no call wrote, is reported even during a fault', () => {
  const back = base.concat([view(13_000, 'a', { 'a-i0': 1, 'b-i0': 0 })]);
  assert.ok(check(back).some((v) => /a's cache went back from version 2 to 1 of a-i0/.test(v.message)));
  const forged = base.concat([view(14_000, 'b', { 'a-i0': 7, 'b-i0': 0 })]);
  assert.ok(check(forged).some((v) => /held a-i0 at version 7, which no call wrote \(the highest tried: 2\)/.test(v.message)));
  // A failed update's version may show up (its write may have landed).
  const failed = base.concat([op(30_000, 'a-i0', 'update', 'invoke', 3), op(35_000, 'a-i0', 'update', 'fail', 3), view(36_000, 'b', { 'a-i0': 3, 'b-i0': 0 })]);
  assert.ok(!check(failed).some((v) => /no call wrote/.test(v.message)));
});

test('discovery check: nothing is judged while faults overlap without a quiet interval as long as the bound', () => {
  const busy: ChaosEvent[] = [view(500, 'a', {}), view(600, 'b', {}), ...call(1000, 'a-i0', 'register', 0)];
  for (let i = 0; i < 20; i++) busy.push(...fault(2000 + i * 10_000, 7000 + i * 10_000, i + 1));
  busy.push(view(199_000, 'b', {}, true));
  assert.deepEqual(check(busy), []);
});

test('discovery workload plan: 3 clients by default on one session each, none in the CI mix', () => {
  assert.equal(DEFAULT_CLIENT_COUNTS.discovery, 3);
  assert.equal(CI_CLIENT_COUNTS.discovery, 0);
  const { workloads, clients } = planWorkloads('/b', { discovery: 3 });
  assert.deepEqual(workloads, [{ name: 'disc', kind: 'discovery', path: '/b/disc', maxLeases: 1 }]);
  assert.deepEqual(clients.map((c) => [c.name, c.sessions]), [['disc-1', 1], ['disc-2', 1], ['disc-3', 1]]);
});
