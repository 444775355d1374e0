// Idle consumers are woken by every put: items put one at a time, each waited for before the
// next, are all handled however the consumers' workers interleave (a put that lands while
// one worker lists and another, at the head of the idle line, sets its watches is not left
// waiting for the next put).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DistributedQueue } from '../../src/index.js';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import { itemPaths } from './support.js';

const fx = new ServerFixture();
const N = 300;

describe('wake-ups', () => {
  for (const concurrency of [1, 4]) {
    test(`consume, ${concurrency} worker(s) on each of two instances: 300 items put one at a time are each handled`, async () => {
      const path = uniquePath(`wake-${concurrency}`);
      const [sp, sa, sb] = await fx.sessionsN(3);
      const producer = new DistributedQueue(sp!, path);
      const handled: string[] = [];
      const stop = new AbortController();
      const consumers = [sa, sb].map((s, i) => new DistributedQueue(s!, path, { participantId: `c${i}` }));
      const runs = consumers.map((q) => q.consume((data) => void handled.push(data.toString()), { concurrency, signal: stop.signal }));
      for (let i = 0; i < N; i++) {
        await producer.put(`item-${i}`);
        await waitFor(() => handled.length === i + 1, { timeoutMs: 5_000, intervalMs: 1, message: `item ${i} handled (a put woke nobody)` });
      }
      stop.abort();
      await withTimeout(Promise.all(runs), 10_000, 'consumers to stop');
      assert.equal(new Set(handled).size, N);
      assert.deepEqual(await itemPaths(fx.observer, path), []);
      await Promise.all(consumers.map((q) => q.close()));
    });
  }
});
