// Poison items against a real standalone ZooKeeper: a delivery limit moves an item to the dead
// letters atomically (with its delivery count and last error), deliveries that ended with their
// consumer's session count too, redeliveries of a failing item are spaced out (its claim is kept
// meanwhile, and released at once when consuming stops), dead letters are listed, re-queued and
// discarded, a persistent error does not make consume() spin, and the options are validated.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Acls } from '../../src/client/index.js';
import { InvalidArgumentError, NoNodeError, NoAuthError } from '../../src/errors.js';
import { DistributedQueue, type DeadLetter, type Delivery } from '../../src/index.js';
import { expireSession, waitFor, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import { childrenOf, deferred, itemData, itemPaths, noop, text } from './support.js';

const fx = new ServerFixture();

const claimsOf = (path: string): Promise<string[]> => childrenOf(fx.observer, `${path}/claims`);
const quick = { baseDelayMs: 10, maxDelayMs: 20 };

describe('delivery limit and dead letters', () => {
  test('an item failing maxDeliveries times moves to the dead letters with its count and last error; listed, re-queued once, handled', async () => {
    const path = uniquePath('dead-letter');
    const [s, sp] = await fx.sessionsN(2);
    const producer = new DistributedQueue(sp!, path);
    const [poison] = await producer.putAll(['poison', 'fine'], { priority: 7 });
    const q = new DistributedQueue(s!, path);
    const seen: { data: string; redeliveries: number }[] = [];
    const errors: number[] = [];
    const stop = new AbortController();
    const consuming = q.consume(
      (data, d) => {
        seen.push({ data: data.toString(), redeliveries: d.redeliveries });
        if (data.toString() === 'poison') throw new Error(`bad payload, try ${d.redeliveries + 1}`);
      },
      { signal: stop.signal, maxDeliveries: 3, redeliveryBackoff: quick, onError: (_e, item) => errors.push(item.redeliveries) },
    );
    let letters: DeadLetter[] = [];
    try {
      await waitFor(async () => (letters = await q.deadLetters()).length === 1 && (await itemPaths(fx.observer, path)).length === 0, {
        timeoutMs: 10_000,
        message: 'the poison item dead-lettered, the other one handled',
      });
    } finally {
      stop.abort();
    }
    await withTimeout(consuming, 5000, 'consume to stop');
    assert.deepEqual(seen.filter((x) => x.data === 'poison').map((x) => x.redeliveries), [0, 1, 2], 'three deliveries, no fourth');
    assert.deepEqual(errors, [0, 1, 2]);
    const [letter] = letters;
    assert.ok(letter);
    assert.equal(text(letter.data), 'poison');
    assert.equal(letter.deliveries, 3);
    assert.equal(letter.lastError, 'Error: bad payload, try 3');
    assert.equal(letter.priority, 7);
    assert.equal(letter.itemPath, poison);
    assert.ok(letter.deadAt > 0 && letter.deadAt <= Date.now());
    assert.ok(letter.path.startsWith(`${path}/dead/`), letter.path);
    assert.deepEqual(await claimsOf(path), []);

    // Re-queued: a new item at its priority, the letter gone, in one transaction.
    const again = await producer.requeueDeadLetter(letter);
    assert.match(again, new RegExp(`^${path}/items/p-007/`));
    assert.deepEqual(await q.deadLetters(), []);
    assert.deepEqual(await itemData(fx.observer, path), ['poison']);
    await assert.rejects(producer.requeueDeadLetter(letter), NoNodeError, 'a letter is re-queued once');
    assert.deepEqual(await itemData(fx.observer, path), ['poison'], 'still one item');
    assert.equal(text(await q.poll()), 'poison');
    await producer.close();
    await q.close();
    assert.deepEqual(await childrenOf(fx.observer, `${path}/producers`), [], 'no put record left');
  });

  test('deliveries that ended with their consumer session count: past the limit the item is moved without running the handler again', async () => {
    const path = uniquePath('dead-after-expiry');
    const proxy = await fx.proxy();
    const sA = await fx.pool.connect(proxy.connectString);
    const [sB] = await fx.sessionsN(1);
    await new DistributedQueue(sB!, path).put('crashes consumers');
    const qA = new DistributedQueue(sA, path);
    const held = deferred<Delivery>();
    const stopA = new AbortController();
    const consumingA = qA.consume(
      async (_data, d) => {
        held.resolve(d);
        await new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve(), { once: true }));
      },
      { signal: stopA.signal, onError: noop },
    );
    await withTimeout(held.promise, 5000, "A's delivery");
    stopA.abort(); // A claims nothing more; its handler runs until its session is gone
    await expireSession(sA, proxy);

    const qB = new DistributedQueue(sB!, path);
    let ran = 0;
    const stopB = new AbortController();
    const consumingB = qB.consume(() => void ran++, { signal: stopB.signal, maxDeliveries: 1 });
    let letters: DeadLetter[] = [];
    try {
      await waitFor(async () => (letters = await qB.deadLetters()).length === 1, { timeoutMs: 10_000, message: 'moved to the dead letters' });
    } finally {
      stopA.abort();
      stopB.abort();
    }
    await withTimeout(Promise.all([consumingA, consumingB]), 10_000, 'consumers to stop');
    assert.equal(ran, 0, "B did not run the handler: the item had had its one delivery");
    assert.equal(letters[0]?.deliveries, 1);
    assert.match(letters[0]?.lastError ?? '', /without an acknowledgement/);
    assert.deepEqual(await itemPaths(fx.observer, path), []);
    assert.deepEqual(await claimsOf(path), []);
    assert.equal(await qB.discardDeadLetter(letters[0]!), true);
    assert.equal(await qB.discardDeadLetter(letters[0]!), false, 'gone already');
    assert.deepEqual(await qB.deadLetters(), []);
  });
});

