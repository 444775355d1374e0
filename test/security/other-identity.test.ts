// A second digest identity against the first one's CREATOR_ALL recipes: it can neither delete
// the holder's lock node nor read or take its queue items (NoAuthError), and its own recipes on
// those paths fail typed at once, without retrying: locks, leases, leadership, queue take and
// consume, barriers, PersistentNode, group, shared count, atomic number, discovery. "Without
// retrying" is measured, not slept on: each background loop runs with a 1 ms backoff, so a loop
// that retried would send dozens of requests while we make 30 round trips; the request counters
// of the refused session must not move.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AtomicNumber,
  Barrier,
  ChildrenCache,
  CREATOR_ALL_ACL,
  DistributedQueue,
  DoubleBarrier,
  GroupMember,
  LeaderLatch,
  LeaderSelector,
  Mutex,
  PersistentNode,
  ReadWriteLock,
  Semaphore,
  SharedCount,
  type ZkSession,
} from '../../src/index.js';
import { ServiceDiscovery } from '../../src/discovery/index.js';
import { NoAuthError } from '../../src/errors.js';
import { connectAs, createSecuredPath, superDigestConfig, testIdentity } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const admin = testIdentity('super');
const fx = new ServerFixture({ extraConfig: [superDigestConfig(admin)] });
const alice = testIdentity('alice');
const bob = testIdentity('bob');
const quick = { baseDelayMs: 1, maxDelayMs: 1 };

/** Alice's and Bob's sessions, and a CREATOR_ALL base path of Alice's. */
async function setup(name: string): Promise<{ a: ZkSession; b: ZkSession; base: string }> {
  const a = await connectAs(fx.server.connectString, alice, { sessionTimeoutMs: 4000 });
  const b = await connectAs(fx.server.connectString, bob, { sessionTimeoutMs: 4000 });
  fx.pool.track(a);
  fx.pool.track(b);
  const base = await createSecuredPath(a, uniquePath(name));
  return { a, b, base };
}

/**
 * Requests `s` sent so far, of the kinds a retry would send (watch removals, which a closed
 * recipe's cleanup may send late, heartbeats and watch events aside).
 */
function sent(s: ZkSession): number {
  const c = s.counters;
  return c.create + c.delete + c.exists + c.getData + c.setData + c.getChildren + c.multi + c.sync + c.addWatch + c.getAcl + c.setAcl;
}

/** Makes 30 round trips on `probe` (a different session), then asserts that `s` sent nothing meanwhile. */
async function sendsNothingMore(s: ZkSession, probe: ZkSession, what: string): Promise<void> {
  const before = sent(s);
  for (let i = 0; i < 30; i++) await probe.exists('/');
  assert.equal(sent(s), before, `${what}: no request after the refusal`);
}

/** Rejects with NoAuthError well within the wait's own 10 s bound. */
async function refusedQuickly(p: Promise<unknown>, what: string): Promise<void> {
  const started = performance.now();
  await assert.rejects(p, NoAuthError, what);
  assert.ok(performance.now() - started < 3000, `${what}: refused at once, not after retries`);
}

test("another identity can neither delete the holder's lock node nor queue for the lock; its acquire fails typed at once", async () => {
  const { a, b, base } = await setup('other-lock');
  const mutex = new Mutex(a, `${base}/lock`, { acl: CREATOR_ALL_ACL });
  const held = await mutex.acquire({ timeoutMs: 5000 });
  await assert.rejects(b.delete(held.path), NoAuthError);
  await assert.rejects(b.getChildren(`${base}/lock`), NoAuthError);
  const theirs = new Mutex(b, `${base}/lock`);
  await refusedQuickly(theirs.acquire({ timeoutMs: 10_000 }), 'mutex acquire');
  await refusedQuickly(new Semaphore(b, `${base}/lock`, { maxLeases: 2 }).acquire(1, { timeoutMs: 10_000 }), 'semaphore acquire');
  await refusedQuickly(new ReadWriteLock(b, `${base}/rw`).writeLock().acquire({ timeoutMs: 10_000 }), 'write lock on a path it may not create under');
  await sendsNothingMore(b, a, 'locks');
  // The holder still holds, alone.
  assert.ok(held.isHeld);
  assert.equal((await a.getChildren(`${base}/lock`)).children.length, 1);
  await held.release();
  await mutex.close();
  await a.deleteRecursive(base);
});

