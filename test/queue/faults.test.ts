// DistributedQueue delivery promises under real faults, against a real standalone ZooKeeper:
// replies lost after the server applied the request (ChaosProxy.loseReply), requests lost on
// the way (held by the proxy's latency, then the connection dropped), items removed by someone
// else, and the bucket edge cases (a put landing in a drained bucket being reaped, producers
// with a stale tail). Each test is the regression test of one finding of issue 11.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClosedError, QueueLayoutError } from '../../src/errors.js';
import { DistributedQueue, type Delivery, type ZkSession } from '../../src/index.js';
import { BUCKET_CAPACITY, itemSeq } from '../../src/queue/layout.js';
import { waitFor, withTimeout, type ChaosProxy } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import { childrenOf, deferred, itemData, itemPaths, noop, text } from './support.js';

const fx = new ServerFixture();

const claimsOf = (path: string): Promise<string[]> => childrenOf(fx.observer, `${path}/claims`);
const items = (path: string): Promise<string[]> => itemPaths(fx.observer, path);

/** Puts `n` one-byte items with `queue`, in transactions of up to 5000. Resolves to the last path. */
async function fill(queue: DistributedQueue, n: number): Promise<string> {
  let last = '';
  for (let done = 0; done < n; ) {
    const batch = Math.min(5000, n - done);
    last = (await queue.putAll(Array.from({ length: batch }, () => '.'))).at(-1) ?? last;
    done += batch;
  }
  return last;
}

/** Deletes every child of `dir` (a bucket), 1000 a transaction. */
async function drain(dir: string): Promise<void> {
  const names = await childrenOf(fx.observer, dir);
  for (let i = 0; i < names.length; i += 1000) {
    await fx.observer.multi(names.slice(i, i + 1000).map((n) => ({ type: 'delete' as const, path: `${dir}/${n}` })));
  }
}

const seqOf = (p: string): number | undefined => itemSeq(p.slice(p.lastIndexOf('/') + 1));

/** One item put on `path` by another session, and a queue whose session's only route is a proxy. */
async function oneItemBehindProxy(path: string): Promise<{ proxy: ChaosProxy; cs: ZkSession; q: DistributedQueue }> {
  const proxy = await fx.proxy();
  const cs = await fx.pool.connect(proxy.connectString);
  const [ps] = await fx.sessionsN(1);
  await new DistributedQueue(ps!, path).put('X');
  return { proxy, cs, q: new DistributedQueue(cs, path) };
}

describe('exactly-once puts', () => {
  test('a put whose reply is lost, and whose item a consumer takes before the producer is back: the put resolves, no second item', async () => {
    const path = uniquePath('put-lost-taken');
    const bucket = `${path}/items/p-500/b-0000000000`;
    const proxy = await fx.proxy();
    const ps = await fx.pool.connect(proxy.connectString);
    const [cs] = await fx.sessionsN(1);
    const producer = new DistributedQueue(ps, path);
    const consumer = new DistributedQueue(cs!, path);
    await producer.put('warm-up');
    assert.equal(text(await consumer.poll()), 'warm-up');

    // The put is applied, its reply lost, and the producer cannot reconnect until the item is
    // taken: its lookup by id then finds nothing.
    const lost = proxy.loseReply({ path: `${bucket}/i-` }).then(() => proxy.reject(true));
    const put = producer.put('once');
    put.catch(noop);
    await lost;
    try {
      assert.equal(text(await consumer.poll()), 'once');
    } finally {
      proxy.reject(false);
    }
    const item = await withTimeout(put, 15_000, 'the put');
    assert.ok(item.startsWith(`${bucket}/i-`), item);
    assert.deepEqual(await items(path), [], 'no second item: the put was applied once');
    assert.equal(await consumer.poll(), null);
    await producer.close();
  });

  test('a put whose reply is lost and whose lookup read fails too: the failed read is not taken for "not there"', async () => {
    const path = uniquePath('put-lookup-fails');
    const bucket = `${path}/items/p-500/b-0000000000`;
    const proxy = await fx.proxy();
    // No retries in the session layer: the lookup's listing fails at its first lost reply.
    const ps = await fx.pool.connect(proxy.connectString, { retry: { maxRetries: 0 } });
    const producer = new DistributedQueue(ps, path);
    await producer.put('warm-up');
    assert.deepEqual(await itemData(fx.observer, path), ['warm-up']);

    const lost = proxy.loseReply({ path: `${bucket}/i-` }).then(() => proxy.loseReply({ op: 'getChildren', path: bucket }));
    const item = await withTimeout(producer.put('once'), 15_000, 'the put');
    await withTimeout(lost, 5000, 'both replies lost');
    assert.deepEqual(await itemData(fx.observer, path), ['once', 'warm-up'], 'one item per put');
    assert.ok((await items(path)).includes(item), item);
    await producer.close();
  });

  test(`a put that fills its bucket and then loses the connection while moving to the next one resolves (the item landed)`, async () => {
    const path = uniquePath('put-advance-lost');
    const proxy = await fx.proxy();
    const ps = await fx.pool.connect(proxy.connectString);
    const producer = new DistributedQueue(ps, path);
    const last = await fill(producer, BUCKET_CAPACITY - 1);
    assert.equal(seqOf(last), BUCKET_CAPACITY - 2);

    // The item lands at the bucket's last sequence number; the move to the next bucket loses
    // its reply.
    const lost = proxy.loseReply({ path: `${path}/items/p-500/b-0000000001` });
    const edge = await withTimeout(producer.put('edge'), 15_000, 'the put');
    await withTimeout(lost, 5000, 'the reply to the move lost');
    assert.equal(seqOf(edge), BUCKET_CAPACITY - 1, edge);
    assert.ok(await fx.observer.exists(edge), 'the item is there');
    const next = await producer.put('next');
    assert.ok(next.startsWith(`${path}/items/p-500/b-0000000001/`), `the next put goes to the next bucket: ${next}`);
    await producer.close();
    await drain(`${path}/items/p-500/b-0000000000`);
  });
});

