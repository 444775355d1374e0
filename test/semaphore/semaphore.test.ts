// The counting semaphore against a real standalone ZooKeeper: the lease limit under contention,
// the waiting window (a release anywhere in it promotes the waiter), multi-lease grants, the
// recorded maxLeases, bad input, timeout and abort (no node and no watch left behind), fencing
// tokens in grant order, and close().
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import type { LockHandle } from '../../src/driver/handle.js';
import { ClosedError, InvalidArgumentError, LeaseMismatchError, LockTimeoutError } from '../../src/errors.js';
import { Semaphore, type SemaphoreOptions } from '../../src/semaphore/index.js';
import { TestingServer, waitFor, withTimeout } from '../../src/testing/index.js';
import { apartConnectString, childrenOf as listChildren, SessionPool, uniquePath } from '../helpers.js';

let server: TestingServer;
const pool = new SessionPool();
let s: ZkSession; // observes and checks; holds no leases

before(async () => {
  server = await TestingServer.start();
  s = await pool.connect(server.connectString);
});
after(async () => {
  await pool.closeAll();
  await server?.close();
});

/** `n` fresh sessions. */
function connectMany(n: number): Promise<ZkSession[]> {
  return Promise.all(Array.from({ length: n }, () => pool.connect(server.connectString)));
}

/** `n` fresh sessions, each as if in a process of its own: they watch each other on the server. */
function connectApart(n: number): Promise<ZkSession[]> {
  return Promise.all(Array.from({ length: n }, () => pool.connect(apartConnectString(server.connectString))));
}

/** The session id as `wchc` / `wchp` print it. */
function hexId(session: ZkSession): string {
  return `0x${session.sessionId.toString(16)}`;
}

const childrenOf = (path: string): Promise<string[]> => listChildren(s, path);

const nameOf = (h: LockHandle): string => h.path.slice(h.path.lastIndexOf('/') + 1);
const namesOf = (...hs: LockHandle[]): string[] => hs.flatMap((h) => h.paths.map((p) => p.slice(p.lastIndexOf('/') + 1))).sort();

/**
 * Paths watched by `session` on the server, sorted (removal there is asynchronous: poll). A
 * session whose watches were all removed may still be listed by `wchc`, with no paths.
 */
async function watchedBy(session: ZkSession): Promise<string[]> {
  return [...((await server.watchesBySession()).get(hexId(session)) ?? [])].sort();
}

/** Closes the semaphores and sessions of a test, then checks nothing is left under `path`. */
async function cleanUp(path: string, sems: readonly Semaphore[], sessions: readonly ZkSession[]): Promise<void> {
  await Promise.all(sems.map((x) => x.close()));
  assert.deepEqual(await childrenOf(path), [], `no lock node left under ${path}`);
  await Promise.all(sessions.map((x) => x.close()));
  await waitFor(async () => ![...(await server.watchesByPath()).keys()].some((p) => p === path || p.startsWith(`${path}/`)), {
    timeoutMs: 5000,
    message: `no watch left under ${path}`,
  });
}