test("another identity can neither read, take, delete nor forge the queue's items; its take, put and consume fail typed, once", async () => {
  const { a, b, base } = await setup('other-queue');
  const ours = new DistributedQueue(a, `${base}/q`, { acl: CREATOR_ALL_ACL });
  const [item] = await ours.putAll(['secret', 'two']);
  assert.ok(item);
  await assert.rejects(b.getData(item), NoAuthError);
  await assert.rejects(b.delete(item), NoAuthError);
  const theirs = new DistributedQueue(b, `${base}/q`);
  await refusedQuickly(theirs.take({ timeoutMs: 10_000 }), 'take');
  await refusedQuickly(theirs.poll({ timeoutMs: 10_000 }), 'poll');
  await refusedQuickly(theirs.put('forged', { timeoutMs: 10_000 }), 'put');
  const errors: unknown[] = [];
  await refusedQuickly(theirs.consume(() => assert.fail('no item may reach another identity'), { errorBackoff: quick, onError: (e) => errors.push(e) }), 'consume');
  assert.ok(errors.length >= 1 && errors.every((e) => e instanceof NoAuthError), `onError heard the refusal: ${errors.map(String).join('; ')}`);
  await sendsNothingMore(b, a, 'queue');
  await theirs.close();
  // Nothing was taken: the owner gets both items, in order.
  assert.equal((await ours.take({ timeoutMs: 5000 })).toString(), 'secret');
  assert.equal((await ours.take({ timeoutMs: 5000 })).toString(), 'two');
  await ours.close();
  await a.deleteRecursive(base);
});

test('a queue consumer whose permission is taken away stops with NoAuthError instead of retrying', async () => {
  const { a, base } = await setup('other-consumer');
  const q = new DistributedQueue(a, `${base}/q`, { acl: CREATOR_ALL_ACL });
  await q.put('one');
  const got: string[] = [];
  const errors: unknown[] = [];
  let revoke!: () => void;
  const revoked = new Promise<void>((resolve) => (revoke = resolve));
  const consuming = q.consume(
    async (data) => {
      got.push(data.toString());
      revoke();
    },
    { errorBackoff: quick, onError: (e) => errors.push(e) },
  );
  // It may end before we look: its outcome is held from now on.
  const ended = consuming.then(
    () => undefined,
    (e: unknown) => e,
  );
  await revoked;
  // The claims' directory becomes someone else's: alice can no longer claim (nor list claims).
  const su = await connectAs(fx.server.connectString, admin, { sessionTimeoutMs: 4000 });
  fx.pool.track(su);
  await su.setAcl(`${base}/q/claims`, [bob.acl()]);
  await q.put('two');
  const outcome = await ended;
  assert.ok(outcome instanceof NoAuthError, String(outcome));
  assert.deepEqual(got, ['one']);
  assert.ok(errors.some((e) => e instanceof NoAuthError));
  const other = await fx.pool.connect(fx.server.connectString);
  await sendsNothingMore(a, other, 'consumer');
  await q.close();
  // 'two' is still there, unclaimed.
  assert.equal((await new DistributedQueue(su, `${base}/q`).size()), 1);
  await su.deleteRecursive(base);
});

test("PersistentNode under another identity's path: one error event, waitForInitialCreate rejects NoAuthError, the loop stops", async () => {
  const { a, b, base } = await setup('other-pn');
  await a.create(`${base}/dir`, { acl: CREATOR_ALL_ACL });
  const node = new PersistentNode(b, `${base}/dir/intruder`, { errorBackoff: quick });
  const errors: Error[] = [];
  node.on('error', (e) => errors.push(e));
  node.start();
  await refusedQuickly(node.waitForInitialCreate({ timeoutMs: 10_000 }), 'waitForInitialCreate');
  // Asked again: a fresh error each time (never a shared instance).
  const again = await node.waitForInitialCreate().catch((e: unknown) => e);
  assert.ok(again instanceof NoAuthError);
  await sendsNothingMore(b, a, 'PersistentNode');
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof NoAuthError);
  await node.close();
  assert.deepEqual((await a.getChildren(`${base}/dir`)).children, []);
  await a.deleteRecursive(base);
});

