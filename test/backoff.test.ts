// Background loops under an error that persists (issue 10, item 2): a LeaderLatch (and a
// LeaderSelector) on a path that cannot have children (an ephemeral node: every create under it
// fails with NO_CHILDREN_FOR_EPHEMERALS), a consumer on such a queue, and a handler that always
// throws. (A permission refusal is not retried at all: test/security/other-identity.test.ts.) Each loop backs off with jitter (default 100 ms doubling to 5 s,
// or its errorBackoff option), reports each failure once, and costs a few requests a second.
// The 2-second windows below measure a rate: the bound is the requirement itself.
import assert from 'node:assert/strict';
import { setTimeout as window } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { type SessionCounters, type ZkSession } from '../src/client/index.js';
import { InvalidArgumentError, ZooKeeperError } from '../src/errors.js';
import { LeaderLatch, LeaderSelector } from '../src/leader/index.js';
import { DistributedQueue } from '../src/queue/index.js';
import { waitFor, withTimeout } from '../src/testing/index.js';
import { ServerFixture, uniquePath } from './helpers.js';

const fx = new ServerFixture();
const WINDOW_MS = 2000;
const REQUESTS: (keyof SessionCounters)[] = ['create', 'delete', 'exists', 'getData', 'setData', 'getChildren', 'multi', 'sync', 'removeWatches'];

function requests(s: ZkSession): number {
  const c = s.counters;
  return REQUESTS.reduce((n, k) => n + c[k], 0);
}

/** The persistent error: a create under an ephemeral node. */
const noChildren = (e: unknown): boolean => e instanceof ZooKeeperError && e.code === 'NO_CHILDREN_FOR_EPHEMERALS';

/** `${base}/locked`: an ephemeral node of the observer, under which nothing can be created. */
async function lockedPath(name: string): Promise<{ base: string; locked: string }> {
  const base = uniquePath(name);
  await fx.observer.mkdirp(base);
  const locked = `${base}/locked`;
  await fx.observer.create(locked, { mode: 'EPHEMERAL' });
  return { base, locked };
}

/** Removes a test's tree; the locked node has no children (nobody could create any). */
async function cleanUp(base: string): Promise<void> {
  await fx.observer.delete(`${base}/locked`);
  await fx.observer.delete(base);
  assert.equal(await fx.observer.exists(base), null);
}

describe('LeaderLatch under a persistent error', () => {
  test('backs off (default 100 ms doubling): at most 10 creates in 2 s, each failure emitted once as error', async () => {
    const { base, locked } = await lockedPath('latch-persistent');
    const [s] = (await fx.sessionsN(1)) as [ZkSession];
    const latch = new LeaderLatch(s, locked);
    const errors: Error[] = [];
    latch.on('error', (e) => errors.push(e));
    const creates0 = s.counters.create;
    const requests0 = requests(s);
    latch.start();
    await window(WINDOW_MS);
    const creates = s.counters.create - creates0;
    const sent = requests(s) - requests0;
    await latch.close();
    assert.ok(errors.length >= 3, `it keeps trying: ${errors.length} errors`);
    assert.ok(errors.every(noChildren), String(errors.find((e) => !noChildren(e))));
    assert.ok(creates <= 10, `${creates} creates in ${WINDOW_MS} ms`);
    assert.ok(sent <= 25, `${sent} requests in ${WINDOW_MS} ms`);
    // One error per failed attempt (the last attempt may still be on its way).
    assert.ok(errors.length === creates || errors.length === creates - 1, `${errors.length} errors for ${creates} creates`);
    await cleanUp(base);
  });

  test('errorBackoff is honoured ({ baseDelayMs: 2000 }: at most 2 attempts in 2 s) and validated', async () => {
    const { base, locked } = await lockedPath('latch-backoff');
    const [s] = (await fx.sessionsN(1)) as [ZkSession];
    const latch = new LeaderLatch(s, locked, { errorBackoff: { baseDelayMs: 2000, maxDelayMs: 2000 } });
    const errors: Error[] = [];
    latch.on('error', (e) => errors.push(e));
    const creates0 = s.counters.create;
    latch.start();
    await waitFor(() => errors.length > 0, { timeoutMs: 5000, message: 'the first failure' });
    // The next attempt comes 1 to 2 s after the first failure; none after it within the window.
    await window(WINDOW_MS - 100);
    const creates = s.counters.create - creates0;
    await latch.close();
    assert.ok(creates >= 1 && creates <= 2, `${creates} creates`);
    for (const bad of ['x', null, { baseDelayMs: -1 }, { baseDelayMs: 1.5 }, { maxDelayMs: 2 ** 31 }, { baseDelayMs: 500, maxDelayMs: 100 }]) {
      assert.throws(() => new LeaderLatch(s, locked, { errorBackoff: bad as never }), InvalidArgumentError, JSON.stringify(bad));
    }
    await cleanUp(base);
  });

  test('LeaderSelector.run reports each failure to onError, and an abort ends the run with its reason', async () => {
    const { base, locked } = await lockedPath('selector-persistent');
    const [s] = (await fx.sessionsN(1)) as [ZkSession];
    const selector = new LeaderSelector(s, locked);
    const errors: Error[] = [];
    const stop = new AbortController();
    const reason = new Error('enough');
    const run = selector.run(() => assert.fail('never leader'), { signal: stop.signal, onError: (e) => errors.push(e) });
    await waitFor(() => errors.length >= 2, { timeoutMs: 5000, message: 'two reported failures' });
    stop.abort(reason);
    await assert.rejects(withTimeout(run, 5000, 'run after abort'), (e) => e === reason);
    assert.ok(errors.every(noChildren), String(errors[0]));
    await selector.close();
    await cleanUp(base);
  });
});

