// The group check on hand-made histories (T = 4000 ms, so the bound is 18 s): views that hold
// every live member a bound after faults heal, and drop a closed member within it, pass; a view
// that still lacks a live member, or still holds a closed one, past the bound fails; what a view
// shows during a fault, or within the bound after it, is not judged.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHistory, type ChaosEvent, type ChaosHistory } from '../../src/testing/index.js';
import { byTime, historyOf } from './histories.js';

const spec = { name: 'group', kind: 'group' as const, path: '/c/group', maxLeases: 1 };
const history = (events: ChaosEvent[]): ChaosHistory => historyOf(spec, byTime(events), { endedAt: 200_000 });
const op = (t: number, member: string, what: 'start' | 'close', phase: 'invoke' | 'ok' = 'ok'): ChaosEvent => ({ t, client: member.split('-g')[0]!, type: 'group', phase, workload: 'group', op: what, member });
const view = (t: number, member: string, members: string[]): ChaosEvent => ({ t, client: member.split('-g')[0]!, type: 'group-view', workload: 'group', member, members: [...members].sort(), synced: true });
const fault = (t0: number, t1: number, id: number): ChaosEvent[] => [
  { t: t0, client: 'nemesis', type: 'fault', phase: 'start', id, fault: 'partition', target: 'c1' },
  { t: t1, client: 'nemesis', type: 'fault', phase: 'end', id, fault: 'partition', target: 'c1' },
];
const check = (events: ChaosEvent[]) => checkHistory(history(events), { checks: ['group'] }).violations;

// Two members, a partition of b from 10 s to 20 s: a loses b at 15 s and sees it back at 25 s.
const base: ChaosEvent[] = [
  op(1000, 'a-g0', 'start'),
  view(1000, 'a-g0', ['a-g0']),
  op(2000, 'b-g0', 'start'),
  view(2000, 'b-g0', ['a-g0', 'b-g0']),
  view(2100, 'a-g0', ['a-g0', 'b-g0']),
  ...fault(10_000, 20_000, 1),
  view(15_000, 'a-g0', ['a-g0']),
  view(25_000, 'a-g0', ['a-g0', 'b-g0']),
  op(60_000, 'a-g0', 'close', 'invoke'),
  op(60_100, 'a-g0', 'close'),
  op(60_000, 'b-g0', 'close', 'invoke'),
  op(60_100, 'b-g0', 'close'),
];

test('group check: views complete a bound after the heal, and a member absent only during the fault and the bound, pass', () => {
  assert.deepEqual(check(base), []);
});

test('group check: a live member still missing from a view past the bound after the heal is reported', () => {
  const bad = base.filter((e) => !(e.type === 'group-view' && e.t === 25_000));
  const found = check(bad);
  assert.equal(found.length, 1);
  assert.match(found[0]!.message, /a-g0's view lacked b-g0 18000 ms into a quiet interval/);
  // Late but within the bound (37 s < 20 s + 18 s): fine.
  const late = bad.concat([view(37_000, 'a-g0', ['a-g0', 'b-g0'])]);
  assert.deepEqual(check(late), []);
});

test('group check: a member that left for good and is still in a view past the bound is reported', () => {
  // b-g0 leaves at 30 s; c joins; a drops b at 31 s: fine.
  const leaves: ChaosEvent[] = [
    ...base.filter((e) => !(e.type === 'group' && e.member === 'b-g0' && e.op === 'close')),
    op(30_000, 'b-g0', 'close', 'invoke'),
    op(30_050, 'b-g0', 'close'),
    view(31_000, 'a-g0', ['a-g0']),
  ];
  assert.deepEqual(check(leaves), []);
  // a never drops it.
  const ghost = leaves.filter((e) => !(e.type === 'group-view' && e.t === 31_000));
  const found = check(ghost);
  assert.equal(found.length, 1);
  assert.match(found[0]!.message, /a-g0's view still held b-g0/);
  // A view recorded much later that holds it again is reported too, even during a fault.
  const back = leaves.concat([...fault(50_000, 55_000, 2), view(52_000, 'a-g0', ['a-g0', 'b-g0'])]);
  assert.ok(check(back).some((v) => /still held b-g0/.test(v.message) && v.t === 52_000));
  // A member that joins after the close must not see it either.
  const newcomer = leaves.concat([op(40_000, 'c-g0', 'start'), view(40_000, 'c-g0', ['a-g0', 'b-g0', 'c-g0']), view(40_100, 'a-g0', ['a-g0', 'c-g0'])]);
  assert.ok(check(newcomer).some((v) => /c-g0's view still held b-g0/.test(v.message)));
});

test('group check: nothing is judged while faults overlap without a quiet interval as long as the bound', () => {
  // Faults back to back (gaps of 5 s < 18 s): a view missing b throughout is not a violation.
  const busy: ChaosEvent[] = [
    op(1000, 'a-g0', 'start'),
    view(1000, 'a-g0', ['a-g0']),
    op(2000, 'b-g0', 'start'),
    view(2000, 'b-g0', ['a-g0', 'b-g0']),
    ...fault(2500, 10_000, 1),
    ...fault(15_000, 30_000, 2),
    ...fault(35_000, 50_000, 3),
    op(52_000, 'a-g0', 'close', 'invoke'),
    op(52_000, 'b-g0', 'close', 'invoke'),
  ];
  assert.deepEqual(check(busy), []);
  // Before the first fault, 2.5 s is too short to judge as well; after the last one the lives end first.
});