describe('lease limit', () => {
  test('8 sessions, 200 leases: never more than maxLeases (3) holders at once, and 3 are reached', async () => {
    const path = uniquePath('stress');
    const sessions = await connectMany(8);
    const sems = sessions.map((x) => new Semaphore(x, path, { maxLeases: 3 }));
    let holders = 0;
    let max = 0;
    let granted = 0;
    const tokens = new Set<bigint>();
    await withTimeout(
      Promise.all(
        sems.map(async (sem) => {
          for (let i = 0; i < 25; i++) {
            const h = await sem.acquire({ timeoutMs: 60_000 });
            holders++;
            granted++;
            max = Math.max(max, holders);
            tokens.add(h.fencingToken);
            // Short critical section: a turn of the event loop (other grants land meanwhile).
            await nextTurn();
            await nextTurn();
            assert.ok(h.isHeld);
            // The resource is given back before the node is deleted, as a real holder does.
            holders--;
            await h.release();
          }
        }),
      ),
      120_000,
      '200 leases',
    );
    assert.equal(granted, 200);
    assert.equal(tokens.size, 200, 'every grant has its own fencing token');
    assert.ok(max <= 3, `at most 3 holders at once, saw ${max}`);
    assert.equal(max, 3, 'the limit is reached under contention');
    await cleanUp(path, sems, sessions);
  });

  test('three sessions hold three leases at once; participants() shows 3 holders and then a waiter', async () => {
    const path = uniquePath('three');
    const sessions = await connectMany(4);
    const sems = sessions.map((x, i) => new Semaphore(x, path, { maxLeases: 3, participantId: `p${i}` }));
    const [a, b, c] = await Promise.all(sems.slice(0, 3).map((x) => x.acquire({ timeoutMs: 10_000 })));
    assert.ok(a && b && c);
    assert.ok(a.isHeld && b.isHeld && c.isHeld);
    const parts = await (sems[0] as Semaphore).participants();
    assert.equal(parts.length, 3);
    assert.deepEqual(parts.map((p) => p.isHolder), [true, true, true]);
    assert.deepEqual(parts.map((p) => p.id).sort(), ['p0', 'p1', 'p2']);
    assert.deepEqual(parts.map((p) => p.czxid).sort(), [a.fencingToken, b.fencingToken, c.fencingToken].sort());
    assert.equal(await (sems[3] as Semaphore).tryAcquire(), null, 'full: tryAcquire returns null');
    assert.deepEqual(await childrenOf(path), namesOf(a, b, c), 'tryAcquire left no node');
    const d = (sems[3] as Semaphore).acquire({ timeoutMs: 20_000 });
    await waitFor(async () => (await s.getChildren(path)).children.length === 4, { timeoutMs: 5000, message: 'the fourth node' });
    const withWaiter = await (sems[3] as Semaphore).participants();
    assert.deepEqual(withWaiter.map((p) => [p.id, p.isHolder]).slice(3), [['p3', false]]);
    await a.release();
    const dh = await withTimeout(d, 5000, 'the waiter after a release');
    assert.ok(dh.isHeld);
    await cleanUp(path, sems, sessions);
  });
});

describe('waiting window', () => {
  test('holders A, B, C and waiter D: C releasing first grants D while A and B still hold', async () => {
    const path = uniquePath('window');
    const sessions = await connectApart(4);
    const [sa, sb, sc, sd] = sessions.map((x) => new Semaphore(x, path, { maxLeases: 3 })) as [Semaphore, Semaphore, Semaphore, Semaphore];
    const a = await sa.acquire();
    const b = await sb.acquire();
    const c = await sc.acquire();
    let dGranted = false;
    const d = sd.acquire({ timeoutMs: 30_000 }).then((h) => {
      dGranted = true;
      return h;
    });
    // D is waiting on exactly A, B and C (and watches its own node, what a grant without a
    // listing rests on).
    const dNode = await waitFor(async () => (await childrenOf(path)).find((n) => !namesOf(a, b, c).includes(n)), { timeoutMs: 5000, message: "D's node" });
    await waitFor(async () => (await watchedBy(sessions[3] as ZkSession)).length === 4, { timeoutMs: 5000, message: "D's watches" });
    assert.ok(dNode);
    assert.deepEqual(await watchedBy(sessions[3] as ZkSession), [a.path, b.path, c.path, `${path}/${dNode}`].sort());
    assert.equal(dGranted, false, 'no fourth lease while three are held');
    const removals = sessions[3]!.counters.removeWatches;
    await c.release();
    const dh = await withTimeout(d, 5000, 'D granted after C released');
    assert.ok(dh.isHeld);
    assert.ok(a.isHeld && b.isHeld, 'A and B still hold');
    assert.deepEqual(await childrenOf(path), namesOf(a, b, dh));
    // Its watches on A and B (and its own node) are left to fire (cheaper than removing them),
    // and do on release.
    assert.deepEqual(await watchedBy(sessions[3] as ZkSession), [a.path, b.path, dh.path].sort());
    const events = sessions[3]!.counters.watchEvents;
    await a.release();
    await b.release();
    await waitFor(() => sessions[3]!.counters.watchEvents === events + 2, { timeoutMs: 5000, message: 'both fired' });
    assert.equal(sessions[3]!.counters.removeWatches, removals, 'no removal request');
    assert.equal(sessions[3]!.activeWatchCount, 1, "nothing left in the client but its own node's watch, until its release");
    assert.ok(dh.isHeld, 'the notifications do not touch the grant');
    await cleanUp(path, [sa, sb, sc, sd], sessions);
  });
});

