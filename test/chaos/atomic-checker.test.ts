// The atomic check on hand-made histories: acknowledged updates that add up pass (with unknown
// outcomes bounding the range); a lost update, a doubled one, a failed one that was applied, two
// updates claiming one value, a wrong post value, and an unreadable final value are reported.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHistory, type ChaosEvent, type ChaosHistory } from '../../src/testing/index.js';

const spec = { name: 'atomic', kind: 'atomic' as const, path: '/c/atomic', maxLeases: 1, numberPath: '/c/atomic-number' };
const history = (events: ChaosEvent[], final: string | null | undefined): ChaosHistory => ({
  version: 1,
  meta: { seed: 1, seconds: 1, startedAt: 0, endedAt: 100, sessionTimeoutMs: 4000, clients: [], workloads: [spec], members: [] },
  events,
  final: { counters: {}, queueItems: {}, ephemerals: [], members: [], ...(final !== undefined && { numbers: { atomic: final } }) },
});
let n = 0;
const ok = (client: string, pre: number, delta = 1, post = pre + delta): ChaosEvent => ({ t: ++n, client, type: 'atomic', phase: 'ok', workload: 'atomic', op: `${client}-${n}`, delta, pre: String(pre), post: String(post) });
const other = (client: string, phase: 'info' | 'fail', delta = 1): ChaosEvent => ({ t: ++n, client, type: 'atomic', phase, workload: 'atomic', op: `${client}-${n}`, delta, error: 'x' });
const check = (events: ChaosEvent[], final: string | null | undefined) => checkHistory(history(events, final), { checks: ['atomic'] }).violations;

test('atomic check: acknowledged updates that add up pass; unknown outcomes widen the range', () => {
  const good = [ok('a', 0), ok('b', 1, 3), ok('a', 4), other('b', 'info'), other('a', 'fail', 2)];
  assert.deepEqual(check(good, '5'), [], 'the unknown one not applied');
  assert.deepEqual(check([...good.slice(0, 3), other('b', 'info'), ok('a', 6)], '7'), [], 'the unknown one applied (between)');
  assert.deepEqual(check([], '0'), []);
});

test('atomic check: a lost, a doubled, or an applied failed update is reported', () => {
  const acked = [ok('a', 0), ok('b', 1), ok('a', 2)];
  const lost = check(acked, '2');
  assert.equal(lost.length, 2);
  assert.match(lost[0]!.message, /expected 3\.\.3\): an acknowledged update was lost/);
  assert.match(lost[1]!.message, /below the value 3/);
  assert.match(check([...acked, other('b', 'info')], '5')[0]!.message, /expected 3\.\.4\): an update was applied twice/);
  assert.match(check([...acked, other('b', 'fail', 2)], '5')[0]!.message, /or a failed one was applied/);
});

test('atomic check: two updates claiming one value, a wrong post value, an unreadable final value', () => {
  const overlap = check([ok('a', 0), ok('b', 0), ok('a', 1)], '3');
  assert.equal(overlap.length, 1);
  assert.match(overlap[0]!.message, /both claim the value 0/);
  // With a delta of 3 from 1, a later update from 2 overlaps too.
  assert.match(check([ok('a', 0), ok('b', 1, 3), ok('a', 2)], '5')[0]!.message, /both claim the value 2/);
  assert.match(check([ok('a', 0, 1, 2)], '2')[0]!.message, /found 0 and wrote 2/);
  assert.match(check([ok('a', 0)], null)[0]!.message, /could not be read/);
  assert.match(check([ok('a', 0)], undefined)[0]!.message, /could not be read/);
});
