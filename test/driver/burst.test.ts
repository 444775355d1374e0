// A burst of acquisitions on one session shares one listing: the creates go out, then one
// getChildren sent behind all of them (a session's requests are processed in order, so it
// shows every node of the burst). N waiters in one process so cost N creates and one listing
// per session, not N listings of up to N names, and still hand over in order, one at a time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Mutex, Semaphore } from '../../src/index.js';
import { positionIn, sortChildren, sortChildrenShared } from '../../src/driver/names.js';
import { foreignChild } from '../../src/driver/layouts.js';
import { waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

test('a burst of 300 acquisitions on one session sends one listing; grants come one at a time, in queue order', async () => {
  const path = uniquePath('burst');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  await using mutex = new Mutex(s, path);
  const first = await mutex.acquire({ timeoutMs: 10_000 });
  const before = s.counters.getChildren;
  let holding = 0;
  let most = 0;
  const tokens: bigint[] = [];
  const all = Array.from({ length: 300 }, () =>
    mutex.acquire({ timeoutMs: 60_000 }).then(async (h) => {
      holding++;
      most = Math.max(most, holding);
      tokens.push(h.fencingToken);
      await Promise.resolve();
      holding--;
      await h.release();
    }),
  );
  // Every node queued, then let them go.
  await waitFor(async () => ((await fx.observer.exists(path))?.numChildren ?? 0) >= 301, { timeoutMs: 20_000, message: 'the burst queued' });
  assert.equal(s.counters.getChildren - before, 1, 'one listing for the whole burst');
  await first.release();
  await Promise.all(all);
  assert.equal(most, 1, 'one holder at a time');
  assert.deepEqual([...tokens].sort((a, b) => (a < b ? -1 : 1)), tokens, 'granted in queue (token) order');
  assert.deepEqual(await fx.children(path), []);
});

test('a semaphore burst shares its listing too, and never exceeds its leases', async () => {
  const path = uniquePath('burst-sem');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  await using sem = new Semaphore(s, path, { maxLeases: 3 });
  const full = await Promise.all([1, 2, 3].map(() => sem.acquire(1, { timeoutMs: 10_000 })));
  const before = s.counters.getChildren;
  let holding = 3;
  let most = 3;
  const all = Array.from({ length: 60 }, () =>
    sem.acquire(1, { timeoutMs: 60_000 }).then(async (lease) => {
      holding++;
      most = Math.max(most, holding);
      await new Promise((r) => setImmediate(r));
      holding--;
      await lease.release();
    }),
  );
  await waitFor(async () => ((await fx.observer.exists(path))?.numChildren ?? 0) >= 63, { timeoutMs: 20_000, message: 'the burst queued' });
  assert.equal(s.counters.getChildren - before, 1, 'one listing for the whole burst');
  for (const lease of full) {
    holding--;
    await lease.release();
  }
  await Promise.all(all);
  assert.ok(most <= 3, `at most 3 at once (${most})`);
  assert.deepEqual(await fx.children(path), []);
});

test('shared listings: sorted once, positions and the foreign-layout look-up answered from one index', () => {
  const kinds = ['lock-'];
  const name = (i: number, kind = 'lock-'): string => `_c_00000000-0000-4000-8000-${String(i).padStart(12, '0')}-${kind}${String(i).padStart(10, '0')}`;
  // Long enough to be shared (a burst's listing); reversed, with a stranger among them.
  const children = [...Array.from({ length: 40 }, (_, i) => name(40 - i)), 'other'];
  const q1 = sortChildrenShared(children, kinds);
  assert.equal(sortChildrenShared(children, kinds), q1, 'the same queue for the same listing');
  assert.deepEqual(q1, sortChildren(children, kinds));
  assert.ok(Object.isFrozen(q1));
  assert.equal(positionIn(q1, name(1)), 0);
  assert.equal(positionIn(q1, name(2)), 1);
  assert.equal(positionIn(q1, 'other'), -1);
  const own = ['lock'] as const;
  assert.equal(foreignChild(children, own), undefined);
  const latch = Array.from({ length: 40 }, (_, i) => name(i, 'latch-'));
  assert.match(foreignChild(latch, own)?.users ?? '', /LeaderLatch/);
  assert.equal(foreignChild(latch, own), foreignChild(latch, own), 'answered once per listing');
  // A short listing is computed by each reader, with the same answers (its own copy: not frozen).
  const short = [name(2), 'other', name(1)];
  const q2 = sortChildrenShared(short, kinds);
  assert.deepEqual(q2, sortChildren(short, kinds));
  assert.notEqual(sortChildrenShared(short, kinds), q2, 'computed again for the next reader');
  assert.equal(positionIn(q2, name(1)), 0);
  assert.equal(positionIn(q2, name(2)), 1);
  assert.equal(positionIn(q2, 'other'), -1);
  assert.match(foreignChild([name(3, 'latch-')], own)?.users ?? '', /LeaderLatch/);
});
