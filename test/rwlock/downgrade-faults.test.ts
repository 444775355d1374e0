// ReadWriteLock downgrade under real faults (issue 9, item 1): a downgrade is valid only while
// its write node exists in the same session. Holder A (behind a ChaosProxy) holds the write lock
// and writer B waits behind it; A's session expires around A's downgrade, or A's write node is
// deleted under it. A's read lock must then never be granted (LockLostError), B holds alone, and
// nothing of A is left. A downgrade whose reply alone is lost is adopted in the same session.
// Lost handles not yet released count as held by neither side (upgrade refusal, downgrade).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LockLostError } from '../../src/errors.js';
import { ReadWriteLock, type LockHandle, type ZkSession } from '../../src/index.js';
import { expireSession, waitFor, withTimeout, type ChaosProxy } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** Read and write lock nodes under `path`, sorted; [] when the directory does not exist. */
async function lockNodes(path: string): Promise<string[]> {
  const stat = await fx.observer.exists(path);
  return stat ? (await fx.observer.getChildren(path)).children.filter((c) => c.includes('__READ__') || c.includes('__WRIT__')).sort() : [];
}

interface Scene {
  path: string;
  proxy: ChaosProxy;
  sA: ZkSession;
  sB: ZkSession;
  a: ReadWriteLock;
  b: ReadWriteLock;
  wa: LockHandle;
  bDone: Promise<LockHandle>;
  /** Grants that broke exclusion: a reader of one instance beside a writer of another. */
  overlaps: string[];
  /** Read grants A received. */
  readGrants: LockHandle[];
}

/** A holds the write lock through a proxy; B's write acquisition is queued behind it. */
async function scene(name: string): Promise<Scene> {
  const path = uniquePath(name);
  const proxy = await fx.proxy();
  const sA = await fx.pool.connect(proxy.connectString);
  const [sB] = await fx.sessionsN(1);
  const a = new ReadWriteLock(sA, path, { participantId: 'A' });
  const b = new ReadWriteLock(sB!, path, { participantId: 'B' });
  const overlaps: string[] = [];
  const readGrants: LockHandle[] = [];
  const held = (hs: readonly LockHandle[]): boolean => hs.some((h) => h.isHeld);
  a.readLock().on('acquired', (h) => {
    readGrants.push(h);
    if (held(b.writeLock().heldHandles)) overlaps.push(`A's read lock ${h.path} was granted while B holds the write lock`);
  });
  b.writeLock().on('acquired', (h) => {
    if (held(a.readLock().heldHandles)) overlaps.push(`B's write lock ${h.path} was granted while A holds the read lock`);
  });
  const wa = await a.writeLock().acquire({ timeoutMs: 5000 });
  const bDone = b.writeLock().acquire({ timeoutMs: 30000 });
  bDone.catch(() => undefined);
  await waitFor(async () => (await lockNodes(path)).length === 2, { timeoutMs: 5000, message: 'B queued behind A' });
  return { path, proxy, sA, sB: sB!, a, b, wa, bDone, overlaps, readGrants };
}

/** Settles to the handle or the error. */
const outcome = (p: Promise<LockHandle>): Promise<LockHandle | unknown> => p.then((h) => h, (e: unknown) => e);

/**
 * B holds alone: its handle is held, participants() shows only B's node, as holder, and A's
 * downgrade failed with LockLostError without ever being granted. Then cleans up and checks
 * that nothing (nodes, watches) is left.
 */
async function assertBAloneThenClean(s: Scene, result: unknown): Promise<void> {
  const bh = await withTimeout(s.bDone, 10000, 'B granted');
  const aRead = result instanceof Error ? undefined : (result as LockHandle);
  assert.ok(!(aRead?.isHeld && bh.isHeld), `a reader (A) and a writer (B) hold at once: A's read ${aRead?.path}, B's write ${bh.path}`);
  assert.deepEqual(s.overlaps, []);
  assert.ok(result instanceof LockLostError, `the downgrade rejects with LockLostError, got ${String(result)}`);
  assert.equal(result.code, 'LOCK_LOST');
  assert.equal(s.readGrants.length, 0, "A's read lock was never granted");
  assert.equal(s.wa.isHeld, false, "A's write handle knows it is lost");
  assert.ok(bh.isHeld);
  const parts = await s.b.readLock().participants();
  assert.deepEqual(parts.map((p) => [p.id, p.path, p.isHolder]), [['B', bh.path, true]], 'only B, holding; nothing of A');
  await bh.release();
  await Promise.all([s.a.close(), s.b.close()]);
  assert.deepEqual(await lockNodes(s.path), []);
  await fx.waitNoWatches(s.sA, s.path);
  await fx.waitNoWatches(s.sB, s.path);
}

