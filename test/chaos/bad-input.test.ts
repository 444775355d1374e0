// Bad input to the chaos suite's public API: each row fails at once with an
// InvalidArgumentError naming what is wrong, before anything starts (no server needed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../src/errors.js';
import {
  ChaosProxy,
  checkHistory,
  expireSessionByTicket,
  FencedResource,
  FencedResourceClient,
  HistoryRecorder,
  Nemesis,
  runChaos,
  SeededRandom,
  waitingNodes,
  writeReport,
  type ChaosHistory,
  type NemesisOptions,
  type TestingCluster,
} from '../../src/testing/index.js';

const cast = <T>(value: unknown): T => value as T;
const fakeCluster = cast<TestingCluster>({ members: [{ id: 1 }, { id: 2 }, { id: 3 }] });
const recorder = new HistoryRecorder({ client: 'nemesis' });
const good: NemesisOptions = { cluster: fakeCluster, clients: [], random: new SeededRandom(1), recorder, sessionTimeoutMs: 4000 };
const history: ChaosHistory = { version: 1, meta: { seed: 1, seconds: 1, startedAt: 0, endedAt: 1, sessionTimeoutMs: 4000, clients: [], workloads: [], members: [] }, events: [] };

const rows: [string, () => unknown, RegExp][] = [
  ['SeededRandom: a seed that is not a number', () => new SeededRandom(cast('7')), /seed/],
  ['SeededRandom.int: max below min', () => new SeededRandom(1).int(5, 2), /int/],
  ['SeededRandom.chance: p above 1', () => new SeededRandom(1).chance(2), /chance/],
  ['SeededRandom.pick: an empty array', () => new SeededRandom(1).pick([]), /pick/],
  ['SeededRandom.weighted: a negative weight', () => new SeededRandom(1).weighted({ a: -1, b: 1 }), /weight a/],
  ['SeededRandom.weighted: all zero', () => new SeededRandom(1).weighted({ a: 0 }), /every weight/],
  ['SeededRandom.fork: an empty label', () => new SeededRandom(1).fork(''), /label/],
  ['HistoryRecorder: no options', () => new HistoryRecorder(cast(undefined)), /options/],
  ['HistoryRecorder: an empty client name', () => new HistoryRecorder({ client: '' }), /client/],
  ['HistoryRecorder: onEvent not a function', () => new HistoryRecorder({ client: 'c', onEvent: cast(1) }), /onEvent/],
  ['HistoryRecorder.record: no type', () => new HistoryRecorder({ client: 'c' }).record(cast({})), /body/],
  ['HistoryRecorder.add: no stamp', () => new HistoryRecorder({ client: 'c' }).add(cast({ type: 'note' })), /event/],
  ['Nemesis: no options', () => new Nemesis(cast(undefined)), /options/],
  ['Nemesis: two members', () => new Nemesis({ ...good, cluster: cast({ members: [{}, {}] }) }), /3 members/],
  ['Nemesis: a client without a name', () => new Nemesis({ ...good, clients: [cast({ proxies: [] })] }), /clients\[0\]\.name/],
  ['Nemesis: a client whose pause is not a function', () => new Nemesis({ ...good, clients: [cast({ name: 'c', proxies: [], pause: 1 })] }), /pause/],
  ['Nemesis: random is not a SeededRandom', () => new Nemesis({ ...good, random: cast(Math) }), /random/],
  ['Nemesis: a session timeout of 0', () => new Nemesis({ ...good, sessionTimeoutMs: 0 }), /sessionTimeoutMs/],
  ['Nemesis: an unknown fault kind', () => new Nemesis({ ...good, weights: cast({ meteor: 1 }) }), /meteor/],
  ['Nemesis: a negative weight', () => new Nemesis({ ...good, weights: { drop: -1 } }), /weights\.drop/],
  ['Nemesis.run: no duration', () => new Nemesis(good).run(cast({})), /durationMs/],
  ['Nemesis.crashMember: an unknown kind', () => new Nemesis(good).crashMember(cast('explode'), 100), /kind/],
  ['Nemesis: isolate-follower on a cluster without member links', () => new Nemesis({ ...good, weights: { 'isolate-follower': 1 } }), /memberLinks/],
  ['Nemesis: slow-follower on a cluster without member links', () => new Nemesis({ ...good, weights: { 'slow-follower': 2 } }), /memberLinks/],
  ['Nemesis: delete-waiter without waiters', () => new Nemesis({ ...good, weights: { 'delete-waiter': 1 } }), /waiters/],
  ['Nemesis: waiters without a session', () => new Nemesis({ ...good, waiters: cast({ locks: [] }) }), /waiters\.session/],
  ['Nemesis: a waiter lock of an unknown kind', () => new Nemesis({ ...good, waiters: { session: cast({}), locks: [cast({ path: '/l', kind: 'queue', maxLeases: 1 })] } }), /locks\[0\]\.kind/],
  ['Nemesis: a waiter lock with 0 leases', () => new Nemesis({ ...good, waiters: { session: cast({}), locks: [{ path: '/l', kind: 'semaphore', maxLeases: 0 }] } }), /maxLeases/],
  ['Nemesis: holderSession not a function', () => new Nemesis({ ...good, holderSession: cast('0x1') }), /holderSession/],
  ['Nemesis.impairMember: an unknown kind', () => new Nemesis(good).impairMember(cast('flood')), /kind/],
  ['Nemesis.impairMember: amount of 1', () => new Nemesis(good).impairMember('slow-follower', 1), /amount/],
  ['Nemesis.impairMember: a cluster without member links', () => new Nemesis(good).impairMember('isolate-follower'), /memberLinks/],
  ['Nemesis.deleteWaiter: no waiters', () => new Nemesis(good).deleteWaiter(), /waiters/],
  ['Nemesis.deleteWaiter: a negative pick', () => new Nemesis({ ...good, waiters: { session: cast({}), locks: [{ path: '/l', kind: 'mutex', maxLeases: 1 }] } }).deleteWaiter(-0.5), /lockPick/],
  ['waitingNodes: an unknown kind', () => waitingNodes([], cast({ kind: 'queue', maxLeases: 1 })), /kind/],
  ['waitingNodes: children not an array', () => waitingNodes(cast('lock-0000000001'), { kind: 'mutex', maxLeases: 1 }), /children/],
  ['runChaos: a negative weight of a new kind', () => runChaos({ faults: { 'delete-waiter': -1 } }), /delete-waiter/],
  ['Nemesis.hurtClient: amount of 1', () => new Nemesis(good).hurtClient('drop', { name: 'c', proxies: [] }, 1), /amount/],
  ['expireSessionByTicket: a short password', () => expireSessionByTicket({ sessionId: 1n, password: Buffer.alloc(3), timeoutMs: 1000 }, [], '127.0.0.1:1'), /password/],
  ['expireSessionByTicket: no proxies', () => expireSessionByTicket({ sessionId: 1n, password: Buffer.alloc(16), timeoutMs: 1000 }, [], '127.0.0.1:1'), /proxies/],
  ['FencedResource.start: no onEvent', () => FencedResource.start(cast(undefined)), /onEvent/],
  ['FencedResourceClient.connect: port 0', () => FencedResourceClient.connect(0, 'w'), /port/],
  ['FencedResourceClient.connect: an empty writer', () => FencedResourceClient.connect(1234, ''), /writer/],
  ['checkHistory: not a history', () => checkHistory(cast(null)), /history/],
  ['checkHistory: events not an array', () => checkHistory(cast({ meta: history.meta, events: 1 })), /events/],
  ['checkHistory: a negative slack', () => checkHistory(history, { slackMs: -1 }), /slackMs/],
  ['checkHistory: an unknown check', () => checkHistory(history, { checks: cast(['vibes']) }), /checks/],
  ['runChaos: 0 seconds', () => runChaos({ seconds: 0 }), /seconds/],
  ['runChaos: a seed past 2^32', () => runChaos({ seed: 2 ** 32 }), /seed/],
  ['runChaos: a session timeout below the servers\' minimum', () => runChaos({ sessionTimeoutMs: 100 }), /sessionTimeoutMs/],
  ['runChaos: an unknown workload', () => runChaos({ clients: cast({ lottery: 2 }) }), /lottery/],
  ['runChaos: a fractional client count', () => runChaos({ clients: { mutex: 1.5 } }), /clients\.mutex/],
  ['runChaos: an unknown fault kind', () => runChaos({ faults: cast({ flood: 1 }) }), /flood/],
  ['runChaos: log not a function', () => runChaos({ log: cast('yes') }), /log/],
  // A misspelled option names the nearest known one.
  ['runChaos: a misspelled option', () => runChaos(cast({ second: 5 })), /unknown option 'second' of runChaos: did you mean 'seconds'\?/],
  ['runChaos: a misspelled workload', () => runChaos({ clients: cast({ mutexes: 1 }) }), /unknown option 'mutexes' of runChaos options\.clients: did you mean 'mutex'\?/],
  ['runChaos: a misspelled fault kind', () => runChaos({ faults: cast({ partiton: 1 }) }), /unknown key 'partiton' of runChaos options\.faults: did you mean 'partition'\?/],
  ['Nemesis: a misspelled option', () => new Nemesis(cast({ ...good, sessionTimeout: 4000 })), /unknown option 'sessionTimeout' of new Nemesis: did you mean 'sessionTimeoutMs'\?/],
  ['Nemesis.run: a misspelled option', () => new Nemesis(good).run(cast({ duration: 5 })), /unknown option 'duration' of Nemesis\.run: did you mean 'durationMs'\?/],
  ['HistoryRecorder: a misspelled option', () => new HistoryRecorder(cast({ client: 'c', onevent: () => undefined })), /unknown option 'onevent' of new HistoryRecorder: did you mean 'onEvent'\?/],
  ['checkHistory: a misspelled option', () => checkHistory(history, cast({ slack: 1 })), /unknown option 'slack' of checkHistory: did you mean 'slackMs'\?/],
  [
    'expireSessionByTicket: a misspelled option',
    () => expireSessionByTicket({ sessionId: 1n, password: Buffer.alloc(16), timeoutMs: 1000 }, [cast(Object.create(ChaosProxy.prototype))], 'h:1', cast({ timeout: 5 })),
    /unknown option 'timeout' of expireSessionByTicket: did you mean 'timeoutMs'\?/,
  ],
  ['writeReport: an empty folder', () => writeReport('', history, { violations: [], excused: [], stats: cast({}) }), /dir/],
];

for (const [name, call, message] of rows) {
  test(`chaos bad input: ${name}`, async () => {
    const start = performance.now();
    await assert.rejects(
      async () => call(),
      (err: unknown) => err instanceof InvalidArgumentError && message.test(err.message),
    );
    assert.ok(performance.now() - start < 1000, 'rejected at once');
  });
}