describe('multi-lease acquire', () => {
  test('acquire(2) takes two adjacent nodes of one transaction and leaves room for one more lease', async () => {
    const path = uniquePath('two');
    const [sx, sy] = await connectMany(2);
    const x = new Semaphore(sx as ZkSession, path, { maxLeases: 3 });
    const y = new Semaphore(sy as ZkSession, path, { maxLeases: 3 });
    const two = await x.acquire(2, { timeoutMs: 10_000 });
    assert.equal(two.paths.length, 2);
    assert.equal(two.path, two.paths[0]);
    const queue = await childrenOf(path);
    assert.deepEqual(queue, namesOf(two));
    const seqs = two.paths.map((p) => Number(p.slice(-10)));
    assert.equal(seqs[1], (seqs[0] as number) + 1, 'adjacent sequence numbers');
    // One transaction: both nodes have the same czxid, which is the fencing token.
    for (const p of two.paths) assert.equal((await s.exists(p))?.czxid, two.fencingToken);
    const parts = await y.participants();
    assert.deepEqual(parts.map((p) => p.path), [...two.paths]);
    assert.deepEqual(parts.map((p) => p.isHolder), [true, true]);

    const one = await y.tryAcquire();
    assert.ok(one, 'a third lease fits');
    assert.equal(await y.tryAcquire(), null, 'a fourth does not');
    assert.equal(await y.tryAcquire(2), null);
    assert.deepEqual(await childrenOf(path), namesOf(two, one), 'failed tries left no node');

    await two.release();
    assert.equal(two.isHeld, false);
    assert.deepEqual(await childrenOf(path), namesOf(one), 'both nodes of the pair are gone');
    const more = [await y.tryAcquire(), await y.tryAcquire()];
    assert.ok(more[0] && more[1], 'the two freed leases are available');
    assert.equal(await y.tryAcquire(), null);
    await cleanUp(path, [x, y], [sx as ZkSession, sy as ZkSession]);
  });

  test('a waiting acquire(2) is granted when a slot frees beside one remaining holder; single leases queue behind it', async () => {
    const path = uniquePath('two-wait');
    const sessions = await connectMany(4);
    const [sa, sb, sx, sd] = sessions.map((x) => new Semaphore(x, path, { maxLeases: 3 })) as [Semaphore, Semaphore, Semaphore, Semaphore];
    const a = await sa.acquire();
    const b = await sb.acquire();
    const pair = sx.acquire(2, { timeoutMs: 30_000 });
    await waitFor(async () => (await childrenOf(path)).length === 4, { timeoutMs: 5000, message: 'the pair queued' });
    // D comes after the pair: a free slot now would be the pair's, not D's (fair, no barging).
    const d = sd.acquire({ timeoutMs: 30_000 });
    await waitFor(async () => (await childrenOf(path)).length === 5, { timeoutMs: 5000, message: 'D queued' });
    await a.release();
    const ph = await withTimeout(pair, 5000, 'the pair granted');
    assert.equal(ph.paths.length, 2);
    assert.ok(b.isHeld);
    // 3 leases held (B + the pair): D still waits. Releasing B lets D in.
    assert.equal(await sa.tryAcquire(), null);
    await b.release();
    const dh = await withTimeout(d, 5000, 'D granted');
    assert.deepEqual(await childrenOf(path), namesOf(ph, dh));
    await cleanUp(path, [sa, sb, sx, sd], sessions);
  });
});