describe('deadlines', () => {
  test('every call honours its timeoutMs while the server is unreachable; a put that timed out is there at most once', async () => {
    const path = uniquePath('deadlines');
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString);
    const q = new DistributedQueue(s, path);
    await q.put('warm-up');
    // A dead letter, laid out by hand, to re-queue and discard.
    const letterPath = `${path}/dead/p-500.b-0000000000.i-00000000-0000000000`;
    await fx.observer.mkdirp(`${path}/dead`);
    await fx.observer.create(letterPath, { data: 'dead' });
    await fx.observer.create(`${letterPath}/info`, { data: JSON.stringify({ item: 'x', deliveries: 1, error: 'e', at: 1 }) });
    const [letter] = await q.deadLetters();
    assert.equal(letter?.path, letterPath);
    proxy.blackhole();
    try {
      const calls: [string, Promise<unknown>][] = [
        ['requeueDeadLetter', q.requeueDeadLetter(letter!, { timeoutMs: 300 })],
        ['discardDeadLetter', q.discardDeadLetter(letter!, { timeoutMs: 300 })],
        ['put', q.put('late', { timeoutMs: 300 })],
        ['putAll', q.putAll(['a', 'b'], { timeoutMs: 300 })],
        ['poll', q.poll({ timeoutMs: 300 })],
        ['take', q.take({ timeoutMs: 300 })],
        ['peek', q.peek({ timeoutMs: 300 })],
        ['size', q.size({ timeoutMs: 300 })],
        ['deadLetters', q.deadLetters({ timeoutMs: 300 })],
      ];
      const settled = calls.map(([name, call]) => [name, call.catch((e: unknown) => e)] as const);
      for (const [name, call] of settled) {
        const err = await withTimeout(call, 3000, `${name} to give up`);
        assert.equal((err as { code?: string }).code, 'TIMEOUT', `${name}: ${String(err)}`);
      }
    } finally {
      proxy.pass();
    }
    await withTimeout(q.close(), 10_000, 'close');
    const data = await itemData(fx.observer, path);
    assert.ok(['late', 'a', 'b', 'dead'].every((x) => data.filter((d) => d === x).length <= 1), data.join(','));
    assert.deepEqual(await childrenOf(fx.observer, `${path}/producers`), [], 'no put record left after close');
    assert.deepEqual(await childrenOf(fx.observer, `${path}/consumers`), []);
  });

  test('a take or put whose signal aborts while its write is on its way over a slow live connection still gets the answer: the item is returned, the put resolves', async () => {
    const path = uniquePath('abort-in-flight');
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString);
    const q = new DistributedQueue(s, path);
    await q.putAll(['x', 'warm-up']);
    assert.equal(text(await q.poll()), 'x');
    // Slow, but answered well within the grace a sent write gets after an abort (500 ms): a
    // 400 ms round trip failed on a loaded machine.
    proxy.latency(60);
    const abortWhenSent = (ac: AbortController): Promise<void> => {
      const before = s.counters.multi;
      return waitFor(() => s.counters.multi > before, { timeoutMs: 5000, intervalMs: 5, message: 'the write sent' }).then(() => ac.abort(new Error('gave up')));
    };
    const takeAbort = new AbortController();
    const sent = abortWhenSent(takeAbort);
    assert.equal(text(await q.take({ signal: takeAbort.signal })), 'warm-up', 'the take that deleted the item returns it');
    await sent;
    const putAbort = new AbortController();
    const putSent = abortWhenSent(putAbort);
    const item = await q.put('kept', { signal: putAbort.signal });
    await putSent;
    proxy.pass();
    assert.deepEqual(await itemPaths(fx.observer, path), [item], 'the put resolved, once');
    await q.close();
  });

  test('closing the session ends a running consume() and a waiting take with ClosedError', async () => {
    const path = uniquePath('session-closed');
    const s = await fx.pool.connect(fx.server.connectString);
    const consumer = new DistributedQueue(s, path);
    const taker = new DistributedQueue(s, path);
    const consuming = consumer.consume(() => undefined, { onError: noop });
    const taking = taker.take();
    consuming.catch(noop);
    taking.catch(noop);
    await waitFor(async () => (await childrenOf(fx.observer, `${path}/consumers`)).length === 2, { timeoutMs: 5000, message: 'both waiting' });
    await withTimeout(s.close(), 5000, 'the session to close');
    await assert.rejects(withTimeout(consuming, 5000, 'consume to end'), ClosedError);
    await assert.rejects(withTimeout(taking, 5000, 'take to end'), ClosedError);
  });
});

