// The retry policy without a server: bounds on attempts, delays and the deadline.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConnectionLossError, InvalidArgumentError, NoNodeError } from '../../src/errors.js';
import { backoffDelay, resolveRetryPolicy, withRetry, type RetryPolicy } from '../../src/client/retry.js';

const loss = (): ConnectionLossError => new ConnectionLossError('CONNECTION_LOSS', 'lost', { zkCode: -4 });
const noSleep = async (): Promise<void> => undefined;

describe('retry policy', () => {
  test('retries connection loss at most maxRetries times, then throws the last loss', async () => {
    const policy: RetryPolicy = { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1, deadlineMs: 60_000 };
    let attempts = 0;
    await assert.rejects(
      withRetry(policy, async () => {
        attempts++;
        throw loss();
      }, noSleep),
      ConnectionLossError,
    );
    assert.equal(attempts, 4);
  });

  test('succeeds on a later attempt and passes the attempt number', async () => {
    const seen: number[] = [];
    const result = await withRetry(resolveRetryPolicy({ baseDelayMs: 1 }), async (attempt) => {
      seen.push(attempt);
      if (attempt < 2) throw loss();
      return 'ok';
    }, noSleep);
    assert.equal(result, 'ok');
    assert.deepEqual(seen, [0, 1, 2]);
  });

  test('never retries other errors', async () => {
    let attempts = 0;
    await assert.rejects(
      withRetry(resolveRetryPolicy({}), async () => {
        attempts++;
        throw new NoNodeError('NO_NODE', 'gone', { zkCode: -101 });
      }, noSleep),
      NoNodeError,
    );
    assert.equal(attempts, 1);
  });

  test('stops when the next backoff would pass the deadline', async () => {
    const policy: RetryPolicy = { maxRetries: 100, baseDelayMs: 40, maxDelayMs: 40, deadlineMs: 100 };
    const slept: number[] = [];
    let attempts = 0;
    await assert.rejects(
      withRetry(policy, async () => {
        attempts++;
        throw loss();
      }, async (ms) => {
        slept.push(ms);
        // A timer may fire a little before performance.now() says ms have passed; the policy
        // measures with performance.now(), so this sleep does too.
        const until = performance.now() + ms;
        while (performance.now() < until) await new Promise((r) => setTimeout(r, Math.max(1, until - performance.now())));
      }),
      ConnectionLossError,
    );
    assert.ok(attempts >= 2 && attempts <= 6, `attempts ${attempts}`);
    assert.ok(slept.reduce((a, b) => a + b, 0) <= 100);
  });

  test('backoff doubles, is capped, and jitters within [ceiling/2, ceiling]', () => {
    const p: RetryPolicy = { maxRetries: 10, baseDelayMs: 100, maxDelayMs: 1000, deadlineMs: 1e9 };
    assert.equal(backoffDelay(p, 0, () => 1), 100);
    assert.equal(backoffDelay(p, 0, () => 0), 50);
    assert.equal(backoffDelay(p, 2, () => 1), 400);
    assert.equal(backoffDelay(p, 10, () => 1), 1000);
    assert.equal(backoffDelay(p, 10, () => 0), 500);
  });

  test('invalid policies are typed errors', () => {
    assert.throws(() => resolveRetryPolicy({ maxRetries: -1 }), InvalidArgumentError);
    assert.throws(() => resolveRetryPolicy({ maxRetries: 1.5 }), InvalidArgumentError);
    assert.throws(() => resolveRetryPolicy({ baseDelayMs: Number.NaN }), InvalidArgumentError);
    assert.throws(() => resolveRetryPolicy({ deadlineMs: -1 }), InvalidArgumentError);
  });
});