describe('maxLeases is recorded on the path', () => {
  test('a participant with another maxLeases gets LeaseMismatchError and leaves no node', async () => {
    const path = uniquePath('mismatch');
    const [s1, s2] = await connectMany(2);
    const three = new Semaphore(s1 as ZkSession, path, { maxLeases: 3 });
    const h = await three.acquire();
    assert.equal((await s.getData(path)).data.toString(), '3');
    const two = new Semaphore(s2 as ZkSession, path, { maxLeases: 2 });
    const isMismatch = (e: unknown): boolean => e instanceof LeaseMismatchError && e.code === 'LEASE_MISMATCH' && e.path === path;
    await assert.rejects(two.acquire({ timeoutMs: 5000 }), isMismatch);
    assert.deepEqual(await childrenOf(path), [nameOf(h)]);
    await assert.rejects(two.tryAcquire(), isMismatch);
    assert.deepEqual(await childrenOf(path), [nameOf(h)]);
    const four = new Semaphore(s2 as ZkSession, path, { maxLeases: 4 });
    await assert.rejects(four.acquire(2, { timeoutMs: 5000 }), isMismatch);
    assert.deepEqual(await childrenOf(path), [nameOf(h)], 'nor does a multi-lease attempt');
    // The agreeing participants are unaffected.
    const agreeing = new Semaphore(s2 as ZkSession, path, { maxLeases: 3 });
    const again = await agreeing.tryAcquire();
    assert.ok(again);
    await again.release();
    await cleanUp(path, [three, two, four, agreeing], [s1 as ZkSession, s2 as ZkSession]);
  });
});

describe('bad input', () => {
  const badMax: unknown[] = [0, -1, 2.5, Number.NaN, '3', undefined, Infinity, null];
  for (const maxLeases of badMax) {
    test(`maxLeases ${String(typeof maxLeases === 'string' ? JSON.stringify(maxLeases) : maxLeases)} is rejected at construction`, () => {
      assert.throws(() => new Semaphore(s, '/sem', { maxLeases } as unknown as SemaphoreOptions), (e: unknown) => e instanceof InvalidArgumentError && e.code === 'INVALID_ARGUMENT');
    });
  }

  test('missing options are rejected at construction', () => {
    assert.throws(() => new Semaphore(s, '/sem', undefined as unknown as SemaphoreOptions), InvalidArgumentError);
  });

  for (const path of ['locks', '/a/', '/', '', '/a//b']) {
    test(`path ${JSON.stringify(path)} is rejected at construction`, () => {
      assert.throws(() => new Semaphore(s, path, { maxLeases: 3 }), InvalidArgumentError);
    });
  }

  test('lease counts outside 1..maxLeases are rejected before anything is sent', async () => {
    const path = uniquePath('bad-leases');
    const sem = new Semaphore(s, path, { maxLeases: 3 });
    const before = s.counters;
    await assert.rejects(sem.acquire(4), InvalidArgumentError);
    await assert.rejects(sem.acquire(0), InvalidArgumentError);
    await assert.rejects(sem.acquire(-1), InvalidArgumentError);
    await assert.rejects(sem.acquire(Number.NaN), InvalidArgumentError);
    // tryAcquire validates synchronously: accept a throw or a rejection.
    await assert.rejects(async () => sem.tryAcquire(1.5), InvalidArgumentError);
    await assert.rejects(async () => sem.tryAcquire(0), InvalidArgumentError);
    await assert.rejects(async () => sem.tryAcquire(4), InvalidArgumentError);
    await assert.rejects(sem.acquire({ timeoutMs: -1 }), InvalidArgumentError);
    await assert.rejects(sem.acquire({ signal: 'nope' as unknown as AbortSignal }), InvalidArgumentError);
    assert.deepEqual(s.counters, before, 'nothing was sent');
    assert.equal(await s.exists(path), null);
    await sem.close();
  });
});