describe('re-queue under faults', () => {
  test('a re-queue whose reply is lost, and whose item is taken before the producer is back: resolves, one item, the letter gone', async () => {
    const path = uniquePath('requeue-lost');
    const proxy = await fx.proxy();
    const ps = await fx.pool.connect(proxy.connectString);
    const [cs] = await fx.sessionsN(1);
    const consumer = new DistributedQueue(cs!, path);
    await consumer.put('poison');
    await withTimeout(
      consumer.consume(
        () => {
          throw new Error('no');
        },
        { maxDeliveries: 1, onError: noop, signal: AbortSignal.timeout(1500) },
      ),
      5000,
      'consume to stop',
    );
    const producer = new DistributedQueue(ps, path);
    const [letter] = await producer.deadLetters();
    assert.ok(letter, 'dead-lettered');

    const lost = proxy.loseReply({ op: 'multi', path: `${path}/dead/` }).then(() => proxy.reject(true));
    const requeued = producer.requeueDeadLetter(letter);
    requeued.catch(noop);
    await lost;
    try {
      assert.equal(text(await consumer.poll()), 'poison');
    } finally {
      proxy.reject(false);
    }
    await withTimeout(requeued, 15_000, 'the re-queue');
    assert.deepEqual(await itemPaths(fx.observer, path), [], 'not put twice');
    assert.deepEqual(await producer.deadLetters(), [], 'the letter is gone');
    await producer.close();
  });
});

