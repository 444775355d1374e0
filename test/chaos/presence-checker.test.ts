// The persistent-node presence check on hand-made histories: a node missing from the probes for
// longer than the bound (beyond the faults under way meanwhile) is a violation; one back in time,
// one missing only while a fault lasted, one missing before its first create or after its owner
// began closing, is not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHistory, type ChaosEvent, type ChaosHistory } from '../../src/testing/index.js';
import { presenceBoundMs } from '../../src/testing/chaos/checker/presence.js';
import { historyOf } from './histories.js';

const spec = { name: 'pnode', kind: 'persistent-node' as const, path: '/c/pnode', maxLeases: 1 };
const clients = [
  { name: 'pnode-1', workload: 'pnode' },
  { name: 'pnode-2', workload: 'pnode' },
];
const END = 100_000;
const history = (events: ChaosEvent[]): ChaosHistory => historyOf(spec, events, { endedAt: END, clients });
const bound = presenceBoundMs(4000);
const created = (t: number, client: string): ChaosEvent => ({ t, client, type: 'pnode', workload: 'pnode', op: 'created', node: `/c/pnode/${client}` });
const closing = (t: number, client: string): ChaosEvent => ({ t, client, type: 'pnode', workload: 'pnode', op: 'closing', node: `/c/pnode/${client}` });
const probe = (t: number, ...present: string[]): ChaosEvent => ({ t, client: 'pnode-2', type: 'pnode', workload: 'pnode', op: 'probe', node: '/c/pnode', present });
const fault = (t: number, phase: 'start' | 'end', id = 1): ChaosEvent => ({ t, client: 'nemesis', type: 'fault', phase, id, fault: 'partition' as never, target: 'pnode-1' });
const check = (events: ChaosEvent[]) => checkHistory(history(events), { checks: ['presence'] }).violations;

const both = ['pnode-1', 'pnode-2'];
const start = [created(10, 'pnode-1'), created(10, 'pnode-2')];
const done = [closing(END - 10, 'pnode-1'), closing(END - 10, 'pnode-2')];

test('presence check: a node back within the bound passes; one missing too long is reported', () => {
  const good = [...start, probe(100, ...both), probe(1000, 'pnode-2'), probe(1000 + bound - 1, ...both), probe(50_000, ...both), ...done];
  assert.deepEqual(check(good), []);
  const bad = [...start, probe(100, ...both), probe(1000, 'pnode-2'), probe(2000, 'pnode-2'), probe(1000 + bound + 500, ...both), ...done];
  const found = check(bad);
  assert.equal(found.length, 1);
  assert.match(found[0]!.message, /\/c\/pnode\/pnode-1 was missing for \d+ ms/);
  assert.equal(found[0]!.t, 1000);
});

test('presence check: missing only while a fault lasted is excused, not beyond it', () => {
  const during = [...start, probe(100, ...both), fault(900, 'start'), probe(1000, 'pnode-2'), probe(20_000, 'pnode-2'), fault(25_000, 'end'), probe(25_000 + bound - 100, ...both), ...done];
  assert.deepEqual(check(during), []);
  const beyond = [...start, probe(100, ...both), fault(900, 'start'), probe(1000, 'pnode-2'), fault(5000, 'end'), probe(5000 + bound + 1000, ...both), ...done];
  assert.equal(check(beyond).length, 1);
});

test('presence check: never back before the end is reported; missing before its first create or after closing is not', () => {
  const never = [...start, probe(100, ...both), probe(1000, 'pnode-2'), probe(90_000, 'pnode-2'), ...done];
  const found = check(never);
  assert.equal(found.length, 1);
  assert.match(found[0]!.message, /to the end/);
  const edges = [probe(5, 'pnode-2'), ...start, probe(100, ...both), closing(60_000, 'pnode-1'), probe(61_000, 'pnode-2'), probe(99_000, 'pnode-2'), closing(END - 10, 'pnode-2')];
  assert.deepEqual(check(edges), []);
  // A node never created at all, with no fault to keep its owner away.
  const missing = [created(10, 'pnode-2'), probe(100, 'pnode-2'), ...done];
  assert.match(check(missing)[0]?.message ?? '', /pnode-1 was never created/);
});