describe('timeout and abort while waiting', () => {
  test('timeout: LockTimeoutError, our node is gone, no watch of the waiter is left, others go on', async () => {
    const path = uniquePath('timeout');
    const sessions = await connectApart(5);
    const [sa, sb, sc, sd, se] = sessions.map((x) => new Semaphore(x, path, { maxLeases: 3 })) as [Semaphore, Semaphore, Semaphore, Semaphore, Semaphore];
    const dSession = sessions[3] as ZkSession;
    const a = await sa.acquire();
    const b = await sb.acquire();
    const c = await sc.acquire();
    const reads = dSession.counters.getData;
    const err = await sd.acquire({ timeoutMs: 1500 }).catch((e: unknown) => e);
    assert.ok(err instanceof LockTimeoutError, String(err));
    assert.equal(err.code, 'LOCK_TIMEOUT');
    assert.equal(err.path, path);
    // Our node is deleted before the rejection.
    assert.deepEqual(await childrenOf(path), namesOf(a, b, c), "only the holders' nodes remain");
    assert.ok(dSession.counters.getData - reads >= 3, 'the waiter did set watches on its window');
    assert.equal(dSession.activeWatchCount, 0);
    await waitFor(async () => (await watchedBy(dSession)).length === 0, { timeoutMs: 5000, message: "no watch of the waiter's session" });
    // The semaphore still works: for another session, and for the one that gave up.
    await c.release();
    const eh = await withTimeout(se.acquire({ timeoutMs: 10_000 }), 10_000, 'E after the timeout');
    await a.release();
    const dh = await withTimeout(sd.acquire({ timeoutMs: 10_000 }), 10_000, 'D again');
    assert.deepEqual(await childrenOf(path), namesOf(b, eh, dh));
    await cleanUp(path, [sa, sb, sc, sd, se], sessions);
  });

  test('abort: rejects with the signal reason, our node is gone, no watch of the waiter is left', async () => {
    const path = uniquePath('abort');
    const sessions = await connectApart(5);
    const [sa, sb, sc, sd, se] = sessions.map((x) => new Semaphore(x, path, { maxLeases: 3, watchOwnNode: true })) as [Semaphore, Semaphore, Semaphore, Semaphore, Semaphore];
    const dSession = sessions[3] as ZkSession;
    const a = await sa.acquire();
    const b = await sb.acquire();
    const c = await sc.acquire();
    const ac = new AbortController();
    const d = sd.acquire({ signal: ac.signal });
    d.catch(() => undefined);
    // Wait until D really waits: its window (A, B, C) and its own node are watched.
    await waitFor(async () => (await watchedBy(dSession)).length === 4, { timeoutMs: 5000, message: "D's watches" });
    const dNode = (await childrenOf(path)).find((n) => !namesOf(a, b, c).includes(n));
    assert.deepEqual(await watchedBy(dSession), [a.path, b.path, c.path, `${path}/${dNode}`].sort());
    const reason = new Error('no longer needed');
    ac.abort(reason);
    await assert.rejects(d, (e: unknown) => e === reason);
    assert.deepEqual(await childrenOf(path), namesOf(a, b, c), "only the holders' nodes remain");
    assert.equal(dSession.activeWatchCount, 0);
    await waitFor(async () => (await watchedBy(dSession)).length === 0, { timeoutMs: 5000, message: "no watch of the waiter's session" });
    // The holders' own-node watches (watchOwnNode) are untouched by D's watch removals.
    const byPath = await server.watchesByPath();
    for (const h of [a, b, c]) assert.ok(byPath.get(h.path)?.length, `${h.path} still watched by its holder`);

    // An already aborted signal: rejects at once and creates nothing.
    const pre = new AbortController();
    const preReason = new Error('before');
    pre.abort(preReason);
    await assert.rejects(sd.acquire({ signal: pre.signal }), (e: unknown) => e === preReason);
    assert.deepEqual(await childrenOf(path), namesOf(a, b, c));

    await b.release();
    const eh = await withTimeout(se.acquire({ timeoutMs: 10_000 }), 10_000, 'E after the abort');
    assert.deepEqual(await childrenOf(path), namesOf(a, c, eh));
    await cleanUp(path, [sa, sb, sc, sd, se], sessions);
  });
});

