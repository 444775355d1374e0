// The examples of the guides run against a real server and do what they say. Each example is
// one service instance (one session); a test starts several instances at once, as several
// processes would, each on its own session, and shuts them down as a process would be.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { TestingServer, waitFor } from '../src/testing/index.js';
import { ZkSession } from '../src/index.js';
import { main as mutexExample } from '../examples/mutex.js';
import { main as semaphoreExample } from '../examples/semaphore.js';
import { main as rwlockExample } from '../examples/rwlock.js';
import { main as leaderExample } from '../examples/leader.js';
import { main as queueExample } from '../examples/queue.js';
import { main as cacheExample } from '../examples/cache.js';
import { main as barrierExample } from '../examples/barrier.js';
import { main as groupExample } from '../examples/group-member.js';

let server: TestingServer;
let observer: ZkSession;
before(async () => {
  server = await TestingServer.start();
  observer = await ZkSession.connect(server.connectString);
});
after(async () => {
  await observer?.close();
  await server?.close();
});

const unique = (what: string): string => `/examples-test/${what}-${randomBytes(4).toString('hex')}`;

/** Every session an example opened is closed again: the server lists only ours. */
async function onlyObserverLeft(): Promise<void> {
  await waitFor(async () => (await server.connections()).filter((c) => c.sessionId !== undefined && c.sessionId !== '0').length <= 1, { timeoutMs: 10_000 });
}

test('examples/mutex.ts: 3 instances x 5 guarded increments = 15, 15 distinct fencing tokens, each instance\'s increasing', async () => {
  const path = unique('counter');
  const runs = await Promise.all([1, 2, 3].map(() => mutexExample(server.connectString, { path })));
  assert.equal(Number((await observer.getData(path)).data.toString()), 15);
  const all = runs.flat();
  assert.equal(new Set(all).size, 15);
  for (const tokens of runs) {
    const big = tokens.map((t) => BigInt(t));
    assert.deepEqual([...big].sort((x, y) => (x < y ? -1 : 1)), big, 'tokens grow');
  }
  await onlyObserverLeft();
});

test('examples/mutex.ts: shutdown while waiting for the lock ends the instance cleanly', async () => {
  const path = unique('counter');
  const holder = await ZkSession.connect(server.connectString);
  try {
    const { Mutex } = await import('../src/index.js');
    const held = await new Mutex(holder, `${path}-lock`).acquire();
    const shutdown = new AbortController();
    const run = mutexExample(server.connectString, { path, signal: shutdown.signal });
    await sleep(300);
    shutdown.abort();
    assert.deepEqual(await run, []);
    await held.release();
  } finally {
    await holder.close();
  }
});

test('examples/semaphore.ts: 4 instances, never more than maxLeases (2) jobs at once, and 2 reached', async () => {
  const path = unique('pool');
  let inUse = 0;
  let peak = 0;
  const work = async (signal: AbortSignal): Promise<void> => {
    peak = Math.max(peak, ++inUse);
    try {
      await sleep(30, undefined, { signal });
    } finally {
      inUse--;
    }
  };
  const done = await Promise.all([1, 2, 3, 4].map(() => semaphoreExample(server.connectString, { path, work })));
  assert.deepEqual(done, [3, 3, 3, 3]);
  assert.equal(peak, 2);
});

test('examples/rwlock.ts: a publisher and 3 readers; no reader ever sees the two halves disagree; the downgrade keeps the write', async () => {
  const path = unique('catalog');
  const [publisher, ...readers] = await Promise.all([
    rwlockExample(server.connectString, { role: 'publisher', rounds: 4, path }),
    ...[1, 2, 3].map(() => rwlockExample(server.connectString, { role: 'reader', rounds: 8, path })),
  ]);
  assert.equal(publisher?.published, 4);
  for (const r of readers) {
    assert.equal(r.reads, 8);
    assert.equal(r.torn, 0);
  }
});

test('examples/leader.ts: 3 instances, one leads; when it shuts down another is elected', async () => {
  const path = unique('election');
  const elected: string[] = [];
  const instances = ['a', 'b', 'c'].map((id) => {
    const shutdown = new AbortController();
    const terms = leaderExample(server.connectString, { path, id, signal: shutdown.signal, onElected: (who) => elected.push(who) });
    return { id, shutdown, terms };
  });
  await waitFor(() => elected.length === 1, { timeoutMs: 10_000 });
  const first = instances.find((i) => i.id === elected[0])!;
  first.shutdown.abort();
  assert.equal(await first.terms, 1);
  await waitFor(() => elected.length === 2, { timeoutMs: 10_000 });
  assert.notEqual(elected[1], elected[0]);
  for (const i of instances) i.shutdown.abort();
  const terms = await Promise.all(instances.map((i) => i.terms));
  assert.equal(terms.reduce((a, b) => a + b, 0), 2);
});