describe('at-least-once: no claim is stranded', () => {
  test('a claim whose reply is lost is recovered by owner: the item is handled in the same session, nothing is left', async () => {
    const path = uniquePath('claim-lost');
    const { proxy, cs, q } = await oneItemBehindProxy(path);
    const sessionId = cs.sessionId;

    const lost = proxy.loseReply({ op: 'multi', path: `${path}/claims/` });
    const got: Delivery[] = [];
    const handled = deferred<void>();
    const stop = new AbortController();
    const consuming = q.consume(
      (_data, d) => {
        got.push(d);
        handled.resolve();
      },
      { signal: stop.signal, onError: noop },
    );
    await withTimeout(lost, 5000, 'the claim reply lost');
    try {
      await withTimeout(handled.promise, 10_000, 'the item handled after the lost claim reply');
    } finally {
      stop.abort();
    }
    await withTimeout(consuming, 10_000, 'consume to stop');
    assert.equal(cs.sessionId, sessionId, 'same session');
    assert.equal(got.length, 1);
    assert.equal(got[0]?.redeliveries, 0);
    assert.deepEqual(await items(path), []);
    assert.deepEqual(await claimsOf(path), []);
  });

  test('an acknowledgement lost on the way (never applied) is retried until applied: item and claim go', async () => {
    const path = uniquePath('ack-lost');
    const { proxy, cs, q } = await oneItemBehindProxy(path);
    const before = cs.counters.multi;
    let calls = 0;
    const stop = new AbortController();
    // The handler slows the connection down, so its acknowledgement is held in the proxy,
    // where dropping the connection loses it.
    const consuming = q.consume(
      () => {
        calls++;
        proxy.latency(400);
      },
      { signal: stop.signal, onError: noop },
    );
    try {
      await waitFor(() => cs.counters.multi >= before + 2, { timeoutMs: 5000, message: 'claim and acknowledgement sent' });
      proxy.dropAll();
      proxy.pass();
      await waitFor(async () => (await items(path)).length === 0 && (await claimsOf(path)).length === 0, {
        timeoutMs: 10_000,
        message: 'the acknowledgement applied: no item, no claim',
      });
    } finally {
      proxy.pass();
      stop.abort();
    }
    await withTimeout(consuming, 10_000, 'consume to stop');
    assert.equal(calls, 1, 'handled once');
  });

  test('a release lost on the way (never applied) is retried: the item is delivered again and acknowledged', async () => {
    const path = uniquePath('release-lost');
    const { proxy, cs, q } = await oneItemBehindProxy(path);
    const before = cs.counters.multi;
    const deliveries: number[] = [];
    const stop = new AbortController();
    const consuming = q.consume(
      (_data, d) => {
        deliveries.push(d.redeliveries);
        if (d.redeliveries === 0) {
          proxy.latency(400);
          throw new Error('fails once');
        }
      },
      { signal: stop.signal, onError: noop },
    );
    try {
      await waitFor(() => cs.counters.multi >= before + 2, { timeoutMs: 5000, message: 'claim and release sent' });
      proxy.dropAll();
      proxy.pass();
      await waitFor(async () => deliveries.length === 2 && (await items(path)).length === 0 && (await claimsOf(path)).length === 0, {
        timeoutMs: 10_000,
        message: 'delivered again and acknowledged',
      });
    } finally {
      proxy.pass();
      stop.abort();
    }
    await withTimeout(consuming, 10_000, 'consume to stop');
    assert.deepEqual(deliveries, [0, 1]);
  });

  test('an item removed by someone else while its handler runs (or fails) leaves no claim behind', async () => {
    const path = uniquePath('removed-under-handler');
    const [cs, ps] = await fx.sessionsN(2);
    const [x, y] = await new DistributedQueue(ps!, path).putAll(['X', 'Y']);
    const q = new DistributedQueue(cs!, path);
    const gate = deferred<void>();
    const held = new Set<string>();
    const stop = new AbortController();
    const consuming = q.consume(
      async (data) => {
        held.add(data.toString());
        await gate.promise;
        if (data.toString() === 'Y') throw new Error('Y fails');
      },
      { concurrency: 2, signal: stop.signal, onError: noop },
    );
    try {
      await waitFor(() => held.size === 2, { timeoutMs: 5000, message: 'both items held' });
      assert.equal((await claimsOf(path)).length, 2);
      await fx.observer.delete(x!);
      await fx.observer.delete(y!);
      gate.resolve();
      await waitFor(async () => (await claimsOf(path)).length === 0, { timeoutMs: 5000, message: 'no claim left' });
    } finally {
      gate.resolve();
      stop.abort();
    }
    await withTimeout(consuming, 10_000, 'consume to stop');
    assert.deepEqual(await items(path), []);
  });
});