describe('fencing tokens', () => {
  test('strictly increase in grant order: one lease at a time among 4 sessions', async () => {
    const path = uniquePath('fencing-1');
    const sessions = await connectMany(4);
    const sems = sessions.map((x) => new Semaphore(x, path, { maxLeases: 1 }));
    const order: bigint[] = [];
    await withTimeout(
      Promise.all(
        sems.map(async (sem) => {
          for (let i = 0; i < 6; i++) {
            const h = await sem.acquire({ timeoutMs: 30_000 });
            order.push(h.fencingToken); // inside the only lease: grants are serialized
            await nextTurn();
            await h.release();
          }
        }),
      ),
      60_000,
      '24 grants',
    );
    assert.equal(order.length, 24);
    for (let i = 1; i < order.length; i++) assert.ok((order[i] as bigint) > (order[i - 1] as bigint), `token ${i}: ${order[i]} > ${order[i - 1]}`);
    await cleanUp(path, sems, sessions);
  });

  test('strictly increase in grant order with 3 leases: waiters D, E, F granted in queue order', async () => {
    const path = uniquePath('fencing-3');
    const sessions = await connectMany(6);
    const sems = sessions.map((x) => new Semaphore(x, path, { maxLeases: 3 }));
    const held: LockHandle[] = [];
    for (const sem of sems.slice(0, 3)) held.push(await sem.acquire());
    const waiting: Promise<LockHandle>[] = [];
    for (const [i, sem] of sems.slice(3).entries()) {
      waiting.push(sem.acquire({ timeoutMs: 30_000 }));
      await waitFor(async () => (await childrenOf(path)).length === 4 + i, { timeoutMs: 5000, message: `waiter ${i} queued` });
    }
    // Release the holders one by one; each release grants the next waiter in queue order.
    for (const [i, w] of waiting.entries()) {
      await (held[i] as LockHandle).release();
      held.push(await withTimeout(w, 5000, `waiter ${i}`));
    }
    const tokens = held.map((h) => h.fencingToken);
    for (let i = 1; i < tokens.length; i++) assert.ok((tokens[i] as bigint) > (tokens[i - 1] as bigint), `grant ${i}`);
    await cleanUp(path, sems, sessions);
  });
});

describe('close()', () => {
  test('releases held leases, rejects pending acquisitions with ClosedError, and refuses later use', async () => {
    const path = uniquePath('close');
    const [sx, sy] = (await connectMany(2)) as [ZkSession, ZkSession];
    const x = new Semaphore(sx, path, { maxLeases: 2 });
    const y = new Semaphore(sy, path, { maxLeases: 2 });
    const h1 = await x.acquire();
    const h2 = await x.acquire();
    const pending = x.acquire({ timeoutMs: 30_000 });
    pending.catch(() => undefined);
    await waitFor(async () => (await childrenOf(path)).length === 3, { timeoutMs: 5000, message: 'the pending node' });
    const other = y.acquire({ timeoutMs: 30_000 });
    await waitFor(async () => (await childrenOf(path)).length === 4, { timeoutMs: 5000, message: "the other session's node" });
    await x.close();
    await assert.rejects(pending, (e: unknown) => e instanceof ClosedError && e.code === 'CLOSED');
    assert.equal(h1.isHeld, false);
    assert.equal(h2.isHeld, false);
    const oh = await withTimeout(other, 5000, 'the other session after close');
    assert.deepEqual(await childrenOf(path), [nameOf(oh)], 'none of the closed instance nodes remain');
    await waitFor(async () => (await watchedBy(sx)).length === 0, { timeoutMs: 5000, message: 'no watch of the closed instance' });
    await x.close(); // idempotent
    await assert.rejects(x.acquire(), ClosedError);
    await assert.rejects(async () => x.tryAcquire(), ClosedError);
    await assert.rejects(x.participants(), ClosedError);
    await assert.rejects(x.runExclusive(() => undefined), ClosedError);
    await cleanUp(path, [x, y], [sx, sy]);
  });
});
