// The examples of the guides run against a real server and do what they say. Each example is
// one service instance (one session); a test starts several instances at once, as several
// processes would, each on its own session, and shuts them down as a process would be.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { TestingServer, waitFor, withTimeout } from '../src/testing/index.js';
import { ZkSession } from '../src/index.js';
import { main as mutexExample } from '../examples/mutex.js';
import { main as semaphoreExample } from '../examples/semaphore.js';
import { main as rwlockExample } from '../examples/rwlock.js';
import { main as leaderExample } from '../examples/leader.js';
import { main as queueExample } from '../examples/queue.js';
import { main as cacheExample } from '../examples/cache.js';
import { main as barrierExample } from '../examples/barrier.js';
import { main as metricsServiceExample } from '../examples/metrics-service.js';
import { main as sharedCountExample } from '../examples/shared-count.js';
import { main as persistentNodeExample } from '../examples/persistent-node.js';
import { main as atomicExample } from '../examples/atomic.js';
import { main as groupExample } from '../examples/group-member.js';
import { main as multiLockExample } from '../examples/multilock.js';
import { client as discoveryClient, instance as discoveryInstance } from '../examples/discovery.js';

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

/** The samples of a Prometheus text exposition. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(l);
      assert.ok(m, `a sample line: ${l}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

test('examples/metrics-service.ts: /metrics after a contended run, timeouts, misses and a lock lost to a deleted node; nothing left after shutdown', async () => {
  const path = unique('metrics-lock');
  const shutdown = new AbortController();
  const failures: string[] = [];
  let url: string | undefined;
  const run = metricsServiceExample(server.connectString, { path, port: 0, workers: 3, holdMs: 200, timeoutMs: 100, log: (l) => failures.push(l), onListening: (u) => (url = u), signal: shutdown.signal });
  try {
    await waitFor(() => url !== undefined, { timeoutMs: 10_000, message: 'the service listens' });
    const scrape = async (): Promise<(name: string, labels: Record<string, string>) => number> => {
      const res = await fetch(url!);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      const all = samples(await res.text());
      return (name, labels) => all.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).reduce((sum, x) => sum + x.value, 0);
    };
    const mutex = { recipe: 'mutex', mode: 'exclusive' };
    let maxWaiting = 0;
    await waitFor(
      async () => {
        const get = await scrape();
        maxWaiting = Math.max(maxWaiting, get('zk_recipes_waiting', mutex));
        const count = (outcome: string): number => get('zk_recipes_acquire_duration_seconds_count', { ...mutex, outcome });
        return count('acquired') >= 3 && count('timeout') >= 1 && count('miss') >= 1 && maxWaiting >= 1;
      },
      { timeoutMs: 30_000, message: 'acquired, timed out, missed and waiting seen on /metrics' },
    );
    // An operator deletes the holder's node: its job's lock is lost (a waiter's node, if the
    // head changed meanwhile, only makes it list again).
    let lost = 0;
    for (let attempt = 0; lost === 0 && attempt < 20; attempt++) {
      const [head] = (await observer.getChildren(path)).children.sort((a, b) => a.slice(-10).localeCompare(b.slice(-10)));
      if (head !== undefined) await observer.delete(`${path}/${head}`).catch(() => undefined);
      await waitFor(async () => (lost = (await scrape())('zk_recipes_lock_lost_total', { recipe: 'mutex', reason: 'node-deleted' })) > 0, { timeoutMs: 2000 }).catch(() => undefined);
    }
    assert.ok(lost >= 1, 'a lock lost to a deleted node');
    // Under load a loss can be seen after the next deletion: as many losses counted as jobs that failed so.
    const lossesLogged = (): number => failures.filter((f) => /lost|deleted/i.test(f)).length;
    await waitFor(async () => (await scrape())('zk_recipes_lock_lost_total', { recipe: 'mutex', reason: 'node-deleted' }) === lossesLogged() && lossesLogged() >= 1, {
      timeoutMs: 10_000,
      message: `every lost lock counted once: ${failures.join('\n')}`,
    });
    const get = await scrape();
    assert.ok(failures.some((f) => /within 100 ms/.test(f)), 'a timeout was logged');
    // Every grant ended in a release or the loss, but for the ones held now.
    const acquired = get('zk_recipes_acquire_duration_seconds_count', { ...mutex, outcome: 'acquired' });
    const ended = get('zk_recipes_hold_duration_seconds_count', mutex);
    assert.ok(acquired - ended >= 0 && acquired - ended <= 3, `${acquired} acquired, ${ended} ended`);
    assert.ok(get('zk_recipes_held', mutex) <= 3);
    assert.equal(get('zk_recipes_sessions', { state: 'CONNECTED' }), 1);
  } finally {
    shutdown.abort();
    await run;
  }
  const left = await observer.getChildren(path).then((r) => r.children, () => []);
  assert.deepEqual(left, [], 'nothing left in the lock');
  await assert.rejects(fetch(url!), 'the server is closed');
  await onlyObserverLeft();
});

test('examples/shared-count.ts: 3 processes x 10 increments at once = 30, each sees the count rise in order; nothing left', async () => {
  const path = unique('shared-count');
  const seen: number[][] = [[], [], []];
  const runs = await Promise.all(seen.map((list) => sharedCountExample(server.connectString, { path, increments: 10, onChange: (n) => list.push(n) })));
  const { data, stat } = await observer.getData(path);
  assert.equal(data.readInt32BE(0), 30);
  assert.equal(stat.version, 30, 'one write per applied increment');
  for (const r of runs) assert.deepEqual([r.applied, r.unknown], [10, 0]);
  // Each read the count when it finished; the last to finish read all of it.
  assert.equal(Math.max(...runs.map((r) => r.final)), 30);
  for (const list of seen) assert.ok(list.every((v, i) => i === 0 || v > (list[i - 1] as number)), `values in order: ${list.join(',')}`);
  // Whether the three overlap is up to the scheduler; what each wrote it saw, so together they saw every value.
  assert.deepEqual([...new Set(seen.flat())].sort((a, b) => a - b).filter((v) => v > 0), Array.from({ length: 30 }, (_, i) => i + 1));
  await onlyObserverLeft();
  const watches = await server.watchesBySession();
  assert.deepEqual([...watches.values()].flat().filter((p) => p.startsWith(path)), []);
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

test('examples/persistent-node.ts: the instance is announced with its data, back after an operator deletes it, gone on shutdown', async () => {
  const path = unique('services');
  const shutdown = new AbortController();
  let announced: (p: string) => void = () => undefined;
  const ready = new Promise<string>((resolve) => (announced = resolve));
  const running = persistentNodeExample(server.connectString, { path, instance: 'api-1', address: 'http://10.0.0.1:8080', onReady: announced, signal: shutdown.signal });
  try {
    const at = await withTimeout(ready, 20_000, 'the instance is announced');
    assert.equal(at, `${path}/api-1`);
    assert.deepEqual(JSON.parse((await observer.getData(at)).data.toString()), { address: 'http://10.0.0.1:8080', status: 'ready' });
    await observer.delete(at);
    await waitFor(async () => (await observer.exists(at)) !== null, { timeoutMs: 10_000, message: 'announced again' });
    assert.deepEqual(JSON.parse((await observer.getData(at)).data.toString()), { address: 'http://10.0.0.1:8080', status: 'ready' });
  } finally {
    shutdown.abort();
    await running;
  }
  assert.deepEqual((await observer.getChildren(path)).children, []);
  await onlyObserverLeft();
});

test('examples/atomic.ts: 3 instances x 10 orders = 30 distinct numbers 1..30; no lock node, no session left', async () => {
  const base = unique('orders');
  const path = `${base}/next`;
  const lockPath = `${base}/lock`;
  const runs = await Promise.all([1, 2, 3].map(() => atomicExample(server.connectString, { path, lockPath, orders: 10 })));
  const all = runs.flat().sort((a, b) => (a < b ? -1 : 1));
  assert.deepEqual(all, Array.from({ length: 30 }, (_, i) => BigInt(i + 1)));
  for (const run of runs) assert.ok(run.every((n, i) => i === 0 || n > run[i - 1]!), 'increasing within an instance');
  assert.equal((await observer.getData(path)).data.readBigInt64BE(0), 30n);
  assert.deepEqual((await observer.exists(lockPath)) ? (await observer.getChildren(lockPath)).children : [], []);
  await onlyObserverLeft();
});

test('examples/multilock.ts: 3 instances x 10 transfers between 4 accounts at once: the total is kept, none deadlocks; no lock node, no session left', async () => {
  const path = unique('accounts');
  const made = await Promise.all([1, 2, 3].map(() => multiLockExample(server.connectString, { path, accounts: 4, opening: 100, transfers: 10 })));
  assert.deepEqual(made, [10, 10, 10]);
  const balances = await Promise.all([0, 1, 2, 3].map(async (i) => Number((await observer.getData(`${path}/data/account-${i}`)).data.toString())));
  assert.equal(balances.reduce((a, b) => a + b, 0), 400, `balances ${balances.join(', ')}`);
  const versions = await Promise.all([0, 1, 2, 3].map(async (i) => (await observer.getData(`${path}/data/account-${i}`)).stat.version));
  assert.equal(versions.reduce((a, b) => a + b, 0), 60, 'two writes per transfer, each committed once');
  for (const lock of (await observer.getChildren(`${path}/locks`).catch(() => ({ children: [] as string[] }))).children) {
    assert.deepEqual((await observer.getChildren(`${path}/locks/${lock}`).catch(() => ({ children: [] as string[] }))).children, [], `nothing left in ${lock}`);
  }
  await onlyObserverLeft();
});

test('examples/discovery.ts: two instances register, a client calls both round robin, then only the one left; nothing left behind', async () => {
  const basePath = unique('services');
  const stops = [new AbortController(), new AbortController()];
  const ready: Promise<string>[] = [];
  const runs = stops.map((stop, i) => {
    let announced: (id: string) => void = () => undefined;
    ready.push(new Promise<string>((resolve) => (announced = resolve)));
    return discoveryInstance(server.connectString, { basePath, id: `api-${i + 1}`, onReady: (id) => announced(id), signal: stop.signal });
  });
  try {
    assert.deepEqual(await withTimeout(Promise.all(ready), 20_000, 'both instances registered'), ['api-1', 'api-2']);
    const answers = await discoveryClient(server.connectString, { basePath, calls: 6 });
    assert.deepEqual([...answers].sort(), ['api-1', 'api-1', 'api-1', 'api-2', 'api-2', 'api-2'], 'round robin over both');
    const node = JSON.parse((await observer.getData(`${basePath}/api/api-1`)).data.toString()) as Record<string, unknown>;
    assert.deepEqual(node.payload, { zone: 'eu-1' });
    assert.equal(node.address, '127.0.0.1');
    stops[0]?.abort();
    await runs[0];
    assert.deepEqual((await observer.getChildren(`${basePath}/api`)).children, ['api-2'], 'the stopped instance unregistered');
    assert.deepEqual(await discoveryClient(server.connectString, { basePath, calls: 3 }), ['api-2', 'api-2', 'api-2']);
  } finally {
    for (const stop of stops) stop.abort();
    await Promise.all(runs);
  }
  assert.deepEqual((await observer.getChildren(`${basePath}/api`).catch(() => ({ children: [] as string[] }))).children, []);
  await onlyObserverLeft();
  const watches = await server.watchesBySession();
  assert.deepEqual([...watches.values()].flat().filter((p) => p.startsWith(basePath)), []);
});