describe('a callback that throws', () => {
  test("an 'error' listener or an onError that throws ends neither the election loop nor the consumer", async () => {
    const { base, locked } = await lockedPath('throwing-listeners');
    const [s] = (await fx.sessionsN(1)) as [ZkSession];
    const warned: string[] = [];
    const onWarning = (w: Error): void => {
      warned.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      const latch = new LeaderLatch(s, locked, { errorBackoff: { baseDelayMs: 20, maxDelayMs: 40 } });
      let heard = 0;
      latch.on('error', () => {
        heard += 1;
        throw new Error('listener bug');
      });
      latch.start();
      await waitFor(() => heard >= 3, { timeoutMs: 5000, message: 'the latch to keep trying' });
      await latch.close();
      const queue = new DistributedQueue(s, locked);
      let reported = 0;
      const stop = new AbortController();
      const consuming = queue.consume(() => undefined, {
        signal: stop.signal,
        errorBackoff: { baseDelayMs: 20, maxDelayMs: 40 },
        onError: () => {
          reported += 1;
          throw new Error('onError bug');
        },
      });
      await waitFor(() => reported >= 3, { timeoutMs: 5000, message: 'the consumer to keep trying' });
      stop.abort();
      await withTimeout(consuming, 5000, 'consume after abort');
      await queue.close();
      await waitFor(() => warned.length >= 2, { timeoutMs: 2000, message: 'warnings' });
    } finally {
      process.off('warning', onWarning);
    }
    await cleanUp(base);
  });
});

describe('consume() under a persistent error', () => {
  test('on a queue it may not use: at most 10 attempts in 2 s, each failure reported once to onError', async () => {
    const { base, locked } = await lockedPath('consume-persistent');
    const [s] = (await fx.sessionsN(1)) as [ZkSession];
    const queue = new DistributedQueue(s, locked);
    const failures: unknown[] = [];
    const stop = new AbortController();
    const creates0 = s.counters.create;
    const listings0 = s.counters.getChildren;
    const requests0 = requests(s);
    const consuming = queue.consume(() => assert.fail('nothing to consume'), { signal: stop.signal, onError: (e) => failures.push(e) });
    await window(WINDOW_MS);
    // Each attempt ends at its first create under the ephemeral node; the listings (is another
    // recipe there?) are counted too, so attempts may exceed failures by one.
    const attempts = s.counters.create - creates0 + (s.counters.getChildren - listings0);
    const sent = requests(s) - requests0;
    stop.abort();
    await withTimeout(consuming, 5000, 'consume after abort');
    await queue.close();
    assert.ok(failures.length >= 3, `it keeps trying: ${failures.length} failures`);
    assert.ok(failures.every(noChildren), String(failures.find((e) => !noChildren(e))));
    assert.ok(attempts <= 10, `${attempts} attempts in ${WINDOW_MS} ms`);
    assert.ok(sent <= 25, `${sent} requests in ${WINDOW_MS} ms`);
    assert.ok(failures.length === attempts || failures.length === attempts - 1, `${failures.length} failures for ${attempts} attempts`);
    await cleanUp(base);
  });

  test('a handler that always throws is redelivered with a growing backoff, not hundreds of times; redeliveryBackoff slows it further', async () => {
    const base = uniquePath('consume-throws');
    const [s] = (await fx.sessionsN(1)) as [ZkSession];
    const measure = async (options: { redeliveryBackoff?: { baseDelayMs: number; maxDelayMs: number } }): Promise<{ runs: number; reported: number; sent: number }> => {
      const path = `${base}/q${options.redeliveryBackoff ? 'slow' : 'default'}`;
      const queue = new DistributedQueue(s, path);
      await queue.put('poison');
      let runs = 0;
      const reported: unknown[] = [];
      const stop = new AbortController();
      const requests0 = requests(s);
      const consuming = queue.consume(
        () => {
          runs += 1;
          throw new Error('always');
        },
        { ...options, signal: stop.signal, onError: (e) => reported.push(e) },
      );
      await window(WINDOW_MS);
      const result = { runs, reported: reported.length, sent: requests(s) - requests0 };
      stop.abort();
      await withTimeout(consuming, 5000, 'consume after abort');
      await queue.close();
      return result;
    };
    // The item is hidden for 200 ms, 400 ms, 800 ms, ... (doubling to 30 s) after each failure.
    const byDefault = await measure({});
    assert.ok(byDefault.runs >= 2 && byDefault.runs <= 10, `${byDefault.runs} handler runs in ${WINDOW_MS} ms`);
    assert.equal(byDefault.reported, byDefault.runs, 'each failure reported once');
    // Each redelivery costs one release, one claim and the listings of the woken consumer: a
    // bounded number of requests per delivery, so the rate falls as the backoff grows.
    assert.ok(byDefault.sent <= 40 * byDefault.runs, `${byDefault.sent} requests for ${byDefault.runs} deliveries`);
    const slowed = await measure({ redeliveryBackoff: { baseDelayMs: 2000, maxDelayMs: 2000 } });
    assert.ok(slowed.runs >= 1 && slowed.runs <= 2, `${slowed.runs} handler runs with a 1-2 s backoff`);
    await fx.observer.deleteRecursive(base);
    assert.equal(await fx.observer.exists(base), null);
  });
});
