// The double-barrier check on hand-made histories: an enter that returned before memberCount
// participants had invoked enter on its round is a violation; one after them is not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHistory, type ChaosEvent, type ChaosHistory } from '../../src/testing/index.js';
import { historyOf } from './histories.js';

const spec = { name: 'dbar', kind: 'double-barrier' as const, path: '/c/dbar', maxLeases: 1, memberCount: 3 };
const history = (events: ChaosEvent[]): ChaosHistory => historyOf(spec, events, { endedAt: 100 });
const ev = (t: number, client: string, phase: 'invoke' | 'ok', round = '/c/dbar/round-1'): ChaosEvent => ({ t, client, type: 'barrier', phase, workload: 'dbar', op: 'enter', round });

test('double-barrier check: enters after all three invoked pass; an early one is reported', () => {
  const good = [ev(1, 'a', 'invoke'), ev(2, 'b', 'invoke'), ev(3, 'c', 'invoke'), ev(4, 'a', 'ok'), ev(4, 'b', 'ok'), ev(5, 'c', 'ok')];
  assert.deepEqual(checkHistory(history(good), { checks: ['barrier'] }).violations, []);
  const early = [ev(1, 'a', 'invoke'), ev(2, 'b', 'invoke'), ev(3, 'a', 'ok'), ev(4, 'c', 'invoke'), ev(5, 'c', 'ok')];
  const found = checkHistory(history(early), { checks: ['barrier'] }).violations;
  assert.equal(found.length, 1);
  assert.match(found[0]!.message, /only 2 of 3/);
  // Invokes of another round do not count.
  const otherRound = [ev(1, 'a', 'invoke'), ev(2, 'b', 'invoke'), ev(3, 'c', 'invoke', '/c/dbar/round-0'), ev(4, 'a', 'ok')];
  assert.equal(checkHistory(history(otherRound), { checks: ['barrier'] }).violations.length, 1);
});
