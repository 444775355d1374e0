// onAbort and linkSignals without a server: one listener per signal however many subscribe,
// none left once they unsubscribe, EventTarget's dispatch rules, and linked signals that leave
// nothing in their sources.
import assert from 'node:assert/strict';
import { getEventListeners, once } from 'node:events';
import { describe, test } from 'node:test';
import { delay, raceAbort } from '../../src/util/abort.js';
import { linkSignals, onAbort, ownedController } from '../../src/util/signals.js';

const listeners = (s: AbortSignal): number => getEventListeners(s, 'abort').length;

describe('onAbort', () => {
  test('a thousand subscribers share one listener, gone once the last unsubscribes', () => {
    const c = new AbortController();
    const unsubscribe = Array.from({ length: 1000 }, () => onAbort(c.signal, () => assert.fail('unsubscribed')));
    assert.equal(listeners(c.signal), 1);
    for (const u of unsubscribe) u();
    unsubscribe[0]?.(); // again: harmless
    assert.equal(listeners(c.signal), 0);
    c.abort();
  });

  test('calls every subscriber once with the reason, in order, and leaves no listener', () => {
    const c = new AbortController();
    const seen: unknown[] = [];
    const fn = (reason: unknown): number => seen.push(reason);
    onAbort(c.signal, fn);
    onAbort(c.signal, fn); // the same function twice: called twice
    const reason = new Error('stop');
    c.abort(reason);
    assert.deepEqual(seen, [reason, reason]);
    assert.equal(listeners(c.signal), 0);
  });

  test('one that unsubscribes another during dispatch keeps it from being called', () => {
    const c = new AbortController();
    const seen: string[] = [];
    let second = (): void => undefined;
    onAbort(c.signal, () => {
      seen.push('first');
      second();
    });
    second = onAbort(c.signal, () => seen.push('second'));
    c.abort();
    assert.deepEqual(seen, ['first']);
  });

  test('a subscriber that throws does not stop the others; the error is reported as uncaught', async () => {
    const c = new AbortController();
    const seen: string[] = [];
    const boom = new Error('boom');
    onAbort(c.signal, () => {
      throw boom;
    });
    onAbort(c.signal, () => seen.push('second'));
    // node:test reports uncaught errors as failures: take this one before it does.
    const previous = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    try {
      const uncaught = once(process, 'uncaughtException');
      c.abort();
      assert.deepEqual(seen, ['second']);
      assert.equal((await uncaught)[0], boom);
    } finally {
      for (const l of previous) process.on('uncaughtException', l);
    }
  });

  test('a signal that takes no new properties (a caller may seal theirs) is followed the same way, and left with no listener', () => {
    const c = new AbortController();
    Object.seal(c.signal);
    const calls: unknown[] = [];
    const keep = onAbort(c.signal, (reason) => calls.push(reason));
    const gone = onAbort(c.signal, () => assert.fail('unsubscribed'));
    assert.equal(listeners(c.signal), 1);
    gone();
    const other = new AbortController(); // an ordinary signal meanwhile keeps its own fan
    const unOther = onAbort(other.signal, () => assert.fail('not aborted'));
    assert.equal(listeners(other.signal), 1);
    c.abort('why');
    assert.deepEqual(calls, ['why']);
    assert.equal(listeners(c.signal), 0);
    keep();
    unOther();
    assert.equal(listeners(other.signal), 0);
  });

  test('an owned controller keeps its one listener once added; others drop theirs with the last subscriber', () => {
    const owned = ownedController();
    const un = onAbort(owned.signal, () => undefined);
    un();
    assert.equal(listeners(owned.signal), 1, 'kept for the next subscriber');
    const called: string[] = [];
    onAbort(owned.signal, () => called.push('later'));
    assert.equal(listeners(owned.signal), 1);
    owned.abort();
    assert.deepEqual(called, ['later']);
    assert.equal(listeners(owned.signal), 0, 'gone once it aborted');
  });

  test('an already aborted signal calls nothing and gets no listener', () => {
    const signal = AbortSignal.abort();
    onAbort(signal, () => assert.fail('called'))();
    assert.equal(listeners(signal), 0);
  });

  test('raceAbort and delay subscribe once per signal, and unsubscribe when they settle', async () => {
    const c = new AbortController();
    const pending = Array.from({ length: 100 }, () => raceAbort(new Promise<void>(() => undefined), c.signal));
    const paused = Array.from({ length: 100 }, () => delay(60_000, c.signal, undefined));
    assert.equal(listeners(c.signal), 1);
    const settled = await Promise.all(Array.from({ length: 100 }, () => raceAbort(Promise.resolve(1), c.signal)));
    assert.equal(settled.length, 100);
    assert.equal(listeners(c.signal), 1); // the pending ones
    const reason = new Error('stop');
    c.abort(reason);
    for (const r of await Promise.allSettled([...pending, ...paused])) assert.equal(r.status === 'rejected' && r.reason, reason);
    assert.equal(listeners(c.signal), 0);
  });
});

describe('linkSignals', () => {
  test('aborts with the first source to abort, and leaves no listener in any source', () => {
    const a = new AbortController();
    const b = new AbortController();
    const links = Array.from({ length: 500 }, () => linkSignals([a.signal, undefined, b.signal]));
    assert.equal(listeners(a.signal), 1);
    assert.equal(listeners(b.signal), 1);
    const reason = new Error('b');
    b.abort(reason);
    for (const l of links) {
      assert.equal(l.signal.reason, reason);
      assert.equal(l.timedOut, false);
    }
    assert.equal(listeners(a.signal), 0);
  });

  test('disposed, it no longer follows its sources', () => {
    const a = new AbortController();
    const link = linkSignals([a.signal], 60_000);
    link.dispose();
    assert.equal(listeners(a.signal), 0);
    a.abort();
    assert.equal(link.signal.aborted, false);
  });

  test('an already aborted source aborts it at once; the timeout is not set', () => {
    const reason = new Error('early');
    const link = linkSignals([new AbortController().signal, AbortSignal.abort(reason)], 1);
    assert.equal(link.signal.reason, reason);
    assert.equal(link.timedOut, false);
  });

  test('after the timeout it aborts with a TimeoutError and says so; its sources are left alone', async () => {
    const a = new AbortController();
    const link = linkSignals([a.signal], 1);
    await once(link.signal, 'abort');
    assert.equal(link.timedOut, true);
    assert.equal((link.signal.reason as DOMException).name, 'TimeoutError');
    assert.equal(listeners(a.signal), 0);
    assert.equal(a.signal.aborted, false);
  });
});
