// The multilock check on hand-made histories: each member lock path is a mutex of its own
// (two holders of one member path at once, a member token going backwards, a stale fenced
// write on one member's register are violations; disjoint or consecutive holders are not), and
// every acquisition ends (a wait with no grant or failure, or one that ended long past its
// timeout, is a deadlock).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memberRegister, planWorkloads } from '../../src/testing/chaos/plan.js';
import { lockFaults } from '../../src/testing/chaos/runner.js';
import { checkHistory, CI_CLIENT_COUNTS, DEFAULT_CLIENT_COUNTS, type ChaosEvent, type ChaosHistory, type CheckName } from '../../src/testing/index.js';
import { byTime, historyOf } from './histories.js';

const P = ['/c/mlock/m0', '/c/mlock/m1', '/c/mlock/m2', '/c/mlock/m3'];
const spec = { name: 'mlock', kind: 'multilock' as const, path: '/c/mlock', maxLeases: 1, register: 'mlock', members: P };
const history = (events: ChaosEvent[]): ChaosHistory => historyOf(spec, byTime(events), { endedAt: 100_000 });

/** One acquisition of `members` (indexes into P) with their tokens: wait at `from - 5`, grant at `from`, end at `to` (undefined: never). */
function hold(client: string, attempt: string, from: number, to: number | undefined, members: [number, number][], why: 'release' | 'lost' = 'release'): ChaosEvent[] {
  const paths = members.map(([i]) => P[i] as string);
  const m = members.map(([i, token]) => ({ path: P[i] as string, token: String(token) }));
  const out: ChaosEvent[] = [
    { type: 'wait', t: from - 5, client, workload: 'mlock', attempt, leases: 1, mode: 'exclusive', members: paths, timeoutMs: 8000 },
    { type: 'grant', t: from, client, workload: 'mlock', attempt, token: m[0]!.token, leases: 1, mode: 'exclusive', sessionId: `0x${client}`, lostAtGrant: false, members: m },
  ];
  if (to !== undefined) out.push({ type: 'end', t: to, client, workload: 'mlock', attempt, why });
  return out;
}
const wait = (client: string, attempt: string, t: number): ChaosEvent => ({ type: 'wait', t, client, workload: 'mlock', attempt, leases: 1, mode: 'exclusive', members: [P[0]!, P[1]!], timeoutMs: 8000 });
const fail = (client: string, attempt: string, t: number): ChaosEvent => ({ type: 'wait-fail', t, client, workload: 'mlock', attempt, error: 'LOCK_TIMEOUT: timed out' });
const write = (t: number, writer: string, member: number, token: number, accepted: boolean, highest: number): ChaosEvent => ({
  type: 'resource',
  t,
  client: 'resource',
  register: `mlock/m${member}`,
  writer,
  token: String(token),
  value: t,
  accepted,
  highest: String(highest),
});

const CHECKS: CheckName[] = ['exclusion', 'tokens', 'resource', 'deadlock'];
const found = (events: ChaosEvent[]): { check: string; message: string }[] => checkHistory(history(events), { checks: CHECKS }).violations.map((v) => ({ check: v.check, message: v.message }));

test('multilock check: overlapping holders of disjoint members, and consecutive holders of one member, pass', () => {
  const good = [
    // a holds m0+m1 while b holds m2+m3: no member path shared.
    ...hold('a', 'a-a0', 100, 500, [[0, 10], [1, 20]]),
    ...hold('b', 'b-a0', 150, 450, [[2, 30], [3, 40]]),
    // c takes m1+m2 after both, with larger tokens on each.
    ...hold('c', 'c-a0', 600, 900, [[1, 50], [2, 51]]),
    write(200, 'a', 0, 10, true, -1),
    write(700, 'c', 1, 50, true, -1),
    // a token of one member is below another member's token: no order across members.
    write(710, 'c', 2, 51, true, -1),
    // A timeout ends a wait.
    wait('d', 'd-a0', 100),
    fail('d', 'd-a0', 8100),
  ];
  assert.deepEqual(found(good), []);
  const r = checkHistory(history(good), { checks: CHECKS });
  assert.equal(r.stats.grants.mlock, 3);
});

test('multilock check: two holders of one member path at once are reported, naming the path', () => {
  // a holds m0+m1, b holds m1+m2 during a's hold: m1 has two holders.
  const bad = [...hold('a', 'a-a0', 100, 500, [[0, 10], [1, 20]]), ...hold('b', 'b-a0', 300, 700, [[1, 30], [2, 31]])];
  const v = found(bad);
  assert.equal(v.length, 1, JSON.stringify(v));
  assert.equal(v[0]!.check, 'exclusion');
  assert.match(v[0]!.message, /member lock \/c\/mlock\/m1: /);
  // The same holds, b's beginning after a's end: none.
  assert.deepEqual(found([...hold('a', 'a-a0', 100, 500, [[0, 10], [1, 20]]), ...hold('b', 'b-a0', 600, 700, [[1, 30], [2, 31]])]), []);
  // A loss ends a belief like a release does.
  assert.deepEqual(found([...hold('a', 'a-a0', 100, 250, [[0, 10], [1, 20]], 'lost'), ...hold('b', 'b-a0', 300, 700, [[1, 30], [2, 31]])]), []);
});