test('examples/queue.ts: a producer and 2 consumers; 10 jobs handled once each, a failing one delivered again', async () => {
  const path = unique('jobs');
  const handled = new Map<string, number>();
  let failedOnce = false;
  let redelivered = 0;
  const shutdown = new AbortController();
  const handle = async (job: string, { redeliveries }: { redeliveries: number }): Promise<void> => {
    if (redeliveries > 0) redelivered++;
    if (job === 'job-3' && !failedOnce) {
      failedOnce = true;
      throw new Error('transient failure');
    }
    handled.set(job, (handled.get(job) ?? 0) + 1);
  };
  const jobs = Array.from({ length: 10 }, (_, i) => `job-${i}`);
  const consumers = [1, 2].map(() => queueExample(server.connectString, { path, handle, signal: shutdown.signal }));
  assert.equal(await queueExample(server.connectString, { path, produce: jobs }), 0);
  await waitFor(() => handled.size === 10, { timeoutMs: 20_000 });
  shutdown.abort();
  const counts = await Promise.all(consumers);
  assert.equal(counts[0]! + counts[1]!, 10);
  assert.deepEqual([...handled.values()], Array(10).fill(1));
  assert.equal(redelivered, 1);
});

test('examples/cache.ts: 2 instances load the settings, see each change in order, and end equal to the server', async () => {
  const path = unique('config');
  await observer.mkdirp(path);
  await observer.create(`${path}/greeting`, { data: 'hi' });
  await observer.create(`${path}/colour`, { data: 'blue' });
  const instances = [1, 2].map(() => {
    const shutdown = new AbortController();
    const seen: string[] = [];
    const synced: Record<string, string>[] = [];
    const done = cacheExample(server.connectString, { path, signal: shutdown.signal, onSetting: (n, v) => seen.push(`${n}=${v ?? '(removed)'}`), onSynced: (s) => synced.push(s) });
    return { shutdown, seen, synced, done };
  });
  await waitFor(() => instances.every((i) => i.synced.length === 1), { timeoutMs: 10_000 });
  for (const i of instances) assert.deepEqual(i.synced[0], { greeting: 'hi', colour: 'blue' });
  await observer.setData(`${path}/greeting`, 'hello');
  await observer.delete(`${path}/colour`);
  await observer.create(`${path}/size`, { data: 'XL' });
  await waitFor(() => instances.every((i) => i.seen.includes('size=XL')), { timeoutMs: 10_000 });
  for (const i of instances) {
    assert.deepEqual(i.seen.slice(2), ['greeting=hello', 'colour=(removed)', 'size=XL']);
    i.shutdown.abort();
  }
  for (const i of instances) assert.deepEqual(await i.done, { greeting: 'hello', size: 'XL' });
  await onlyObserverLeft();
  const watches = await server.watchesBySession();
  assert.deepEqual([...watches.values()].flat().filter((p) => p.startsWith(path)), []);
});

test('examples/barrier.ts: 3 workers held at a gate, none starts before all entered, none finishes before all are done; nothing left', async () => {
  const path = unique('batch');
  const gate = unique('gate');
  const coordinator = await ZkSession.connect(server.connectString);
  try {
    const { Barrier } = await import('../src/index.js');
    const barrier = new Barrier(coordinator, gate);
    await barrier.set();
    let started = 0;
    let finished = 0;
    const log: string[] = [];
    const work = async (): Promise<void> => {
      log.push(`start with ${++started} started`);
      await sleep(20);
      finished++;
    };
    const workers = [1, 2, 3].map(() => barrierExample(server.connectString, { path, gate, work }).then((ok) => (log.push(`done with ${finished} finished`), ok)));
    await waitFor(async () => ((await server.watchesBySession()).size >= 3), { timeoutMs: 10_000, message: 'the workers wait at the gate' });
    assert.equal(started, 0, 'nobody passes the gate while it is set');
    await barrier.remove();
    assert.deepEqual(await Promise.all(workers), [true, true, true]);
    assert.equal(started, 3);
    for (const line of log.filter((l) => l.startsWith('done'))) assert.equal(line, 'done with 3 finished');
    assert.equal(await observer.exists(path), null, 'the batch left nothing');
  } finally {
    await coordinator.close();
  }
});

test('examples/group-member.ts: 3 instances see each other with their addresses; one stops and the others see it leave; nothing left', async () => {
  const path = unique('group');
  const views = new Map<string, ReadonlyMap<string, string>>();
  const stops = new Map<string, AbortController>();
  const ids = ['api-1', 'api-2', 'api-3'];
  const runs = ids.map((id) => {
    const stop = new AbortController();
    stops.set(id, stop);
    return groupExample(server.connectString, id, { path, address: `http://${id}:8080`, signal: stop.signal, onView: (view) => views.set(id, view) });
  });
  const sees = (id: string, expected: string[]): boolean => JSON.stringify([...(views.get(id)?.keys() ?? [])].sort()) === JSON.stringify(expected);
  await waitFor(() => ids.every((id) => sees(id, ids)), { timeoutMs: 15_000, message: 'every instance sees the three' });
  assert.equal(views.get('api-1')?.get('api-3'), 'http://api-3:8080');
  stops.get('api-2')?.abort();
  const last = (await runs[1]) ?? new Map();
  assert.deepEqual([...last.keys()].sort(), ids, 'the stopped instance returns its last view');
  await waitFor(() => sees('api-1', ['api-1', 'api-3']) && sees('api-3', ['api-1', 'api-3']), { timeoutMs: 15_000, message: 'the others see api-2 leave' });
  for (const stop of stops.values()) stop.abort();
  await Promise.all(runs);
  assert.deepEqual((await observer.getChildren(path).catch(() => ({ children: [] }))).children, [], 'every member node is gone');
  await onlyObserverLeft();
  const watches = await server.watchesBySession();
  assert.deepEqual([...watches.values()].flat().filter((p) => p.startsWith(path)), []);
});