describe('a downgrade whose write lock is lost meanwhile is never granted', () => {
  test("A's session expires before its downgrade create reaches the server: LockLostError, B holds alone", async () => {
    const s = await scene('expired-before-create');
    s.proxy.blackhole(); // the downgrade's create waits in the partition and dies with it
    const downgrade = outcome(s.a.readLock().acquire({ timeoutMs: 30000 }));
    await expireSession(s.sA, s.proxy);
    await assertBAloneThenClean(s, await withTimeout(downgrade, 20000, 'downgrade settled'));
  });

  test("A's session expires after the server applied its downgrade create (reply lost): LockLostError, B holds alone", async () => {
    const s = await scene('expired-after-create');
    s.proxy.latency(500); // the reply is held long enough to cut it off
    const downgrade = outcome(s.a.readLock().acquire({ timeoutMs: 30000 }));
    await waitFor(async () => (await lockNodes(s.path)).some((n) => n.includes('__READ__')), { timeoutMs: 5000, message: 'downgrade applied' });
    await expireSession(s.sA, s.proxy);
    await assertBAloneThenClean(s, await withTimeout(downgrade, 20000, 'downgrade settled'));
  });

  test("A's write node is deleted by someone else, B is granted, then A downgrades: LockLostError, B holds alone", async () => {
    const s = await scene('write-node-deleted');
    await fx.observer.delete(s.wa.path);
    await withTimeout(s.bDone, 10000, 'B granted after the deletion');
    assert.ok(s.wa.isHeld, "A has not noticed (it does not watch its own node)");
    const result = await withTimeout(outcome(s.a.readLock().acquire({ timeoutMs: 30000 })), 20000, 'downgrade settled');
    await assertBAloneThenClean(s, result);
  });
});

describe('a downgrade whose reply alone is lost', () => {
  test('same session: the applied read node is adopted (one node), granted in place, B still waits', async () => {
    const s = await scene('reply-lost');
    s.proxy.latency(500);
    const downgrade = s.a.readLock().acquire({ timeoutMs: 30000 });
    await waitFor(async () => (await lockNodes(s.path)).some((n) => n.includes('__READ__')), { timeoutMs: 5000, message: 'downgrade applied' });
    const back = nextState(s.sA, 'RECONNECTED', 10000);
    s.proxy.dropAll(); // the reply is lost with the connection
    s.proxy.pass();
    await back;
    const ra = await withTimeout(downgrade, 10000, 'downgrade adopted');
    assert.ok(ra.isHeld && s.wa.isHeld);
    assert.equal(ra.sessionId, s.wa.sessionId);
    assert.equal(ra.fencingToken, s.wa.fencingToken, "the read handle carries the write node's token");
    const nodes = await lockNodes(s.path);
    assert.equal(nodes.filter((n) => n.includes('__READ__')).length, 1, 'exactly one read node for the attempt');
    assert.ok(nodes.includes(ra.path.slice(s.path.length + 1)));
    await s.wa.release();
    const parts = await s.a.readLock().participants();
    assert.deepEqual(parts.map((p) => [p.id, p.isHolder]), [['A', true], ['B', false]], 'B waits behind the read node');
    await ra.release();
    const bh = await withTimeout(s.bDone, 10000, 'B granted after A released');
    assert.deepEqual(s.overlaps, []);
    await bh.release();
    await Promise.all([s.a.close(), s.b.close()]);
    assert.deepEqual(await lockNodes(s.path), []);
    await fx.waitNoWatches(s.sA, s.path);
    await fx.waitNoWatches(s.sB, s.path);
  });
});

describe('lost handles that were not released yet', () => {
  test('count as neither held reads (no upgrade refusal) nor a held write (no downgrade in their place)', async () => {
    const path = uniquePath('lost-unreleased');
    const proxy = await fx.proxy();
    const sA = await fx.pool.connect(proxy.connectString);
    const a = new ReadWriteLock(sA, path, { participantId: 'A' });
    const ra = await a.readLock().acquire({ timeoutMs: 5000 });
    await expireSession(sA, proxy);
    assert.equal(ra.isHeld, false, 'the read lock is lost');
    // Not an upgrade: the lost read lock holds nothing.
    const wa = await withTimeout(a.writeLock().acquire({ timeoutMs: 10000 }), 10000, 'write lock in the new session');
    await expireSession(sA, proxy);
    assert.equal(wa.isHeld, false, 'the write lock is lost');
    const wa2 = await withTimeout(a.writeLock().acquire({ timeoutMs: 10000 }), 10000, 'write lock in the third session');
    // The downgrade goes in the place of the write lock held now, not of the lost one.
    const ra2 = await withTimeout(a.readLock().acquire({ timeoutMs: 5000 }), 5000, 'downgrade');
    assert.equal(ra2.fencingToken, wa2.fencingToken);
    assert.equal(ra2.path.slice(-10), wa2.path.slice(-10));
    await Promise.all([wa2.release(), ra2.release()]);
    await assert.rejects(ra.release(), /lost/);
    await assert.rejects(wa.release(), /lost/);
    await a.close();
    assert.deepEqual(await lockNodes(path), []);
    await fx.waitNoWatches(sA, path);
  });
});
