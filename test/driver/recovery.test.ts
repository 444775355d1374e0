// Protected-name recovery after a lost create reply, against a real standalone ZooKeeper: the
// lookup decides by owner (ephemeralOwner = our session), never from the first node carrying our
// prefix, so a node of ours from an earlier session cannot make us create a second one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ZkSession } from '../../src/client/index.js';
import { Mutex } from '../../src/mutex/index.js';
import { Semaphore } from '../../src/semaphore/index.js';
import { NoNodeError } from '../../src/errors.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** Children of `dir` with their owners, sorted by name; [] when it does not exist. */
async function owned(dir: string): Promise<{ name: string; owner: bigint }[]> {
  let children: string[];
  try {
    children = (await fx.observer.getChildren(dir)).children.sort();
  } catch (err) {
    if (err instanceof NoNodeError) return [];
    throw err;
  }
  const stats = await Promise.all(children.map((c) => fx.observer.exists(`${dir}/${c}`)));
  return children.flatMap((name, i) => {
    const st = stats[i];
    return st ? [{ name, owner: st.ephemeralOwner }] : [];
  });
}

describe('a lost create reply while a node of ours from an earlier session is still listed', () => {
  test('adopts the node of the current session: one node, no orphan, nothing left', async () => {
    const dir = uniquePath('older-session');
    await fx.observer.mkdirp(dir);
    const proxy = await fx.proxy();
    const victim = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 1500 });
    const first = victim.credentials();
    const firstId = victim.sessionId;
    const mutex = new Mutex(victim, dir, { reapParentAfterMs: Infinity });

    // Session 1: the create is applied, its reply lost, and the victim stays cut off (refused
    // at once, before its client can reconnect) until it declares the session LOST.
    const lost1 = proxy.loseReply({ op: 'create', path: dir }).then(() => proxy.reject(true));
    const lostState = nextState(victim, 'LOST', 15_000);
    const acquired = mutex.acquire({ timeoutMs: 15_000 });
    await lost1;
    // The server still has session 1 (and its node) after our LOST: it expires a session a
    // timeout after it last heard from it, which can be later than our clock says (a ping it got
    // whose answer we did not). A second client keeps it alive, so that happens every time.
    const keeper = await ZkSession.connect(fx.server.connectString, { join: first, sessionTimeoutMs: victim.timeoutMs, renewOnLoss: false });
    await lostState;

    // Session 2: the retried create is applied and its reply lost too.
    const lost2 = proxy.loseReply({ op: 'create', path: dir });
    proxy.reject(false);
    await lost2;
    const handle = await acquired;

    const secondId = victim.sessionId;
    assert.notEqual(secondId, firstId);
    assert.equal(handle.sessionId, secondId);
    const name = handle.path.slice(dir.length + 1);
    // Exactly one node: the adopted one. The node of session 1 (still alive) was deleted by the
    // lookup rather than left to hold a place in the queue until that session expires.
    assert.deepEqual(await owned(dir), [{ name, owner: secondId }]);

    await handle.release();
    await keeper.close();
    assert.deepEqual(await owned(dir), [], 'nothing left');
    assert.equal(victim.activeWatchCount, 0);
    await fx.waitNoWatches(victim, dir);
    await mutex.close();
    await fx.observer.deleteRecursive(dir);
  });
});

describe('a lost reply to a multi-lease create (one transaction)', () => {
  test('adopts all its nodes, in queue order: no second set, nothing left', async () => {
    const dir = uniquePath('multi-lease');
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString);
    const sem = new Semaphore(session, dir, { maxLeases: 3, reapParentAfterMs: Infinity });
    await sem.tryAcquire().then((h) => h?.release()); // creates the directory
    const lost = proxy.loseReply({ op: 'multi', path: dir });
    const handle = await sem.acquire(2, { timeoutMs: 10_000 });
    await lost;
    const nodes = await owned(dir);
    assert.deepEqual(nodes.map((n) => `${dir}/${n.name}`), [...handle.paths]);
    assert.ok(nodes.every((n) => n.owner === session.sessionId));
    await handle.release();
    assert.deepEqual(await owned(dir), [], 'nothing left');
    await sem.close();
    await fx.waitNoWatches(session, dir);
  });
});
