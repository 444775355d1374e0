// The driver's WatchEvents without a server: each watch is followed once however many wake-ups
// a wait has, events come in firing order, stale ones (watches of an earlier window, or dropped)
// are skipped, and a wait that was given up sees no event any more.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WatchEvent } from '../../src/client/types.js';
import { Restart, WatchEvents } from '../../src/driver/watch-events.js';

/** A watch whose `changed` counts how many callbacks were attached to it, settled by hand. */
function watch(): { changed: Promise<WatchEvent>; attached: () => number; fire: (type: WatchEvent['type']) => void } {
  let attached = 0;
  let fire: (type: WatchEvent['type']) => void = () => undefined;
  const inner = new Promise<WatchEvent>((resolve) => {
    fire = (type) => resolve({ type, path: '/x' } as WatchEvent);
  });
  const changed = {
    then(onFulfilled?: (e: WatchEvent) => unknown, onRejected?: (err: unknown) => unknown) {
      attached++;
      return inner.then(onFulfilled, onRejected);
    },
  } as unknown as Promise<WatchEvent>;
  return { changed, attached: () => attached, fire };
}

test('a watch is followed once, however many times a wait looks again', () => {
  const events = new WatchEvents();
  const a = watch();
  const b = watch();
  const watches = new Map([
    ['a', { changed: a.changed }],
    ['b', { changed: b.changed }],
  ]);
  for (let i = 0; i < 100; i++) events.follow(watches);
  assert.equal(a.attached(), 1);
  assert.equal(b.attached(), 1);
});

test('events in firing order; stale ones skipped; a given-up wait sees none', async () => {
  const events = new WatchEvents();
  const a = watch();
  const b = watch();
  const c = watch();
  const watches = new Map([
    ['a', { changed: a.changed }],
    ['b', { changed: b.changed }],
    ['c', { changed: c.changed }],
  ]);
  events.follow(watches);
  b.fire('NODE_DATA_CHANGED');
  a.fire('NODE_DELETED');
  await new Promise((r) => setImmediate(r));
  // b left the window meanwhile: its event is stale.
  assert.deepEqual(await events.next(['a', 'c'], undefined), { name: 'a', type: 'NODE_DELETED' });
  // Dropped from the map before it fired: nothing is reported for it.
  watches.delete('c');
  c.fire('NODE_DELETED');
  const given = new AbortController();
  const pending = events.next(['c'], given.signal);
  given.abort(new Error('gave up'));
  await assert.rejects(pending, /gave up/);
  // Already given up: rejects at once, even with nothing queued.
  await assert.rejects(events.next(['a'], given.signal), /gave up/);
});

test("our own node's watch restarts a wait, but once the wait is closed its firing (our own release) is dropped", async () => {
  const events = new WatchEvents();
  const own = watch();
  events.followOwn(Promise.resolve({ changed: own.changed }));
  own.fire('NODE_DELETED');
  await assert.rejects(events.next(['a'], undefined), Restart);

  const closed = new WatchEvents();
  const released = watch();
  const other = watch();
  closed.followOwn(Promise.resolve({ changed: released.changed }));
  closed.follow(new Map([['a', { changed: other.changed }]]));
  closed.close();
  released.fire('NODE_DELETED');
  other.fire('NODE_DELETED');
  await new Promise((r) => setImmediate(r));
  // Nothing was kept for a wait that ended: asked again, only the give-up answers.
  const given = new AbortController();
  const pending = closed.next(['a'], given.signal);
  given.abort(new Error('gave up'));
  await assert.rejects(pending, /gave up/);
});