test('multilock check: a member token going backwards, and a stale write on a member register, are reported', () => {
  const backwards = found([...hold('a', 'a-a0', 100, 200, [[0, 10], [1, 40]]), ...hold('b', 'b-a0', 300, 400, [[1, 30], [2, 31]])]);
  assert.deepEqual(backwards.map((v) => v.check), ['tokens']);
  assert.match(backwards[0]!.message, /m1: token went backwards/);
  const stale = found([...hold('a', 'a-a0', 100, 200, [[0, 10], [1, 20]]), ...hold('b', 'b-a0', 300, 400, [[1, 30], [2, 31]]), write(350, 'b', 1, 30, true, -1), write(360, 'a', 1, 20, true, 30)]);
  assert.deepEqual(stale.map((v) => v.check), ['resource']);
  assert.match(stale[0]!.message, /m1: the resource accepted stale token/);
  // The same token accepted on another member's register is not stale there (a register per member).
  assert.deepEqual(found([...hold('a', 'a-a0', 100, 200, [[0, 10], [1, 20]]), ...hold('b', 'b-a0', 300, 400, [[1, 30], [2, 31]]), write(350, 'b', 1, 30, true, -1), write(360, 'a', 0, 10, true, -1)]), []);
});

test('multilock check: a stuck acquisition, and one that ended far past its timeout, are deadlocks', () => {
  const stuck = found([...hold('a', 'a-a0', 100, 500, [[0, 10], [1, 20]]), wait('b', 'b-a0', 200)]);
  assert.deepEqual(stuck.map((v) => v.check), ['deadlock']);
  assert.match(stuck[0]!.message, /b's acquisition b-a0 of \/c\/mlock\/m0, \/c\/mlock\/m1, begun 0\.20 s into the run, never ended/);
  // Timeout 8 s, grace 2 T + 5 s = 13 s: ending 21.5 s after the wait is too late; 20.5 s is not.
  const late = found([wait('b', 'b-a0', 1000), fail('b', 'b-a0', 22_500)]);
  assert.deepEqual(late.map((v) => v.check), ['deadlock']);
  assert.match(late[0]!.message, /took 21500 ms to end, past its timeout of 8000 ms/);
  assert.deepEqual(found([wait('b', 'b-a0', 1000), fail('b', 'b-a0', 21_500)]), []);
  // Time frozen by a pause fault does not count: 22.5 s with 6 s of it frozen is in time; with 1 s frozen, late.
  const pause = (phase: 'start' | 'end', t: number): ChaosEvent => ({ type: 'fault', t, client: 'nemesis', phase, id: 7, fault: 'pause', target: 'b' });
  assert.deepEqual(found([wait('b', 'b-a0', 1000), pause('start', 5000), pause('end', 11_000), fail('b', 'b-a0', 23_500)]), []);
  assert.deepEqual(found([wait('b', 'b-a0', 1000), pause('start', 5000), pause('end', 6000), fail('b', 'b-a0', 23_500)]).map((v) => v.check), ['deadlock']);
  // A grant naming a member path the workload does not have (a lock node's path, say) is a harness fault.
  const strange = hold('a', 'a-a0', 100, 200, [[0, 10]]);
  const g = strange[1] as ChaosEvent & { members: { path: string; token: string }[] };
  g.members = [{ path: '/c/mlock/m0/_c_x-lock-0000000000', token: '10' }];
  assert.deepEqual(checkHistory(history(strange), { checks: ['harness'] }).violations.map((v) => v.check), ['harness']);
  // Only the `exclusion` check is asked for: the others are silent.
  assert.equal(checkHistory(history([wait('b', 'b-a0', 1)]), { checks: ['exclusion'] }).violations.length, 0);
});

test('multilock plan: 4 member paths under the workload, a fenced register each; delete-waiter may aim at each member as a mutex', () => {
  const { workloads, clients } = planWorkloads('/b', { multilock: 2 });
  assert.deepEqual(workloads, [{ name: 'mlock', kind: 'multilock', path: '/b/mlock', maxLeases: 1, register: 'mlock', members: ['/b/mlock/m0', '/b/mlock/m1', '/b/mlock/m2', '/b/mlock/m3'] }]);
  assert.deepEqual(clients.map((c) => `${c.name}:${c.sessions}`), ['mlock-1:1', 'mlock-2:2']);
  assert.equal(memberRegister(workloads[0]!, '/b/mlock/m2'), 'mlock/m2');
  assert.deepEqual(lockFaults(workloads, undefined).locks.map((l) => `${l.kind} ${l.path}`), ['mutex /b/mlock/m0', 'mutex /b/mlock/m1', 'mutex /b/mlock/m2', 'mutex /b/mlock/m3']);
  assert.equal(DEFAULT_CLIENT_COUNTS.multilock, 2);
  assert.equal(CI_CLIENT_COUNTS.multilock, 0);
});