test("another identity's leader latch, barriers, group, shared count, atomic number and discovery on our paths fail typed at once", async () => {
  const { a, b, base } = await setup('other-recipes');
  // Alice's recipes in place first (their directories exist, CREATOR_ALL).
  const latch = new LeaderLatch(a, `${base}/latch`, { acl: CREATOR_ALL_ACL });
  await latch.start({ timeoutMs: 5000 });
  await new Barrier(a, `${base}/barrier`, { acl: CREATOR_ALL_ACL }).set();
  const count = new SharedCount(a, `${base}/count`, 1, { acl: CREATOR_ALL_ACL });
  await count.start({ timeoutMs: 5000 });
  await new AtomicNumber(a, `${base}/n`, { acl: CREATOR_ALL_ACL }).increment();
  const discovery = new ServiceDiscovery(a, { basePath: `${base}/services`, acl: CREATOR_ALL_ACL });
  await discovery.start();
  await discovery.register({ name: 'api', id: 'i1', address: '127.0.0.1', port: 1 });

  const theirLatch = new LeaderLatch(b, `${base}/latch`, { errorBackoff: quick });
  const latchErrors: Error[] = [];
  theirLatch.on('error', (e) => latchErrors.push(e));
  await refusedQuickly(theirLatch.start({ timeoutMs: 10_000 }), 'latch start');
  await assert.rejects(theirLatch.awaitLeadership({ timeoutMs: 1000 }), NoAuthError);
  assert.equal(latchErrors.length, 1);
  const selectorErrors: Error[] = [];
  await refusedQuickly(new LeaderSelector(b, `${base}/latch`, { errorBackoff: quick }).run(() => assert.fail('never leader'), { requeue: true, onError: (e) => selectorErrors.push(e) }), 'selector run (requeue)');
  assert.equal(selectorErrors.length, 1);
  await refusedQuickly(new Barrier(b, `${base}/barrier`).remove(), 'barrier remove');
  await refusedQuickly(new Barrier(b, `${base}/barrier`).wait({ timeoutMs: 10_000 }), 'barrier wait');
  await refusedQuickly(new DoubleBarrier(b, `${base}/latch`, { memberCount: 2 }).enter({ timeoutMs: 10_000 }), 'double barrier enter');
  await refusedQuickly(new GroupMember(b, `${base}/services/api`, 'intruder').start({ timeoutMs: 10_000 }), 'group start');
  const theirCount = new SharedCount(b, `${base}/count`, 0);
  await refusedQuickly(theirCount.start({ timeoutMs: 10_000 }), 'shared count start');
  await refusedQuickly(new AtomicNumber(b, `${base}/n`).increment({ timeoutMs: 10_000 }), 'atomic increment');
  const theirDiscovery = new ServiceDiscovery(b, { basePath: `${base}/services` });
  await theirDiscovery.start();
  await refusedQuickly(theirDiscovery.register({ name: 'api', id: 'fake', address: '127.0.0.1', port: 2 }, { timeoutMs: 10_000 }), 'discovery register');
  await refusedQuickly(theirDiscovery.queryForInstances('api', { timeoutMs: 10_000 }), 'discovery query');
  await sendsNothingMore(b, a, 'other recipes');
  await Promise.all([theirLatch.close(), theirCount.close(), theirDiscovery.close()]);

  // Alice's are untouched.
  assert.ok(latch.hasLeadership);
  assert.deepEqual((await discovery.queryForInstances('api')).map((i) => i.id), ['i1']);
  await Promise.all([latch.close(), count.close(), discovery.close()]);
  await a.deleteRecursive(base);
});

test("a cache on another identity's path fails its start with NoAuthError, and stops", async () => {
  const { a, b, base } = await setup('other-cache');
  await a.create(`${base}/dir`, { acl: CREATOR_ALL_ACL });
  const cache = new ChildrenCache(b, `${base}/dir`, { errorBackoff: quick });
  const cacheErrors: Error[] = [];
  cache.on('error', (e) => cacheErrors.push(e));
  await refusedQuickly(cache.start({ timeoutMs: 10_000 }), 'cache start');
  assert.ok(cacheErrors.some((e) => e instanceof NoAuthError));
  await sendsNothingMore(b, a, 'cache');
  await cache.close();

  await a.deleteRecursive(base);
});