describe('buckets', () => {
  test('a put landing in a drained bucket while a consumer reaps it is still taken by that (idle) consumer', async () => {
    const path = uniquePath('reap-race');
    const bucket0 = `${path}/items/p-500/b-0000000000`;
    const proxy = await fx.proxy();
    // A 500 ms round trip for seconds: with the default 4 s timeout the loss clock's margins
    // (docs/sessions.md) leave the watchdog no room, and a reset connection ends the race early.
    const cs = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 10_000 });
    const [ps] = await fx.sessionsN(1);
    const stale = new DistributedQueue(ps!, path); // its tail stays bucket 0
    const consumer = new DistributedQueue(cs, path);
    await stale.put('warm-up');
    assert.equal(text(await consumer.poll()), 'warm-up');
    // Slowed down, the consumer looks at bucket 0 (the tail: kept) while taking and again at the
    // head of the line; a producer moves on to bucket 1 just then, so the consumer's next look
    // (right after setting its watches, on the new tail) finds bucket 0 drained and deletes it.
    // The stale producer's put lands between that look and the delete.
    proxy.latency(250);
    const looks = cs.counters.exists;
    const deletes = cs.counters.delete;
    const taking = consumer.take({ timeoutMs: 30_000 });
    taking.catch(noop);
    await waitFor(() => cs.counters.exists >= looks + 2, { timeoutMs: 10_000, message: 'the consumer looked at bucket 0 twice' });
    await fx.observer.create(`${path}/items/p-500/b-0000000001`);
    await waitFor(() => cs.counters.delete > deletes, { timeoutMs: 10_000, message: 'the consumer deletes the drained bucket' });
    const late = await stale.put('late');
    assert.ok(late.startsWith(`${bucket0}/`), `the put landed in bucket 0: ${late}`);
    proxy.pass();
    assert.equal(text(await withTimeout(taking, 15_000, 'the idle consumer takes the late item')), 'late');
    assert.deepEqual(await items(path), []);
  });

  test('producers with a stale tail do not push a bucket past what consumers can list', async () => {
    const path = uniquePath('stale-tails');
    const [ps, cs] = await fx.sessionsN(2);
    // 21 producers put once into bucket 0 and keep it as their tail.
    const stale = Array.from({ length: 21 }, () => new DistributedQueue(ps!, path));
    for (const q of stale) await q.put('first');
    const filler = new DistributedQueue(ps!, path);
    await fill(filler, BUCKET_CAPACITY - stale.length);
    assert.ok((await filler.put('moves on')).startsWith(`${path}/items/p-500/b-0000000001/`));
    // Each stale producer now puts a batch of 1000.
    for (const q of stale) await q.putAll(Array.from({ length: 1000 }, () => 'b'));
    const counts = await Promise.all(
      (await childrenOf(fx.observer, `${path}/items/p-500`)).map(async (b) => (await fx.observer.exists(`${path}/items/p-500/${b}`))?.numChildren ?? 0),
    );
    const consumer = new DistributedQueue(cs!, path);
    const first = await consumer.poll().catch((e: unknown) => e);
    assert.ok(!(first instanceof QueueLayoutError), `a consumer can still list the queue: ${String(first)}`);
    assert.equal(text(first as Buffer), 'first');
    // A batch may end past the capacity: at most one batch more.
    assert.ok(Math.max(...counts) <= BUCKET_CAPACITY + 1000, `bucket sizes ${counts.join(', ')}`);
    for (const b of await childrenOf(fx.observer, `${path}/items/p-500`)) await drain(`${path}/items/p-500/${b}`);
  });
});
