// Nodes are not ours alone: a waiter whose node someone else deletes (an operator, a tool,
// Curator's Revoker) is never granted on it, whichever shortcut would grant it (the
// predecessor was the head, a node of its own session followed in memory, a semaphore's window),
// and its successor is not stalled. Against a real standalone ZooKeeper.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Mutex, Semaphore, type LockHandle, type ZkSession } from '../../src/index.js';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

async function children(path: string): Promise<string[]> {
  const stat = await fx.observer.exists(path);
  return stat ? (await fx.observer.getChildren(path)).children.filter((c) => c.includes('lock-')).sort((a, b) => a.slice(-10).localeCompare(b.slice(-10))) : [];
}

const queued = (path: string, count: number): Promise<boolean> =>
  waitFor(async () => (await children(path)).length === count, { timeoutMs: 5000, message: `${count} nodes queued on ${path}` });

/** Records grants, and the holders at each grant (never two for a mutex). */
class Holders {
  readonly order: string[] = [];
  private readonly now = new Set<string>();
  max = 0;
  track(name: string, p: Promise<LockHandle>): Promise<LockHandle> {
    return p.then(async (h) => {
      // Its node exists on the server when it is told it holds.
      assert.ok(await fx.observer.exists(h.path), `${name} holds ${h.path}, which exists`);
      this.now.add(name);
      this.max = Math.max(this.max, this.now.size);
      this.order.push(name);
      return h;
    });
  }
  released(name: string): void {
    this.now.delete(name);
  }
}

async function deletedWaiter(sessions: { a: ZkSession; b: ZkSession; c: ZkSession }): Promise<void> {
  const path = uniquePath('deleted-waiter');
  const holders = new Holders();
  const a = await holders.track('A', new Mutex(sessions.a, path).acquire());
  const b = holders.track('B', new Mutex(sessions.b, path).acquire({ timeoutMs: 20_000 }));
  await queued(path, 2);
  const c = holders.track('C', new Mutex(sessions.c, path).acquire({ timeoutMs: 20_000 }));
  await queued(path, 3);
  // Both waiters have set their watches (the predecessor's, and their own node's).
  await Promise.all([sessions.b.sync(path), sessions.c.sync(path)]);
  const bNode = (await children(path))[1] as string;
  await fx.observer.delete(`${path}/${bNode}`);
  holders.released('A');
  await a.release();
  // C, behind B, is told of B's deletion and holds once A is gone; B starts over behind C.
  const hc = await withTimeout(c, 10_000, 'C granted');
  assert.deepEqual(holders.order, ['A', 'C'], 'B was not granted on its deleted node');
  await waitFor(async () => (await children(path)).length === 2, { timeoutMs: 5000, message: 'B queued again behind C' });
  holders.released('C');
  await hc.release();
  const hb = await withTimeout(b, 10_000, 'B granted after C');
  assert.notEqual(hb.path, `${path}/${bNode}`);
  holders.released('B');
  await hb.release();
  assert.equal(holders.max, 1, 'never two holders');
  assert.deepEqual(await children(path), []);
}

test('mutex, three processes: a waiter whose node was deleted is not granted when its predecessor (the head) goes', async () => {
  const [a, b, c] = await fx.sessionsApart(3);
  await deletedWaiter({ a: a!, b: b!, c: c! });
});

test('mutex, holder and waiter in one session (followed in memory): the deleted waiter is not granted', async () => {
  const [ab, c] = await fx.sessionsApart(2);
  await deletedWaiter({ a: ab!, b: ab!, c: c! });
});

test('mutex, with watchOwnNode: the deleted waiter starts over, as without', async () => {
  const path = uniquePath('deleted-waiter-own');
  const [a, b] = await fx.sessionsApart(2);
  const ha = await new Mutex(a!, path).acquire();
  const pb = new Mutex(b!, path, { watchOwnNode: true }).acquire({ timeoutMs: 20_000 });
  await queued(path, 2);
  await b!.sync(path);
  await fx.observer.delete(`${path}/${(await children(path))[1]}`);
  await queued(path, 2); // it entered again
  await ha.release();
  const hb = await withTimeout(pb, 10_000, 'B granted on its new node');
  assert.ok(await fx.observer.exists(hb.path));
  await hb.release();
  assert.deepEqual(await children(path), []);
});

test('semaphore (2 leases): a waiter whose node was deleted is not granted when a lease ahead goes', async () => {
  const path = uniquePath('deleted-waiter-sem');
  const [s1, s2, s3, s4] = await fx.sessionsApart(4);
  const sem = (s: ZkSession): Semaphore => new Semaphore(s, path, { maxLeases: 2 });
  const l1 = await sem(s1!).acquire();
  const l2 = await sem(s2!).acquire();
  let grantedOnDeleted = false;
  const p3 = sem(s3!)
    .acquire({ timeoutMs: 20_000 })
    .then(async (h) => {
      if (!(await fx.observer.exists(h.path))) grantedOnDeleted = true;
      return h;
    });
  await waitFor(async () => (await children(path)).length === 3, { timeoutMs: 5000, message: 'waiter queued' });
  const p4 = sem(s4!).acquire({ timeoutMs: 20_000 });
  await waitFor(async () => (await children(path)).length === 4, { timeoutMs: 5000, message: 'second waiter queued' });
  await Promise.all([s3!.sync(path), s4!.sync(path)]);
  const third = (await children(path))[2] as string;
  await fx.observer.delete(`${path}/${third}`);
  await l1.release();
  // The fourth takes the free lease; the third entered again behind it.
  const h4 = await withTimeout(p4, 10_000, 'the fourth granted');
  await l2.release();
  const h3 = await withTimeout(p3, 10_000, 'the third granted on its new node');
  assert.equal(grantedOnDeleted, false);
  assert.notEqual(h3.path, `${path}/${third}`);
  await Promise.all([h3.release(), h4.release()]);
  assert.deepEqual(await children(path), []);
});

test('semaphore, a waiter for 2 leases: one of its nodes deleted, it is not granted (its successor is)', async () => {
  const path = uniquePath('deleted-waiter-sem2');
  const [s1, s2, s3] = await fx.sessionsApart(3);
  const sem = (s: ZkSession): Semaphore => new Semaphore(s, path, { maxLeases: 2 });
  const l1 = await sem(s1!).acquire();
  let grantedOnDeleted = false;
  let wHolds = false;
  const pw = sem(s2!)
    .acquire(2, { timeoutMs: 20_000 })
    .then(async (h) => {
      wHolds = true;
      if ((await children(path)).length !== 2) grantedOnDeleted = true;
      return h;
    });
  await queued(path, 3);
  const px = sem(s3!).acquire({ timeoutMs: 20_000 });
  await queued(path, 4);
  await Promise.all([s2!.sync(path), s3!.sync(path)]);
  const [, , second] = await children(path);
  await fx.observer.delete(`${path}/${second}`);
  await l1.release();
  // X moves up beside the waiter's remaining node, which holds no lease: the waiter starts over.
  const hx = await withTimeout(px, 10_000, 'X granted');
  assert.equal(wHolds, false, 'the waiter holds no lease beside X');
  await queued(path, 3); // X, and the waiter's two new nodes
  await hx.release();
  const hw = await withTimeout(pw, 10_000, 'the waiter granted its two leases');
  assert.equal(grantedOnDeleted, false);
  assert.equal((await children(path)).length, 2);
  await hw.release();
  assert.deepEqual(await children(path), []);
});