describe('redelivery backoff', () => {
  test('a failing item is redelivered after a growing delay (a handful of runs in 2 s, not hundreds); its claim is kept meanwhile, and released at once when consuming stops', async () => {
    const path = uniquePath('redelivery-backoff');
    const [s, sp] = await fx.sessionsN(2);
    await new DistributedQueue(sp!, path).put('always fails');
    const q = new DistributedQueue(s!, path);
    let runs = 0;
    // With the default backoff (200 ms doubling, jittered down to half) at most 5 runs fit in
    // 2 s (at 0, 0.1, 0.3, 0.7 and 1.5 s at the earliest); without one, hundreds.
    await withTimeout(
      q.consume(
        () => {
          runs++;
          throw new Error('always');
        },
        { signal: AbortSignal.timeout(2000), onError: noop },
      ),
      5000,
      'consume to stop',
    );
    assert.ok(runs >= 2 && runs <= 6, `${runs} deliveries in 2 s`);
    assert.deepEqual(await claimsOf(path), [], 'the kept claim was released when consuming stopped');
    assert.deepEqual(await itemData(fx.observer, path), ['always fails'], 'the item is still there');

    // A long backoff does not hold up close(): the kept claim is released at once.
    let failed = 0;
    const consuming2 = q.consume(
      () => {
        failed++;
        throw new Error('again');
      },
      { onError: noop, redeliveryBackoff: { baseDelayMs: 600_000, maxDelayMs: 600_000 } },
    );
    await waitFor(() => failed === 1, { timeoutMs: 5000, message: 'failed once' });
    await waitFor(async () => (await claimsOf(path)).length === 1, { timeoutMs: 5000, message: 'the claim kept' });
    await withTimeout(q.close(), 5000, 'close');
    await withTimeout(consuming2, 5000, 'consume to stop on close');
    assert.deepEqual(await claimsOf(path), []);
    assert.equal((await itemPaths(fx.observer, path)).length, 1);
  });

  test('no permission to claim is reported once and ends consume with NoAuthError at once, not retried', async () => {
    const path = uniquePath('no-auth');
    const [s, sp] = await fx.sessionsN(2);
    await new DistributedQueue(sp!, path).put('x');
    await fx.observer.create(`${path}/claims`, { acl: Acls.READ_ONLY });
    const q = new DistributedQueue(s!, path);
    const errors: unknown[] = [];
    const started = performance.now();
    await assert.rejects(withTimeout(q.consume(() => assert.fail('no claim, no delivery'), { signal: AbortSignal.timeout(10_000), onError: (e) => errors.push(e) }), 5000, 'consume to stop'), NoAuthError);
    assert.ok(performance.now() - started < 3000, 'refused at once, not at the signal');
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof NoAuthError, String(errors[0]));
    await q.close();
    assert.equal((await itemPaths(fx.observer, path)).length, 1);
    await fx.observer.delete(`${path}/claims`);
  });
});

describe('bad input', () => {
  test('consume, put and dead-letter options are validated (InvalidArgumentError); nothing is created', async () => {
    const [s] = await fx.sessionsN(1);
    const path = uniquePath('bad-options');
    const q = new DistributedQueue(s!, path);
    const bad: [string, unknown][] = [
      ['maxDeliveries', { maxDeliveries: 0 }],
      ['maxDeliveries', { maxDeliveries: 1.5 }],
      ['maxDeliveries', { maxDeliveries: '3' }],
      ['redeliveryBackoff', { redeliveryBackoff: 'fast' }],
      ['redeliveryBackoff', { redeliveryBackoff: { baseDelayMs: -1 } }],
      ['redeliveryBackoff', { redeliveryBackoff: { maxDelayMs: 2 ** 31 } }],
      ['redeliveryBackoff', { redeliveryBackoff: { baseDelayMs: 500, maxDelayMs: 100 } }],
      ['errorBackoff', { errorBackoff: { baseDelayMs: Number.NaN } }],
      ['onError', { onError: 'log' }],
      ['options', 'x'],
    ];
    for (const [what, options] of bad) {
      await assert.rejects(q.consume(() => undefined, options as never), InvalidArgumentError, what);
    }
    await assert.rejects(q.put('x', { timeoutMs: -1 }), InvalidArgumentError);
    await assert.rejects(q.put('x', { signal: {} as AbortSignal }), InvalidArgumentError);
    await assert.rejects(q.poll({ timeoutMs: Number.NaN }), InvalidArgumentError);
    await assert.rejects(q.peek({ signal: 'x' as never }), InvalidArgumentError);
    await assert.rejects(q.size({ timeoutMs: -5 }), InvalidArgumentError);
    await assert.rejects(q.deadLetters({ limit: 0 }), InvalidArgumentError);
    await assert.rejects(q.deadLetters({ limit: 10_001 }), InvalidArgumentError);
    await assert.rejects(q.requeueDeadLetter({} as DeadLetter), InvalidArgumentError);
    await assert.rejects(q.requeueDeadLetter({ path: '/elsewhere/x', data: Buffer.alloc(0), priority: 1 } as DeadLetter), InvalidArgumentError);
    await assert.rejects(q.discardDeadLetter(null as never), InvalidArgumentError);
    const reason = new Error('already gave up');
    await assert.rejects(q.put('x', { signal: AbortSignal.abort(reason) }), (e) => e === reason);
    assert.equal(await fx.observer.exists(path), null, 'nothing was created');
  });
});
