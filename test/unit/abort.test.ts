// The abort helpers without a server: a request raced against a signal that has already
// aborted is not waited for, and its later failure is not an unhandled rejection (a queue take
// given up on between listing and reading crashed the process with the read's NoNodeError).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { raceAbort } from '../../src/util/abort.js';

/** Lets the event loop turn, so that a rejection nobody handles is reported. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('raceAbort', () => {
  test('an already aborted signal: rejects with its reason; the request failing later is not an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const reason = new Error('gave up');
      let fail!: (err: Error) => void;
      const request = new Promise<never>((_, reject) => (fail = reject));
      await assert.rejects(raceAbort(request, AbortSignal.abort(reason)), (e) => e === reason);
      fail(new Error('the request failed after its caller gave up'));
      await turn();
      await turn();
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('a signal that aborts later: rejects with its reason at once; the request still settles unobserved', async () => {
    const ac = new AbortController();
    let resolve!: (v: number) => void;
    const request = new Promise<number>((r) => (resolve = r));
    const raced = raceAbort(request, ac.signal);
    ac.abort(new Error('later'));
    await assert.rejects(raced, /later/);
    resolve(1);
    assert.equal(await request, 1);
  });
});
