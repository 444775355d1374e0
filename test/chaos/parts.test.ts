// The chaos suite's small parts, without ZooKeeper: the seeded generator replays, the fenced
// resource rejects stale tokens and records its own decisions, the recorder stamps events.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planWorkloads } from '../../src/testing/chaos/plan.js';
import { lockFaults } from '../../src/testing/chaos/runner.js';
import { chaosNow, CI_CLIENT_COUNTS, DEFAULT_CLIENT_COUNTS, FencedResource, FencedResourceClient, HistoryRecorder, SeededRandom, waitingNodes, type ChaosEvent, type WaiterLock } from '../../src/testing/index.js';

test('SeededRandom: one seed, one sequence; forks are independent streams', () => {
  const a = new SeededRandom(42);
  const b = new SeededRandom(42);
  const seqA = Array.from({ length: 20 }, () => a.int(0, 1000));
  assert.deepEqual(Array.from({ length: 20 }, () => b.int(0, 1000)), seqA);
  assert.notDeepEqual(Array.from({ length: 20 }, () => new SeededRandom(43).int(0, 1000)), seqA);
  assert.notEqual(a.fork('x').seed, a.fork('y').seed);
  assert.equal(a.fork('x').seed, new SeededRandom(42).fork('x').seed);
  const r = new SeededRandom(1);
  for (let i = 0; i < 1000; i++) {
    const x = r.next();
    assert.ok(x >= 0 && x < 1);
    assert.ok(['a', 'b'].includes(r.weighted({ a: 1, b: 3, c: 0 })));
  }
});

test('FencedResource: accepts tokens that do not go back, over a socket, and records each decision', async () => {
  const events: ChaosEvent[] = [];
  const resource = await FencedResource.start((e) => events.push(e));
  const client = await FencedResourceClient.connect(resource.port, 'c1');
  try {
    assert.equal(await client.write('r', 10n, 1), true);
    assert.equal(await client.write('r', 10n, 2), true); // the same holder again
    assert.equal(await client.write('r', 12n, 3), true);
    assert.equal(await client.write('r', 11n, 4), false); // stale
    assert.equal(await client.write('other', 1n, 5), true); // registers are separate
    assert.deepEqual(resource.state('r'), { value: 3, token: 12n });
    assert.deepEqual(events.map((e) => (e.type === 'resource' ? `${e.register}:${e.token}:${e.accepted}` : '')), ['r:10:true', 'r:10:true', 'r:12:true', 'r:11:false', 'other:1:true']);
  } finally {
    client.close();
    await resource.close();
  }
});

test('HistoryRecorder: stamps with the shared clock and the client name, forwards, keeps in order', () => {
  const forwarded: ChaosEvent[] = [];
  const recorder = new HistoryRecorder({ client: 'c', onEvent: (e) => forwarded.push(e) });
  const before = chaosNow();
  recorder.record({ type: 'note', level: 'info', message: 'one' });
  recorder.record({ type: 'note', level: 'info', message: 'two' }, before - 5);
  assert.equal(forwarded.length, 2);
  assert.equal(recorder.events[0]?.client, 'c');
  assert.ok((recorder.events[0]?.t ?? 0) >= before);
  assert.deepEqual(recorder.sorted().map((e) => (e.type === 'note' ? e.message : '')), ['two', 'one']);
  const quiet = new HistoryRecorder({ client: 'q', keep: false });
  quiet.record({ type: 'note', level: 'info', message: 'x' });
  assert.equal(quiet.events.length, 0);
});

