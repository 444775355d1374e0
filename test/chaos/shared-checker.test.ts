// The shared-count check on hand-made histories: a good run passes; a lost increment, a doubled
// one, a final count above what the unknown outcomes allow, a client seeing zxids out of order
// or the count go down, and two clients disagreeing on a zxid's value are each reported.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHistory, type ChaosEvent, type ChaosHistory } from '../../src/testing/index.js';

const spec = { name: 'scount', kind: 'shared-count' as const, path: '/c/scount', maxLeases: 1 };
const history = (events: ChaosEvent[], final: number | null): ChaosHistory => ({
  version: 1,
  meta: { seed: 1, seconds: 1, startedAt: 0, endedAt: 100, sessionTimeoutMs: 4000, clients: [], workloads: [spec], members: [] },
  events,
  final: { counters: { scount: final }, queueItems: {}, ephemerals: [], members: [] },
});
let t = 0;
const call = (client: string, op: string, phase: 'invoke' | 'ok' | 'fail' | 'info', value: number, zxid?: number): ChaosEvent => ({
  t: ++t,
  client,
  type: 'shared-count',
  phase,
  workload: 'scount',
  op,
  value,
  ...(zxid !== undefined && { zxid: String(zxid) }),
});
const saw = (client: string, value: number, zxid: number): ChaosEvent => ({ t: ++t, client, type: 'shared-seen', workload: 'scount', value, zxid: String(zxid) });
const violations = (events: ChaosEvent[], final: number | null): string[] => checkHistory(history(events, final), { checks: ['shared'] }).violations.map((v) => v.message);

/** a and b increment 0 → 1 → 2 → 3; b's first try is refused; a's last has an unknown outcome and was applied. */
const good = (): ChaosEvent[] => [
  call('a', 'a-s0', 'invoke', 1),
  call('b', 'b-s0', 'invoke', 1),
  call('a', 'a-s0', 'ok', 1, 100),
  saw('a', 1, 100),
  call('b', 'b-s0', 'fail', 1),
  saw('b', 1, 100),
  call('b', 'b-s1', 'invoke', 2),
  call('b', 'b-s1', 'ok', 2, 105),
  saw('b', 2, 105),
  saw('a', 2, 105),
  call('a', 'a-s1', 'invoke', 3),
  call('a', 'a-s1', 'info', 3),
  saw('b', 3, 110),
  saw('a', 3, 110),
];

test('shared-count check: a good history passes, with the unknown outcome applied or not', () => {
  assert.deepEqual(violations(good(), 3), []);
  // The unknown one not applied: nobody saw 3.
  const notApplied = good().filter((e) => !(e.type === 'shared-seen' && e.value === 3));
  assert.deepEqual(violations(notApplied, 2), []);
});

test('shared-count check: lost and doubled increments, a final count out of range, unreadable', () => {
  assert.match(violations(good(), 1).join('\n'), /shared count is 1, but 2 increments were acknowledged/);
  assert.match(violations(good(), 4).join('\n'), /expected 2\.\.3/);
  // Two acknowledged writes of one value: one of them did not compare.
  const doubled = [...good(), call('b', 'b-s2', 'invoke', 2), call('b', 'b-s2', 'ok', 2)];
  assert.match(violations(doubled, 3).join('\n'), /two acknowledged increments both wrote 2/);
  assert.match(violations(good(), null).join('\n'), /could not be read/);
  // A value seen above the final count.
  assert.match(violations([...good(), saw('a', 9, 120)], 3).join('\n'), /above its final value 3/);
});

test("shared-count check: a client's values out of zxid order, going down, or disagreeing with another's", () => {
  const outOfOrder = [saw('a', 1, 100), saw('a', 2, 105), saw('a', 1, 100)];
  assert.match(violations(outOfOrder, 2).join('\n'), /not in zxid order/);
  const down = [saw('a', 2, 100), saw('a', 1, 105)];
  assert.match(violations(down, 2).join('\n'), /a count only rises/);
  const disagree = [saw('a', 1, 100), saw('b', 2, 100)];
  assert.match(violations(disagree, 2).join('\n'), /zxid 100 is 1 for a but 2 for b/);
  // An acknowledged write and an observer disagreeing on its zxid.
  const ackedVsSeen = [call('a', 'a-s0', 'invoke', 1), call('a', 'a-s0', 'ok', 1, 100), saw('b', 5, 100)];
  assert.match(violations(ackedVsSeen, 5).join('\n'), /zxid 100 is 1 for a but 5 for b/);
  // Another client's events interleaved do not make one client's order wrong.
  const interleaved = [saw('a', 1, 100), saw('b', 2, 105), saw('a', 2, 105), saw('b', 3, 110)];
  assert.deepEqual(violations(interleaved, 3).filter((m) => /order|rises| for /.test(m)), []);
});
