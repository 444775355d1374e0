import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor, WaitTimeoutError, withTimeout } from '../../src/testing/index.js';

describe('waitFor', () => {
  it('resolves to the first truthy value', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? `after ${calls}` : undefined), { intervalMs: 1 });
    assert.equal(value, 'after 3');
  });

  it('awaits async predicates and treats throws as not yet', async () => {
    let calls = 0;
    const value = await waitFor(
      async () => {
        if (++calls < 3) throw new Error('not ready');
        return 42;
      },
      { intervalMs: 1 },
    );
    assert.equal(value, 42);
  });

  it('times out with the last error as cause', async () => {
    await assert.rejects(
      waitFor(
        () => {
          throw new Error('still broken');
        },
        { timeoutMs: 50, intervalMs: 5, message: 'the thing' },
      ),
      (error: unknown) => {
        assert.ok(error instanceof WaitTimeoutError);
        assert.equal(error.code, 'WAIT_TIMEOUT');
        assert.match(error.message, /the thing.*still broken/);
        assert.ok(error.cause instanceof Error);
        return true;
      },
    );
  });

  it('stops on abort', async () => {
    const controller = new AbortController();
    const waiting = waitFor(() => false, { signal: controller.signal, timeoutMs: 60_000 });
    controller.abort(new Error('enough'));
    await assert.rejects(waiting, /enough/);
  });
});

describe('withTimeout', () => {
  it('passes a value through', async () => {
    assert.equal(await withTimeout(Promise.resolve(7), 1000), 7);
  });

  it('rejects when the promise is too slow', async () => {
    await assert.rejects(withTimeout(new Promise(() => {}), 20, 'nothing'), WaitTimeoutError);
  });
});