// delete-waiter deletes only nodes that certainly wait, even if the holders ahead leave between
// the listing and the delete: never one that is, or may be about to be, granted.
const node = (kind: string, seq: number): string => `_c_0b8e3c55-7e43-4a8e-9b0e-6a1c2f3d4e5f-${kind}${String(seq).padStart(10, '0')}`;
const waiterRows: [string, Pick<WaiterLock, 'kind' | 'maxLeases'>, string[], string[]][] = [
  ['mutex: two nodes ahead at least', { kind: 'mutex', maxLeases: 1 }, [node('lock-', 3), node('lock-', 1), node('lock-', 2), node('lock-', 4)], [node('lock-', 3), node('lock-', 4)]],
  ['mutex: holder and one waiter: none', { kind: 'mutex', maxLeases: 1 }, [node('lock-', 1), node('lock-', 2)], []],
  ['latch: the same rule', { kind: 'latch', maxLeases: 1 }, ['latch-0000000005', 'latch-0000000009', 'latch-0000000007'], ['latch-0000000009']],
  ['semaphore of 2: maxLeases + 2 nodes ahead', { kind: 'semaphore', maxLeases: 2 }, [1, 2, 3, 4, 5, 6].map((i) => node('lock-', i)), [node('lock-', 5), node('lock-', 6)]],
  ['rwlock: readers ahead are one group', { kind: 'rwlock', maxLeases: 1 }, [node('__READ__', 1), node('__READ__', 2), node('__WRIT__', 3), node('__READ__', 4), node('__READ__', 5)], [node('__READ__', 4), node('__READ__', 5)]],
  ['rwlock: a reader right behind the first writer may be next: kept', { kind: 'rwlock', maxLeases: 1 }, [node('__WRIT__', 1), node('__READ__', 2), node('__READ__', 3)], []],
  ['rwlock: writers are a group each', { kind: 'rwlock', maxLeases: 1 }, [node('__WRIT__', 1), node('__WRIT__', 2), node('__WRIT__', 3)], [node('__WRIT__', 3)]],
  ['sequence order, not name order; names without a sequence ignored', { kind: 'mutex', maxLeases: 1 }, [node('lock-', 9), 'lock-0000000002', 'leases', 'other-0000000001', node('lock-', 3)], [node('lock-', 9)]],
];
for (const [name, lock, children, expected] of waiterRows) {
  test(`waitingNodes: ${name}`, () => {
    assert.deepEqual(waitingNodes(children, lock), expected);
  });
}

test('lockFaults: delete-waiter is off in a run without locks (queues or caches alone), as given otherwise', () => {
  const cache = { name: 'cache', kind: 'cache', path: '/c/cache', maxLeases: 1 } as const;
  const mutex = { name: 'mutex', kind: 'mutex', path: '/c/mutex', maxLeases: 1 } as const;
  assert.deepEqual(lockFaults([cache], undefined), { locks: [], weights: { 'delete-waiter': 0 } });
  assert.deepEqual(lockFaults([cache], { drop: 3, 'delete-waiter': 5 }), { locks: [], weights: { drop: 3, 'delete-waiter': 0 } });
  assert.deepEqual(lockFaults([cache, mutex], undefined), { locks: [{ path: '/c/mutex', kind: 'mutex', maxLeases: 1 }], weights: undefined });
  assert.deepEqual(lockFaults([mutex], { drop: 3 }).weights, { drop: 3 });
});

test('planWorkloads: the cache clients, the first of every three a writer on two sessions, the others readers; a lone one both', () => {
  const plan = (n: number): string[] => planWorkloads('/b', { cache: n }).clients.map((c) => `${c.name}:${c.role}:${c.sessions}`);
  assert.deepEqual(plan(1), ['cache-1:both:2']);
  assert.deepEqual(plan(3), ['cache-1:writer:2', 'cache-2:reader:1', 'cache-3:reader:1']);
  assert.deepEqual(plan(4), ['cache-1:writer:2', 'cache-2:reader:1', 'cache-3:reader:1', 'cache-4:writer:2']);
  assert.deepEqual(planWorkloads('/b', { cache: 2 }).workloads, [{ name: 'cache', kind: 'cache', path: '/b/cache', maxLeases: 1 }]);
  assert.equal(DEFAULT_CLIENT_COUNTS.cache, 3);
  assert.equal(CI_CLIENT_COUNTS.cache, 3);
});
