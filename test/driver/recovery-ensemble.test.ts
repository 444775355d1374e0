// Recovery after a lost create reply on a 3-member ensemble: the reply is lost on one member and
// the client reconnects to another, which may not have applied that create yet. The lookups (the
// lock driver's protected names, the queue producer's item ids) sync first, so they find what
// was created; nothing is created twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Mutex } from '../../src/mutex/index.js';
import { DistributedQueue } from '../../src/queue/index.js';
import { ClusterFixture, uniquePath } from '../helpers.js';

const fx = new ClusterFixture();
/** Children of `dir` with their owners, sorted by name. */
async function owned(dir: string): Promise<{ name: string; owner: bigint }[]> {
  await fx.observer.sync(dir);
  const children = (await fx.observer.getChildren(dir)).children.sort();
  const stats = await Promise.all(children.map((c) => fx.observer.exists(`${dir}/${c}`)));
  return children.flatMap((name, i) => {
    const st = stats[i];
    return st ? [{ name, owner: st.ephemeralOwner }] : [];
  });
}

test('a lost create reply, then a reconnect to another member: our node is adopted, never a second one', async () => {
  const dir = uniquePath('other-member');
  await fx.observer.mkdirp(dir);
  const { victim, viaFirst, viaSecond, failOver } = await fx.behindTwoFollowers();
  const sessionId = victim.sessionId;
  const mutex = new Mutex(victim, dir, { reapParentAfterMs: Infinity });

  // The create is applied through the first member, its reply lost; the lookup lists from the
  // second member.
  const lost = viaFirst.loseReply({ op: 'create', path: dir }).then(failOver);
  const syncs = victim.counters.sync;
  const handle = await mutex.acquire({ timeoutMs: 15_000 });
  await lost;

  assert.equal(victim.sessionId, sessionId, 'same session, reconnected');
  assert.equal(viaFirst.connections, 0);
  assert.equal(viaSecond.connections, 1, 'reconnected to the second member');
  assert.deepEqual(await owned(dir), [{ name: handle.path.slice(dir.length + 1), owner: sessionId }], 'exactly one node: the adopted one');
  // Whether the second member had applied our create when we listed is a race this test cannot
  // force (both followers apply a commit within milliseconds of each other); what makes the
  // answer right every time is the sync before the listing.
  assert.ok(victim.counters.sync > syncs, 'the lookup synced before listing');

  await handle.release();
  assert.deepEqual(await owned(dir), [], 'nothing left');
  assert.equal(victim.activeWatchCount, 0);
  await fx.waitNoWatches(victim, dir);
  await mutex.close();
  await fx.observer.deleteRecursive(dir);
});

test('a put whose reply is lost, then a reconnect to another member: exactly one item', async () => {
  const path = uniquePath('put-other-member');
  const bucket = `${path}/items/p-500/b-0000000000`;
  const { victim, viaSecond, viaFirst, failOver } = await fx.behindTwoFollowers();
  const queue = new DistributedQueue(victim, path);

  const lost = viaFirst.loseReply({ path: `${bucket}/i-` }).then(failOver);
  const syncs = victim.counters.sync;
  const item = await queue.put('once');
  await lost;

  assert.equal(viaSecond.connections, 1, 'reconnected to the second member');
  await fx.observer.sync(bucket);
  assert.deepEqual((await fx.observer.getChildren(bucket)).children, [item.slice(bucket.length + 1)], 'exactly one item');
  assert.ok(victim.counters.sync > syncs, 'the lookup synced before listing');

  await queue.close();
  assert.equal(victim.activeWatchCount, 0);
  await fx.observer.deleteRecursive(path);
});
