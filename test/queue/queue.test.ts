// DistributedQueue against a real standalone ZooKeeper: no item lost or duplicated under
// concurrent takes, FIFO and priorities, at-least-once redelivery (handler throws, session
// expires mid-item), no herd among idle consumers, timeout/abort cleanup (nodes and server-side
// watches), size/peek/poll, bad input, close, and the bucketed node layout. Also the review's
// regressions: no busy loop on a missing directory, a late ack/release by an expired consumer
// leaves a re-claimed item alone, no starvation behind claimed items, peek keeps the poll order,
// no duplicate after a lost delete reply, take with an aborted signal takes nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClosedError, InvalidArgumentError, NoNodeError, OperationTimeoutError, SessionExpiredError } from '../../src/errors.js';
import { DistributedQueue, type Delivery, type ZkSession } from '../../src/index.js';
import { BUCKET_CAPACITY, itemSeq } from '../../src/queue/layout.js';
import { expireSession, waitFor, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
const { pool } = fx;

const sessionsN = (n: number, options = {}): Promise<ZkSession[]> => fx.sessionsN(n, options);

/** Children of `dir` as the observer sees them; none when it does not exist. */
async function childrenOf(dir: string): Promise<string[]> {
  try {
    return (await fx.observer.getChildren(dir)).children;
  } catch (err) {
    if (err instanceof NoNodeError) return [];
    throw err;
  }
}

/** Full paths of every item node of the queue at `path`. */
async function itemPaths(path: string): Promise<string[]> {
  const out: string[] = [];
  for (const p of await childrenOf(`${path}/items`)) {
    for (const b of await childrenOf(`${path}/items/${p}`)) {
      for (const i of await childrenOf(`${path}/items/${p}/${b}`)) out.push(`${path}/items/${p}/${b}/${i}`);
    }
  }
  return out.sort();
}

const consumerNodes = (path: string): Promise<string[]> => childrenOf(`${path}/consumers`);
const claimNodes = (path: string): Promise<string[]> => childrenOf(`${path}/claims`);

/** Waits until `count` idle consumers are lined up on the queue at `path`. */
const lined = (path: string, count: number): Promise<boolean> =>
  waitFor(async () => (await consumerNodes(path)).length === count, { timeoutMs: 5000, message: `${count} consumers lined up on ${path}` });

const waitNoWatches = (session: ZkSession, under: string): Promise<void> => fx.waitNoWatches(session, under);

/** Waits until the sessions' counters stop moving: two successive snapshots are equal. */
async function settle(sessions: readonly ZkSession[], message: string): Promise<void> {
  let last = '';
  await waitFor(
    () => {
      const now = JSON.stringify(sessions.map((s) => s.counters));
      const same = now === last;
      last = now;
      return same;
    },
    { timeoutMs: 10000, intervalMs: 150, message },
  );
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const text = (b: Buffer | null): string | null => (b === null ? null : b.toString());

const noop = (): void => undefined;

describe('at-most-once takes', () => {
  test('1 producer x 2000 items, 4 consumers taking concurrently: none lost, none duplicated', async () => {
    const path = uniquePath('many');
    const [ps, ...cs] = await sessionsN(5);
    const producer = new DistributedQueue(ps!, path);
    const produced = new AbortController();
    const doneProducing = new Error('producer finished');
    const consumers = cs.map(async (s) => {
      const q = new DistributedQueue(s, path);
      const got: string[] = [];
      for (;;) {
        if (produced.signal.aborted) {
          // Everything is in: drain until the queue is empty.
          const item = await q.poll();
          if (item === null) return got;
          got.push(item.toString());
          continue;
        }
        try {
          got.push((await q.take({ signal: produced.signal })).toString());
        } catch (err) {
          if (err !== doneProducing) throw err;
        }
      }
    });
    const expected: string[] = [];
    let n = 0;
    const next = (): string => `item-${String(n++).padStart(4, '0')}`;
    for (let round = 0; round < 20; round++) {
      const batch = Array.from({ length: 95 }, next);
      expected.push(...batch);
      await producer.putAll(batch);
      for (let i = 0; i < 5; i++) {
        const one = next();
        expected.push(one);
        await producer.put(one);
      }
    }
    produced.abort(doneProducing);
    const results = await withTimeout(Promise.all(consumers), 30000, 'consumers drained the queue');
    const all = results.flat();
    assert.equal(expected.length, 2000);
    assert.equal(new Set(all).size, all.length, 'no item taken twice');
    assert.deepEqual(all.sort(), expected.sort(), 'every item taken exactly once');
    assert.deepEqual(await itemPaths(path), []);
    assert.deepEqual(await consumerNodes(path), [], 'no consumer left in line');
    assert.equal(await producer.size(), 0);
  });

  test('FIFO with one consumer: items come out in put order (putAll, put, and a waiting take)', async () => {
    const path = uniquePath('fifo');
    const [s1, s2] = await sessionsN(2);
    const producer = new DistributedQueue(s1!, path);
    const consumer = new DistributedQueue(s2!, path);
    await producer.put('warm-up');
    assert.equal(text(await consumer.poll()), 'warm-up');
    // A take that waits is served by the next put.
    const waiting = consumer.take({ timeoutMs: 10000 });
    await lined(path, 1);
    await producer.put('first');
    assert.equal((await waiting).toString(), 'first');
    const items = Array.from({ length: 30 }, (_, i) => `f-${i}`);
    await producer.putAll(items.slice(0, 10));
    for (const x of items.slice(10, 20)) await producer.put(x);
    await producer.putAll(items.slice(20));
    const got: string[] = [];
    for (let i = 0; i < items.length; i++) got.push((await consumer.take({ timeoutMs: 5000 })).toString());
    assert.deepEqual(got, items);
    assert.equal(await consumer.poll(), null);
  });

  test('priorities: lower first, FIFO within a priority; the default is 500', async () => {
    const path = uniquePath('priorities');
    const [s] = await sessionsN(1);
    const q = new DistributedQueue(s!, path);
    const puts: [string, number | undefined][] = [
      ['a', 999],
      ['b', undefined],
      ['c', 1],
      ['d', 500],
      ['e', 999],
      ['f', 1],
      ['g', undefined],
      ['h', 500],
      ['i', 1],
    ];
    const paths: string[] = [];
    for (const [data, priority] of puts) paths.push(await q.put(data, priority === undefined ? {} : { priority }));
    paths.push(...(await q.putAll(['j', 'k'], { priority: 1 })));
    paths.push(...(await q.putAll(['l', 'm'])));
    assert.deepEqual(
      paths.map((p) => p.split('/').at(-3)),
      ['p-999', 'p-500', 'p-001', 'p-500', 'p-999', 'p-001', 'p-500', 'p-500', 'p-001', 'p-001', 'p-001', 'p-500', 'p-500'],
    );
    const got: string[] = [];
    for (let item = await q.poll(); item !== null; item = await q.poll()) got.push(item.toString());
    assert.deepEqual(got, ['c', 'f', 'i', 'j', 'k', 'b', 'd', 'g', 'h', 'l', 'm', 'a', 'e']);
  });

  test('size(), peek() (does not remove) and poll(); an empty or unused queue gives 0 / null and creates nothing', async () => {
    const path = uniquePath('size-peek-poll');
    const [s] = await sessionsN(1);
    const q = new DistributedQueue(s!, path);
    assert.equal(await q.size(), 0);
    assert.equal(await q.peek(), null);
    assert.equal(await q.poll(), null);
    assert.equal(await fx.observer.exists(path), null, 'reading an unused queue creates nothing');
    await q.putAll(['a', 'b']);
    await q.put('c', { priority: 1 });
    assert.equal(await q.size(), 3);
    assert.equal(text(await q.peek()), 'c');
    assert.equal(text(await q.peek()), 'c', 'peek again: still there');
    assert.equal(await q.size(), 3);
    assert.equal((await itemPaths(path)).length, 3);
    assert.equal(text(await q.poll()), 'c');
    assert.equal(await q.size(), 2);
    assert.equal(text(await q.poll()), 'a');
    assert.equal(text(await q.poll()), 'b');
    assert.equal(await q.poll(), null);
    assert.equal(await q.peek(), null);
    assert.equal(await q.size(), 0);
  });

  test('peek() does not change the order of later polls', async () => {
    const path = uniquePath('peek-order');
    const [s] = await sessionsN(1);
    const q = new DistributedQueue(s!, path);
    await q.putAll(['a', 'b', 'c', 'd']);
    const seen: (string | null)[] = [];
    seen.push(text(await q.peek()), text(await q.poll()), text(await q.poll()));
    seen.push(text(await q.peek()), text(await q.peek()), text(await q.poll()), text(await q.poll()));
    seen.push(text(await q.poll()), text(await q.peek()));
    assert.deepEqual(seen, ['a', 'a', 'b', 'c', 'c', 'c', 'd', null, null]);
  });

  test('a poll whose delete reply is lost never returns an item another consumer took meanwhile', async () => {
    const path = uniquePath('lost-reply');
    const proxy = await fx.proxy();
    const victim = await pool.connect(proxy.connectString);
    const [so] = await sessionsN(1);
    const qv = new DistributedQueue(victim, path);
    const qo = new DistributedQueue(so!, path);
    await qo.putAll(['X', 'Y']);
    assert.equal(text(await qv.poll()), 'X'); // Y is now in the victim's listing

    // The victim reads Y and sends the request that deletes it; the connection drops while the
    // request is held in the proxy, so it never reaches the server, and the victim cannot
    // reconnect yet. Meanwhile the other consumer takes Y.
    proxy.latency(250);
    const sent = (): number => victim.counters.delete + victim.counters.multi;
    const before = sent();
    const pending = qv.poll();
    pending.catch(noop);
    try {
      await waitFor(() => sent() > before, { timeoutMs: 5000, message: "the victim's delete sent" });
      proxy.blackhole();
      proxy.dropAll();
      assert.equal(text(await qo.poll()), 'Y');
    } finally {
      proxy.pass();
    }
    const got = await withTimeout(pending, 10000, "the victim's poll");
    assert.equal(text(got), null, 'Y was handed to the other consumer; the victim must not return it too');
    assert.deepEqual(await itemPaths(path), []);
  });

  test('take with an already aborted signal rejects with its reason and takes nothing', async () => {
    const path = uniquePath('take-aborted');
    const [s] = await sessionsN(1);
    const q = new DistributedQueue(s!, path);
    await q.put('d');
    const reason = new Error('gave up before asking');
    await assert.rejects(q.take({ signal: AbortSignal.abort(reason) }), (e) => e === reason);
    assert.equal(await q.size(), 1, 'the item is still there');
    assert.deepEqual(await consumerNodes(path), []);
    assert.equal(text(await q.poll()), 'd');
  });
});

describe('at-least-once consumers', () => {
  test('a handler that throws once: the item is redelivered (redeliveries 1) and acknowledged exactly once', async () => {
    const path = uniquePath('redeliver');
    const [s] = await sessionsN(1);
    const q = new DistributedQueue(s!, path);
    const items = ['a', 'b', 'c', 'd'];
    const paths = await q.putAll(items);
    const deliveries = new Map<string, number[]>();
    const successes = new Map<string, number>();
    const errors: { message: string; path: string; redeliveries: number }[] = [];
    const stop = new AbortController();
    const consuming = q.consume(
      (data, d) => {
        const key = data.toString();
        deliveries.set(key, [...(deliveries.get(key) ?? []), d.redeliveries]);
        assert.equal(d.path, paths[items.indexOf(key)]);
        assert.equal(d.signal.aborted, false);
        if (key === 'b' && d.redeliveries === 0) throw new Error('transient failure');
        successes.set(key, (successes.get(key) ?? 0) + 1);
        if (successes.size === items.length) stop.abort();
      },
      { signal: stop.signal, onError: (e, item) => errors.push({ message: (e as Error).message, ...item }) },
    );
    await withTimeout(consuming, 15000, 'consume to finish');
    assert.deepEqual(Object.fromEntries(deliveries), { a: [0], b: [0, 1], c: [0], d: [0] });
    assert.deepEqual(Object.fromEntries(successes), { a: 1, b: 1, c: 1, d: 1 });
    assert.deepEqual(errors, [{ message: 'transient failure', path: paths[1], redeliveries: 0 }]);
    assert.deepEqual(await itemPaths(path), [], 'every item acknowledged');
    assert.deepEqual(await claimNodes(path), [], 'no claim left');
    assert.deepEqual(await consumerNodes(path), []);
    assert.equal(await q.size(), 0);
  });

  test("a consumer's session expires mid-item: its signal aborts, another consumer gets the item again and acknowledges it once; the late acknowledgement deletes nothing new", async () => {
    const path = uniquePath('expiry');
    const proxy = await fx.proxy();
    const sA = await pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
    const [sB] = await sessionsN(1);
    const qA = new DistributedQueue(sA, path, { participantId: 'A' });
    const qB = new DistributedQueue(sB!, path, { participantId: 'B' });
    const x = await qA.put('X');

    // A claims X and blocks in its handler until we let it go.
    const gate = deferred<void>();
    const aDelivered = deferred<Delivery>();
    let aCalls = 0;
    const stopA = new AbortController();
    const consumingA = qA.consume(
      async (_data, d) => {
        aCalls++;
        aDelivered.resolve(d);
        await gate.promise;
      },
      { signal: stopA.signal },
    );
    const aDelivery = await withTimeout(aDelivered.promise, 5000, "A's delivery");
    assert.equal(aDelivery.redeliveries, 0);
    assert.equal(aDelivery.path, x);
    const claims = await claimNodes(path);
    assert.equal(claims.length, 1);
    assert.equal((await fx.observer.exists(`${path}/claims/${claims[0]}`))?.ephemeralOwner, sA.sessionId, "A's ephemeral claim");

    // B has nothing to do: X is claimed. It lines up and waits.
    const bDeliveries: { data: string; redeliveries: number; path: string }[] = [];
    const stopB = new AbortController();
    const consumingB = qB.consume((data, d) => void bDeliveries.push({ data: data.toString(), redeliveries: d.redeliveries, path: d.path }), { signal: stopB.signal });
    await lined(path, 1);
    assert.equal(bDeliveries.length, 0);

    await expireSession(sA, proxy);
    assert.ok(aDelivery.signal.aborted, "A's delivery signal aborted");
    assert.ok(aDelivery.signal.reason instanceof SessionExpiredError, String(aDelivery.signal.reason));

    // B gets X again and acknowledges it.
    await waitFor(async () => bDeliveries.length === 1 && (await itemPaths(path)).length === 0 && (await claimNodes(path)).length === 0, {
      timeoutMs: 15000,
      message: 'B got X again and acknowledged it',
    });
    assert.equal(bDeliveries[0]?.data, 'X');
    assert.equal(bDeliveries[0]?.path, x);
    assert.ok(bDeliveries[0]!.redeliveries >= 1, `redeliveries ${bDeliveries[0]?.redeliveries}`);
    stopB.abort();
    await withTimeout(consumingB, 5000, 'B to stop');
    assert.equal(bDeliveries.length, 1, 'B handled X once');

    // A new item arrives; then A's handler returns and A acknowledges late.
    const y = await qB.put('Y');
    stopA.abort();
    gate.resolve();
    await withTimeout(consumingA, 10000, 'A to stop');
    assert.equal(aCalls, 1);
    assert.ok(await fx.observer.exists(y), "A's late acknowledgement did not touch the new item");
    assert.deepEqual(await itemPaths(path), [y]);
    assert.deepEqual(await claimNodes(path), []);
    assert.deepEqual(await consumerNodes(path), []);
    assert.equal(text(await qB.poll()), 'Y');
  });

  test('an expired consumer acknowledges one item and fails another late, while a second consumer holds both again: neither item nor the new claims are touched', async () => {
    const path = uniquePath('late-ack-release');
    const proxy = await fx.proxy();
    const sA = await pool.connect(proxy.connectString);
    const [sB] = await sessionsN(1);
    const qA = new DistributedQueue(sA, path, { participantId: 'A' });
    const qB = new DistributedQueue(sB!, path, { participantId: 'B' });
    const [x, y] = await qA.putAll(['X', 'Y']);

    // A claims X and Y and blocks in both handlers; once let go it acknowledges X and fails Y.
    const gateA = deferred<void>();
    const aDeliveries = new Map<string, Delivery>();
    const stopA = new AbortController();
    const consumingA = qA.consume(
      async (data, d) => {
        aDeliveries.set(data.toString(), d);
        await gateA.promise;
        if (data.toString() === 'Y') throw new Error('A fails Y, late');
      },
      { concurrency: 2, signal: stopA.signal, onError: noop },
    );
    await waitFor(() => aDeliveries.size === 2, { timeoutMs: 5000, message: 'A holds X and Y' });

    // B lines up (both workers), A's session expires, B claims X and Y again and blocks.
    const gateB = deferred<void>();
    const bDeliveries = new Map<string, Delivery>();
    const stopB = new AbortController();
    const consumingB = qB.consume(
      async (data, d) => {
        bDeliveries.set(data.toString(), d);
        await gateB.promise;
      },
      { concurrency: 2, signal: stopB.signal },
    );
    try {
      await lined(path, 2);
      await expireSession(sA, proxy);
      await waitFor(() => bDeliveries.size === 2, { timeoutMs: 15000, message: 'B holds X and Y again' });
      assert.deepEqual([bDeliveries.get('X')?.path, bDeliveries.get('Y')?.path], [x, y]);
      assert.ok(bDeliveries.get('X')!.redeliveries >= 1 && bDeliveries.get('Y')!.redeliveries >= 1);
      // The claim nodes: name, creation zxid (which node) and whether B's session owns them.
      const claims = async (): Promise<{ name: string; czxid?: bigint; ofB: boolean }[]> =>
        Promise.all(
          (await claimNodes(path)).sort().map(async (name) => {
            const st = await fx.observer.exists(`${path}/claims/${name}`);
            return { name, czxid: st?.czxid, ofB: st?.ephemeralOwner === sB!.sessionId };
          }),
        );
      const bClaims = await claims();
      assert.equal(bClaims.length, 2);
      assert.ok(bClaims.every((c) => c.ofB), "both claims are B's");

      // A's handlers return now: the late acknowledgement of X and the late release of Y.
      stopA.abort();
      gateA.resolve();
      await withTimeout(consumingA, 10000, 'A to stop');
      assert.deepEqual(
        { items: await itemPaths(path), claims: await claims() },
        { items: [x, y].sort(), claims: bClaims },
        "A's late ack deleted neither X nor B's claim on it; A's late release of Y did not delete B's claim on Y",
      );
    } finally {
      stopA.abort();
      gateA.resolve();
      stopB.abort();
      gateB.resolve();
    }
    // B acknowledges both.
    await withTimeout(consumingB, 10000, 'B to stop');
    assert.deepEqual(await itemPaths(path), []);
    assert.deepEqual(await claimNodes(path), []);
    assert.deepEqual(await consumerNodes(path), []);
  });

  test('an item claimed at the head (here the only urgent one) does not keep others from the rest of the queue', async () => {
    const path = uniquePath('no-head-of-line');
    const [sA, sB] = await sessionsN(2);
    const qA = new DistributedQueue(sA!, path);
    const qB = new DistributedQueue(sB!, path);
    await qA.put('urgent', { priority: 1 });
    await qA.put('normal');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const aGot: string[] = [];
    const bGot: string[] = [];
    const stopA = new AbortController();
    const stopB = new AbortController();
    const a = qA.consume(async (d) => {
      aGot.push(d.toString());
      await gate;
    }, { signal: stopA.signal });
    await waitFor(() => aGot.length === 1, { timeoutMs: 5000, message: 'A holds the urgent item' });
    const b = qB.consume((d) => void bGot.push(d.toString()), { signal: stopB.signal });
    await waitFor(() => bGot.length === 1, { timeoutMs: 5000, message: 'B takes the normal item while A holds the urgent one' });
    assert.deepEqual([aGot, bGot], [['urgent'], ['normal']]);
    stopB.abort();
    release();
    await waitFor(async () => (await qB.size()) === 0, { timeoutMs: 5000, message: 'A acknowledged' });
    stopA.abort();
    await Promise.all([a, b]);
  });

  test('a consumer gets the unclaimed items even when the first 20 listed are claimed by another consumer', async () => {
    const path = uniquePath('no-starvation');
    const [sA, sB] = await sessionsN(2);
    const qA = new DistributedQueue(sA!, path, { participantId: 'A' });
    const qB = new DistributedQueue(sB!, path, { participantId: 'B' });
    const items = Array.from({ length: 30 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
    await qA.putAll(items);

    const gate = deferred<void>();
    const aGot: string[] = [];
    const stopA = new AbortController();
    const consumingA = qA.consume(
      async (data) => {
        aGot.push(data.toString());
        await gate.promise;
      },
      { concurrency: 20, signal: stopA.signal },
    );
    const bGot: string[] = [];
    const stopB = new AbortController();
    try {
      // Each of A's workers walks past the items its other workers claimed.
      await waitFor(() => aGot.length === 20, { timeoutMs: 5000 }).catch(() => assert.fail(`A's 20 workers hold ${aGot.length} of the 30 items after 5 s, not 20`));
      assert.deepEqual([...aGot].sort(), items.slice(0, 20), 'A holds the first 20 in line');
      assert.equal((await claimNodes(path)).length, 20);

      const consumingB = qB.consume((data) => void bGot.push(data.toString()), { signal: stopB.signal });
      await waitFor(() => bGot.length === 10, { timeoutMs: 5000 }).catch(() => assert.fail(`B got ${bGot.length} of the 10 unclaimed items within 5 s`));
      stopB.abort();
      await withTimeout(consumingB, 5000, 'B to stop');
      assert.deepEqual([...bGot].sort(), items.slice(20), 'B got exactly the unclaimed items');
      assert.equal(aGot.length, 20, 'A got nothing more');
    } finally {
      stopA.abort();
      stopB.abort();
      gate.resolve();
    }
    await withTimeout(consumingA, 10000, 'A to stop');
    assert.deepEqual(await itemPaths(path), []);
    assert.deepEqual(await claimNodes(path), []);
  });
});

describe('idle consumers', () => {
  test('no herd: 8 idle consumers, one put wakes only the head (its successor in line is handed the head spot)', async () => {
    const path = uniquePath('herd');
    // Each of its own process: the line is followed with server watches, whose herd this counts.
    const sessions = await fx.sessionsApart(9);
    const consumerSessions = sessions.slice(0, 8);
    const producer = new DistributedQueue(sessions[8]!, path);
    await producer.put('warm-up'); // the queue's directories exist
    assert.equal(text(await producer.poll()), 'warm-up');
    const baseline = await fx.watchTotal();
    const queues = consumerSessions.map((s, i) => new DistributedQueue(s, path, { participantId: `c${i}` }));
    const taken: { index: number; data: string }[] = [];
    const takes = queues.map((q, i) => q.take({ timeoutMs: 30000 }).then((d) => void taken.push({ index: i, data: d.toString() })));
    await lined(path, 8);
    await settle(consumerSessions, 'idle consumers settled');

    // Line order, from the nodes' sequence numbers and data (the participant ids).
    const names = (await consumerNodes(path)).sort((a, b) => a.slice(-10).localeCompare(b.slice(-10)));
    const order = await Promise.all(names.map(async (n) => Number((await fx.observer.getData(`${path}/consumers/${n}`)).data.toString().slice(1))));
    const [head, second] = order as [number, number];
    // Each consumer behind the head watches only its predecessor's node (data watches, wchc);
    // only the head watches the item directories: items, p-500 and its tail bucket (child
    // watches, which wchc does not list: counted by the server's total and by each client).
    const watches = await fx.server.watchesBySession();
    const dataWatchesOf = (i: number): string[] => watches.get(`0x${consumerSessions[i]!.sessionId.toString(16)}`) ?? [];
    assert.deepEqual(dataWatchesOf(head), [], 'the head watches no node in the line');
    // The one right behind the head also watches its own node: it is granted without a listing
    // when the head goes, and that grant rests on its node still standing.
    for (let k = 1; k < order.length; k++) {
      const own = k === 1 ? [`${path}/consumers/${names[k]}`] : [];
      assert.deepEqual([...dataWatchesOf(order[k]!)].sort(), [`${path}/consumers/${names[k - 1]}`, ...own].sort(), `consumer #${k} in line watches only its predecessor${k === 1 ? ' and its own node' : ''}`);
    }
    assert.deepEqual(
      order.map((i) => consumerSessions[i]!.activeWatchCount),
      [3, 2, 1, 1, 1, 1, 1, 1],
      'client side: the head watches 3 item directories, the next 2 nodes, the others 1 node each',
    );
    assert.equal((await fx.watchTotal()) - baseline, 3 + 8, 'server side: 3 child watches of the head, 8 data watches in the line');

    const before = consumerSessions.map((s) => s.counters.watchEvents);
    await producer.put('one');
    await waitFor(() => taken.length === 1, { timeoutMs: 5000, message: 'one take resolved' });
    await settle(consumerSessions, 'consumers settled after the put');
    assert.deepEqual(taken, [{ index: head, data: 'one' }], 'the head took it, and only one take resolved');
    const deltas = consumerSessions.map((s, i) => s.counters.watchEvents - before[i]!);
    const expected = consumerSessions.map((_, i) => (i === head || i === second ? 1 : 0));
    assert.deepEqual(deltas, expected, 'the put notified the head; the head leaving the line notified its successor; nobody else heard anything');
    assert.equal((await consumerNodes(path)).length, 7);

    // Clean up: one item for each remaining consumer.
    await producer.putAll(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    await withTimeout(Promise.all(takes), 10000, 'every take resolved');
    assert.deepEqual(taken.map((t) => t.data).sort(), ['one', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    assert.deepEqual(taken.map((t) => t.index).sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(await consumerNodes(path), []);
    for (const s of consumerSessions) await waitNoWatches(s, path);
    await fx.waitWatchTotal(baseline, 'every watch of the consumers removed');
    assert.deepEqual(consumerSessions.map((s) => s.activeWatchCount), [0, 0, 0, 0, 0, 0, 0, 0]);
  });

  test('take timeout (in line and at the head) and abort: typed error / the reason, no node and no watch left', async () => {
    const path = uniquePath('take-giveup');
    const [s1, s2, s3] = await sessionsN(3);
    const q1 = new DistributedQueue(s1!, path);
    const q2 = new DistributedQueue(s2!, path);
    await q1.put('warm-up');
    assert.equal(text(await q1.poll()), 'warm-up');
    const baseline = await fx.watchTotal();

    // Alone: q1 is the head and watches the items; it times out.
    const err = await q1.take({ timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(err instanceof OperationTimeoutError, String(err));
    assert.equal(err.code, 'TIMEOUT');
    assert.deepEqual(await consumerNodes(path), []);
    await waitNoWatches(s1!, path);
    await fx.waitWatchTotal(baseline, "the head's child watches removed");
    assert.equal(s1!.activeWatchCount, 0);

    // q2 at the head, q1 behind it in line: q1 times out from the line.
    const ac = new AbortController();
    const headTake = q2.take({ signal: ac.signal });
    await lined(path, 1);
    const [headNode] = await consumerNodes(path);
    const err2 = await q1.take({ timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(err2 instanceof OperationTimeoutError, String(err2));
    assert.deepEqual(await consumerNodes(path), [headNode]);
    await waitNoWatches(s1!, path);
    assert.equal(s1!.activeWatchCount, 0);

    // The head gives up through its signal.
    const reason = new Error('user gave up');
    ac.abort(reason);
    await assert.rejects(headTake, (e) => e === reason);
    assert.deepEqual(await consumerNodes(path), []);
    await waitNoWatches(s2!, path);
    await fx.waitWatchTotal(baseline, 'every watch removed');
    assert.equal(s2!.activeWatchCount, 0);

    // The queue still works.
    const q3 = new DistributedQueue(s3!, path);
    const pending = q3.take({ timeoutMs: 10000 });
    await lined(path, 1);
    await q1.put('after');
    assert.equal((await pending).toString(), 'after');
    assert.deepEqual(await itemPaths(path), []);
  });

  test('close() rejects a pending take with ClosedError, stops consumers, and leaves nothing behind; later calls are ClosedError', async () => {
    const path = uniquePath('close');
    const [s] = await sessionsN(1);
    const q = new DistributedQueue(s!, path);
    await q.put('warm-up');
    assert.equal(text(await q.poll()), 'warm-up');
    const baseline = await fx.watchTotal();
    // An already aborted signal rejects with its reason (issue 10, item 8), and starts nothing.
    const stopped = new Error('stopped before it started');
    await assert.rejects(q.consume(() => undefined, { signal: AbortSignal.abort(stopped) }), (e) => e === stopped);
    const pending = q.take();
    const consuming = q.consume(() => undefined);
    await lined(path, 2);
    const rejected = assert.rejects(pending, ClosedError);
    await q.close();
    await rejected;
    await withTimeout(consuming, 5000, 'consume to stop');
    await q.close(); // idempotent
    assert.deepEqual(await consumerNodes(path), []);
    await waitNoWatches(s!, path);
    await fx.waitWatchTotal(baseline, 'every watch removed');
    assert.equal(s!.activeWatchCount, 0);
    await assert.rejects(q.put('x'), ClosedError);
    await assert.rejects(q.putAll(['x']), ClosedError);
    await assert.rejects(q.poll(), ClosedError);
    await assert.rejects(q.take(), ClosedError);
    await assert.rejects(q.peek(), ClosedError);
    await assert.rejects(q.size(), ClosedError);
    await assert.rejects(q.consume(() => undefined), ClosedError);
    assert.deepEqual(await itemPaths(path), [], 'nothing was put after close');
  });

  test('take on a never-used queue path waits without spinning (a handful of listings in a 500 ms take), then a put still wakes a waiting take', async () => {
    const path = uniquePath('take-unused');
    const [s, sp] = await sessionsN(2);
    const q = new DistributedQueue(s!, path);
    // One wait costs a fixed handful of listings, however long it lasts; before the fix a
    // missing directory counted as a change: hundreds of getChildren in 500 ms.
    const before = s!.counters.getChildren;
    const err = await q.take({ timeoutMs: 500 }).catch((e: unknown) => e);
    assert.ok(err instanceof OperationTimeoutError, String(err));
    const listings = s!.counters.getChildren - before;
    assert.ok(listings < 20, `${listings} getChildren requests during a 500 ms take on an unused path`);
    assert.deepEqual(await consumerNodes(path), []);
    await waitNoWatches(s!, path);
    assert.equal(s!.activeWatchCount, 0);

    // Waiting on a queue that has no item directory yet still hears the first put.
    const pending = q.take({ timeoutMs: 10000 });
    await lined(path, 1);
    await new DistributedQueue(sp!, path).put('first');
    assert.equal((await pending).toString(), 'first');
  });

  test('an idle consumer on a queue with no claims directory waits without spinning (a bounded number of listings in 500 ms), then handles a put', async () => {
    const path = uniquePath('consume-no-claims');
    const [s, sp] = await sessionsN(2);
    const producer = new DistributedQueue(sp!, path);
    await producer.put('warm-up'); // the item directories exist; the claims directory does not
    assert.equal(text(await producer.poll()), 'warm-up');
    assert.equal(await fx.observer.exists(`${path}/claims`), null);
    const q = new DistributedQueue(s!, path);
    const got: string[] = [];
    // One wait costs a fixed ~20 listings (items and claims, twice, the watch points, the four
    // watched directories), however long it lasts; before the fix, hundreds in 500 ms.
    const before = s!.counters.getChildren;
    await withTimeout(q.consume((data) => void got.push(data.toString()), { signal: AbortSignal.timeout(500) }), 5000, 'consume to stop');
    const listings = s!.counters.getChildren - before;
    assert.ok(listings < 40, `${listings} getChildren requests while consuming an empty queue for 500 ms`);
    assert.equal(got.length, 0, 'nothing to consume');
    assert.deepEqual(await consumerNodes(path), []);
    await waitNoWatches(s!, path);
    assert.equal(s!.activeWatchCount, 0);

    const stop = new AbortController();
    const consuming = q.consume(
      (data) => {
        got.push(data.toString());
        stop.abort();
      },
      { signal: stop.signal },
    );
    await lined(path, 1);
    await producer.put('x');
    await withTimeout(consuming, 5000, 'the consumer handled the put');
    assert.deepEqual(got, ['x']);
    assert.deepEqual(await itemPaths(path), []);
    assert.deepEqual(await claimNodes(path), []);
  });
});

describe('bad input', () => {
  test('invalid paths, data, priorities, batches and options are InvalidArgumentError; nothing is created', async () => {
    const [s] = await sessionsN(1);
    for (const p of ['', 'queue', '/queue/', '/a//b', '/a/./b', '/', 42]) {
      assert.throws(() => new DistributedQueue(s!, p as string), InvalidArgumentError, `path ${String(p)}`);
    }
    assert.throws(() => new DistributedQueue({} as ZkSession, '/x'), InvalidArgumentError);
    assert.throws(() => new DistributedQueue(s!, '/x', { participantId: 5 as never }), InvalidArgumentError);
    const path = uniquePath('bad-input');
    const q = new DistributedQueue(s!, path);
    await assert.rejects(q.put(Buffer.alloc(1_000_001)), InvalidArgumentError);
    await assert.rejects(q.put(42 as never), InvalidArgumentError);
    for (const priority of [-1, 1000, 1.5, 'x', Number.NaN]) {
      await assert.rejects(q.put('a', { priority: priority as number }), InvalidArgumentError, `priority ${String(priority)}`);
      await assert.rejects(q.putAll(['a'], { priority: priority as number }), InvalidArgumentError, `putAll priority ${String(priority)}`);
    }
    await assert.rejects(q.putAll([]), InvalidArgumentError);
    await assert.rejects(q.putAll('ab' as never), InvalidArgumentError);
    await assert.rejects(q.putAll([Buffer.alloc(600_000), Buffer.alloc(600_000)]), InvalidArgumentError, 'a batch over the request limit');
    await assert.rejects(q.putAll(['ok', Buffer.alloc(1_000_001)]), InvalidArgumentError);
    await assert.rejects(q.consume('x' as never), InvalidArgumentError);
    await assert.rejects(q.consume(() => undefined, { concurrency: 0 }), InvalidArgumentError);
    await assert.rejects(q.consume(() => undefined, { concurrency: 1.5 }), InvalidArgumentError);
    await assert.rejects(q.consume(() => undefined, { signal: {} as AbortSignal }), InvalidArgumentError);
    await assert.rejects(q.take({ timeoutMs: -1 }), InvalidArgumentError);
    await assert.rejects(q.take({ timeoutMs: Number.NaN }), InvalidArgumentError);
    await assert.rejects(q.take({ signal: {} as AbortSignal }), InvalidArgumentError);
    assert.equal(await fx.observer.exists(path), null, 'nothing was created');
  });

  test('use after the session is closed is a ClosedError', async () => {
    const s = await pool.connect(fx.server.connectString);
    const q = new DistributedQueue(s, uniquePath('closed-session'));
    await s.close();
    await assert.rejects(q.put('x'), ClosedError);
    await assert.rejects(q.poll(), ClosedError);
    await assert.rejects(q.take(), ClosedError);
    await assert.rejects(q.consume(() => undefined), ClosedError);
  });
});

describe('layout', () => {
  test('items are <path>/items/p-<3 digits>/b-<10 digits>/i-<8 hex>-<10 digits>; one putAll shares one id', async () => {
    const path = uniquePath('layout');
    const [s] = await sessionsN(1);
    const q = new DistributedQueue(s!, path);
    const re = (p: string): RegExp => new RegExp(`^${path}/items/p-${p}/b-\\d{10}/i-[0-9a-f]{8}-\\d{10}$`);
    const p1 = await q.put('x', { priority: 1 });
    const p500 = await q.put('y');
    const batch = await q.putAll(['z1', 'z2', 'z3'], { priority: 999 });
    const p0 = await q.put('w', { priority: 0 });
    assert.match(p1, re('001'));
    assert.match(p500, re('500'));
    assert.match(p0, re('000'));
    for (const p of batch) assert.match(p, re('999'));
    assert.match(p1, /\/b-0000000000\/i-[0-9a-f]{8}-0000000000$/, 'first bucket, first sequence');
    const ids = batch.map((p) => /\/i-([0-9a-f]{8})-/.exec(p)?.[1]);
    assert.equal(new Set(ids).size, 1, 'one transaction, one id');
    assert.deepEqual(batch.map((p) => itemSeq(p.slice(p.lastIndexOf('/') + 1))), [0, 1, 2]);
    assert.deepEqual(await itemPaths(path), [p1, p500, p0, ...batch].sort());
    assert.equal((await fx.observer.getData(batch[1]!)).data.toString(), 'z2');
  });

  test(`bucket capacity: once a bucket's sequence reaches ${BUCKET_CAPACITY}, producers move on to the next bucket; consumers read the oldest first and reap drained buckets`, async () => {
    const path = uniquePath('buckets');
    const [s1, s2] = await sessionsN(2);
    const q = new DistributedQueue(s1!, path);
    const bucket0 = `${path}/items/p-500/b-0000000000`;
    const bucket1 = `${path}/items/p-500/b-0000000001`;
    let count = 0;
    let last = '';
    while ((itemSeq(last.slice(last.lastIndexOf('/') + 1)) ?? -1) < BUCKET_CAPACITY - 1) {
      const paths = await q.putAll(Array.from({ length: 1000 }, () => String(count++)));
      last = paths.at(-1)!;
      assert.ok(last.startsWith(`${bucket0}/`), last);
    }
    assert.equal(count, BUCKET_CAPACITY);
    const next = await q.put('next');
    assert.match(next, new RegExp(`^${bucket1}/i-[0-9a-f]{8}-0000000000$`), 'the producer moved on');
    // A producer that has not put before finds the tail bucket.
    const other = await new DistributedQueue(s2!, path).put('other');
    assert.match(other, new RegExp(`^${bucket1}/i-[0-9a-f]{8}-0000000001$`));
    assert.deepEqual((await childrenOf(`${path}/items/p-500`)).sort(), ['b-0000000000', 'b-0000000001']);
    assert.equal((await fx.observer.exists(bucket0))?.numChildren, BUCKET_CAPACITY, 'no bucket grows past its capacity');
    assert.equal(await q.size(), BUCKET_CAPACITY + 2);
    assert.equal(text(await q.peek()), '0', 'the oldest bucket first');

    // Drain the first bucket quickly (as consumers would), then read on.
    const names = await childrenOf(bucket0);
    for (let i = 0; i < names.length; i += 1000) {
      await fx.observer.multi(names.slice(i, i + 1000).map((n) => ({ type: 'delete' as const, path: `${bucket0}/${n}` })));
    }
    const consumer = new DistributedQueue(s2!, path);
    assert.equal(text(await consumer.poll()), 'next');
    assert.deepEqual(await childrenOf(`${path}/items/p-500`), ['b-0000000001'], 'the drained bucket was reaped');
    assert.equal(text(await consumer.poll()), 'other');
    assert.equal(await consumer.poll(), null);
    // A producer whose tail bucket is still current keeps using it.
    assert.match(await q.put('again'), new RegExp(`^${bucket1}/`));
  });
});
