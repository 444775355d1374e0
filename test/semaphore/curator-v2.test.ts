// Semaphore with layout 'curator-v2' (Curator's InterProcessSemaphoreV2 protocol), zk-recipes
// participants only, against a real standalone ZooKeeper: the node layout, who waits on what
// (one waiter on the leases, the others on the mutex: no herd), the limit, multi-lease grants,
// tryAcquire, timeout and abort in both waiting phases (nothing left behind), the recorded
// maxLeases, the layout check in both directions, and real faults (an expired holder or waiter,
// lost create replies, a deleted lease). Interop with Curator itself: curator-interop.test.ts.
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import type { LockHandle } from '../../src/driver/handle.js';
import { InvalidArgumentError, LayoutMismatchError, LeaseMismatchError, LockLostError, LockTimeoutError } from '../../src/errors.js';
import { Semaphore, type SemaphoreOptions } from '../../src/semaphore/index.js';
import { expireSession, waitFor, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
const V2 = { layout: 'curator-v2' } as const;
const PROTECTED = (name: string): RegExp => new RegExp(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}-${name}\\d{10}$`);

const childrenOf = (path: string): Promise<string[]> => fx.children(path);

const leasesOf = (path: string): Promise<string[]> => childrenOf(`${path}/leases`);
const locksOf = (path: string): Promise<string[]> => childrenOf(`${path}/locks`);
const namesOf = (...hs: LockHandle[]): string[] => hs.flatMap((h) => h.paths.map((p) => p.slice(p.lastIndexOf('/') + 1))).sort();

/** Data-watched paths of `session` on the server (wchc), sorted. */
async function dataWatchesOf(session: ZkSession): Promise<string[]> {
  return [...((await fx.server.watchesBySession()).get(`0x${session.sessionId.toString(16)}`) ?? [])].sort();
}

/** Closes the semaphores, then checks the path is gone and no watch is left; closes the sessions. */
async function cleanUp(path: string, sems: readonly Semaphore[], sessions: readonly ZkSession[]): Promise<void> {
  await Promise.all(sems.map((x) => x.close()));
  assert.equal(await fx.observer.exists(path), null, `nothing left under ${path}`);
  for (const s of sessions) assert.equal(s.activeWatchCount, 0, 'no watch left in the session');
  await fx.waitWatchTotal(0, 'no watch left');
  await Promise.all(sessions.map((x) => x.close()));
}

function v2(session: ZkSession, path: string, maxLeases: number, options: Partial<SemaphoreOptions> = {}): Semaphore {
  return new Semaphore(session, path, { maxLeases, ...V2, ...options });
}

describe('layout', () => {
  test("Curator's names: a mutex under locks/ (released once granted), leases under leases/, maxLeases in the path's data", async () => {
    const path = uniquePath('v2-layout');
    const [s1] = (await fx.sessionsN(1)) as [ZkSession];
    const sem = v2(s1, path, 2, { participantId: 'me' });
    assert.equal(sem.layout, 'curator-v2');
    const h = await sem.acquire({ timeoutMs: 10_000 });
    assert.deepEqual(await childrenOf(path), ['leases', 'locks']);
    assert.deepEqual(await locksOf(path), [], 'the mutex is released before acquire() resolves');
    const [lease] = await leasesOf(path);
    assert.match(lease ?? '', PROTECTED('lease-'));
    assert.equal(h.path, `${path}/leases/${lease}`);
    const node = await fx.observer.getData(h.path);
    assert.equal(node.data.toString(), 'me');
    assert.equal(node.stat.ephemeralOwner, s1.sessionId);
    assert.equal(h.fencingToken, node.stat.czxid, 'the token is the lease czxid');
    assert.equal((await fx.observer.getData(path)).data.toString(), '2');
    assert.deepEqual(await sem.participants(), [{ id: 'me', path: h.path, czxid: node.stat.czxid, fencingToken: node.stat.czxid, isHolder: true }]);
    await h.release();
    assert.deepEqual(await leasesOf(path), []);
    await cleanUp(path, [sem], [s1]);
  });

  test('a bad layout is rejected at construction', () => {
    for (const layout of ['v2', 'Curator-V2', 1, null]) {
      assert.throws(() => new Semaphore(fx.observer, '/sem', { maxLeases: 2, layout } as unknown as SemaphoreOptions), InvalidArgumentError);
    }
  });
});

describe('waiting', () => {
  test('one waiter holds the mutex and watches the leases; the next waits on the mutex only; a release wakes the first', async () => {
    const path = uniquePath('v2-wait');
    const sessions = await fx.sessionsApart(4);
    const [sa, sb, sc, sd] = sessions.map((s) => v2(s, path, 2)) as [Semaphore, Semaphore, Semaphore, Semaphore];
    const [, , cSession, dSession] = sessions as [ZkSession, ZkSession, ZkSession, ZkSession];
    const a = await sa.acquire();
    const b = await sb.acquire();
    let cGranted = false;
    const c = sc.acquire({ timeoutMs: 30_000 }).then((h) => {
      cGranted = true;
      return h;
    });
    await waitFor(async () => (await leasesOf(path)).length === 3 && cSession.activeWatchCount === 1, { timeoutMs: 5000, message: "C's lease and leases watch" });
    const [cMutex] = await locksOf(path);
    const d = sd.acquire({ timeoutMs: 30_000 });
    // D watches C's mutex node, and its own (what a grant without a listing rests on).
    await waitFor(async () => (await dataWatchesOf(dSession)).length === 2, { timeoutMs: 5000, message: "D's mutex watches" });
    const dMutex = (await locksOf(path)).find((n) => n !== cMutex) as string;
    // D has no lease yet and watches only mutex nodes: a lease release does not wake it.
    assert.deepEqual(await dataWatchesOf(dSession), [`${path}/locks/${cMutex}`, `${path}/locks/${dMutex}`].sort());
    assert.equal(dSession.activeWatchCount, 2);
    assert.deepEqual(await dataWatchesOf(cSession), [], "C's watch is a child watch on leases/");
    assert.equal((await leasesOf(path)).length, 3);
    assert.equal(cGranted, false);

    const dReads = dSession.counters.getChildren + dSession.counters.getData;
    await a.release();
    const ch = await withTimeout(c, 5000, 'C after A released');
    // D takes the mutex in turn, creates its lease and waits on the leases now.
    // Its own mutex node's watch stays until that node goes (once D has its lease).
    await waitFor(async () => (await leasesOf(path)).length === 3 && dSession.activeWatchCount === 2 && (await dataWatchesOf(dSession)).join() === `${path}/locks/${dMutex}`, { timeoutMs: 5000, message: 'D waiting on the leases' });
    assert.ok(dSession.counters.getChildren + dSession.counters.getData > dReads);
    assert.equal(cSession.activeWatchCount, 0, "C's leases watch was removed when it was granted");
    await b.release();
    const dh = await withTimeout(d, 5000, 'D after B released');
    assert.deepEqual(await leasesOf(path), namesOf(ch, dh));
    assert.deepEqual(await locksOf(path), []);
    await ch.release();
    await dh.release();
    await cleanUp(path, [sa, sb, sc, sd], sessions);
  });
});

describe('lease limit', () => {
  test('6 sessions, 60 leases: never more than maxLeases (2) holders at once', async () => {
    const path = uniquePath('v2-stress');
    const sessions = await fx.sessionsN(6);
    const sems = sessions.map((s) => v2(s, path, 2));
    let holders = 0;
    let max = 0;
    const tokens = new Set<bigint>();
    await withTimeout(
      Promise.all(
        sems.map(async (sem) => {
          for (let i = 0; i < 10; i++) {
            const h = await sem.acquire({ timeoutMs: 60_000 });
            holders++;
            max = Math.max(max, holders);
            tokens.add(h.fencingToken);
            await nextTurn();
            assert.ok(h.isHeld);
            holders--;
            await h.release();
          }
        }),
      ),
      120_000,
      '60 leases',
    );
    assert.equal(tokens.size, 60);
    assert.ok(max <= 2, `at most 2 holders at once, saw ${max}`);
    await cleanUp(path, sems, sessions);
  });

  test('fencing tokens strictly increase in grant order (one lease, 4 sessions)', async () => {
    const path = uniquePath('v2-fencing');
    const sessions = await fx.sessionsN(4);
    const sems = sessions.map((s) => v2(s, path, 1));
    const order: bigint[] = [];
    await withTimeout(
      Promise.all(
        sems.map(async (sem) => {
          for (let i = 0; i < 5; i++) {
            await sem.runExclusive((_signal, h) => {
              order.push(h.fencingToken); // inside the only lease: grants are serialized
            }, { timeoutMs: 30_000 });
          }
        }),
      ),
      60_000,
      '20 grants',
    );
    for (let i = 1; i < order.length; i++) assert.ok((order[i] as bigint) > (order[i - 1] as bigint), `token ${i}`);
    await cleanUp(path, sems, sessions);
  });

  test('acquire(2): two leases of one transaction, granted together once both fit', async () => {
    const path = uniquePath('v2-pair');
    const [sx, sy] = (await fx.sessionsN(2)) as [ZkSession, ZkSession];
    const x = v2(sx, path, 3);
    const y = v2(sy, path, 3);
    const one = await y.acquire();
    const two = await x.acquire(2, { timeoutMs: 10_000 });
    assert.equal(two.paths.length, 2);
    for (const p of two.paths) assert.equal((await fx.observer.exists(p))?.czxid, two.fencingToken, 'one transaction');
    assert.equal(await y.tryAcquire(), null, 'three of three held');
    await two.release();
    const other = await y.acquire(); // two held by y now
    let pairGranted = false;
    const pair = x.acquire(2, { timeoutMs: 30_000 }).then((h) => {
      pairGranted = true;
      return h;
    });
    await waitFor(async () => (await leasesOf(path)).length === 4, { timeoutMs: 5000, message: 'the waiting pair' });
    const parts = await y.participants();
    assert.deepEqual(parts.map((p) => p.isHolder), [true, true, false, false], 'the pair waits; the others hold');
    assert.equal(pairGranted, false);
    await one.release();
    const ph = await withTimeout(pair, 5000, 'the pair');
    assert.deepEqual(await leasesOf(path), namesOf(other, ph));
    await Promise.all([other.release(), ph.release()]);
    await cleanUp(path, [x, y], [sx, sy]);
  });

  test('tryAcquire: null when full, leaving no lease and no mutex node', async () => {
    const path = uniquePath('v2-try');
    const [sx, sy] = (await fx.sessionsN(2)) as [ZkSession, ZkSession];
    const x = v2(sx, path, 1);
    const y = v2(sy, path, 1);
    const h = await x.tryAcquire();
    assert.ok(h);
    assert.equal(await y.tryAcquire(), null);
    assert.equal(await x.tryAcquire(), null, 'the same instance too: every acquisition is a participant');
    assert.deepEqual(await leasesOf(path), namesOf(h));
    assert.deepEqual(await locksOf(path), []);
    await h.release();
    const again = await y.tryAcquire();
    assert.ok(again);
    await again.release();
    await cleanUp(path, [x, y], [sx, sy]);
  });

  test('participants with another maxLeases get LeaseMismatchError and leave nothing', async () => {
    const path = uniquePath('v2-max');
    const [sx, sy] = (await fx.sessionsN(2)) as [ZkSession, ZkSession];
    const x = v2(sx, path, 2);
    const h = await x.acquire();
    const y = v2(sy, path, 3);
    await assert.rejects(y.acquire({ timeoutMs: 5000 }), (e: unknown) => e instanceof LeaseMismatchError && e.path === path);
    assert.deepEqual(await leasesOf(path), namesOf(h));
    assert.deepEqual(await locksOf(path), []);
    await h.release();
    await cleanUp(path, [x, y], [sx, sy]);
  });
});

describe('timeout and abort (nothing left behind)', () => {
  test('timeout while holding the mutex and while queued on it: LockTimeoutError, no lease, no mutex node, no watch', async () => {
    const path = uniquePath('v2-timeout');
    const sessions = await fx.sessionsN(3);
    const [sa, sb, sc] = sessions.map((s) => v2(s, path, 1)) as [Semaphore, Semaphore, Semaphore];
    const a = await sa.acquire();
    // B waits for room holding the mutex; C queues on the mutex behind it with a shorter timeout.
    const b = sb.acquire({ timeoutMs: 1500 });
    b.catch(() => undefined);
    await waitFor(async () => (await leasesOf(path)).length === 2, { timeoutMs: 5000, message: "B's lease" });
    const c = sc.acquire({ timeoutMs: 300 });
    await assert.rejects(c, (e: unknown) => e instanceof LockTimeoutError && e.code === 'LOCK_TIMEOUT');
    await assert.rejects(b, LockTimeoutError);
    assert.deepEqual(await leasesOf(path), namesOf(a), "only A's lease");
    assert.deepEqual(await locksOf(path), [], 'no mutex node');
    for (const s of sessions) assert.equal(s.activeWatchCount, 0);
    await fx.waitWatchTotal(0, 'no watch left');
    await a.release();
    const again = await withTimeout(sc.acquire({ timeoutMs: 5000 }), 10_000, 'C later');
    await again.release();
    await cleanUp(path, [sa, sb, sc], sessions);
  });

  test('abort while holding the mutex: rejects with the reason; the next waiter takes the mutex', async () => {
    const path = uniquePath('v2-abort');
    const sessions = await fx.sessionsN(3);
    const [sa, sb, sc] = sessions.map((s) => v2(s, path, 1)) as [Semaphore, Semaphore, Semaphore];
    const [, bSession] = sessions as [ZkSession, ZkSession];
    const a = await sa.acquire();
    const ac = new AbortController();
    const b = sb.acquire({ signal: ac.signal });
    b.catch(() => undefined);
    await waitFor(async () => bSession.activeWatchCount === 1, { timeoutMs: 5000, message: 'B waiting on the leases' });
    const c = sc.acquire({ timeoutMs: 30_000 });
    await waitFor(async () => (await locksOf(path)).length === 2, { timeoutMs: 5000, message: 'C queued on the mutex' });
    const reason = new Error('no longer needed');
    ac.abort(reason);
    await assert.rejects(b, (e: unknown) => e === reason);
    assert.equal(bSession.activeWatchCount, 0);
    // C now holds the mutex and waits for room with its own lease.
    await waitFor(async () => (await locksOf(path)).length === 1 && (await leasesOf(path)).length === 2, { timeoutMs: 5000, message: 'C waiting for room' });
    await a.release();
    const ch = await withTimeout(c, 5000, 'C');
    assert.deepEqual(await leasesOf(path), namesOf(ch));
    await ch.release();

    const pre = new AbortController();
    pre.abort(new Error('before'));
    await assert.rejects(sb.acquire({ signal: pre.signal }), (e: unknown) => e === pre.signal.reason);
    await cleanUp(path, [sa, sb, sc], sessions);
  });
});

describe('close()', () => {
  test('rejects a pending acquisition with ClosedError (waiting for room or for the mutex) and leaves nothing', async () => {
    const path = uniquePath('v2-close');
    const sessions = await fx.sessionsN(2);
    const [sa, sb] = sessions as [ZkSession, ZkSession];
    const a = v2(sa, path, 1);
    const b = v2(sb, path, 1);
    const h = await a.acquire();
    const room = b.acquire({ timeoutMs: 30_000 });
    room.catch(() => undefined);
    await waitFor(async () => (await leasesOf(path)).length === 2, { timeoutMs: 5000, message: "B's lease" });
    const mutex = b.acquire({ timeoutMs: 30_000 });
    mutex.catch(() => undefined);
    await waitFor(async () => (await locksOf(path)).length === 2, { timeoutMs: 5000, message: "B's second acquisition on the mutex" });
    await b.close();
    await assert.rejects(room, (e: unknown) => e instanceof Error && (e as { code?: string }).code === 'CLOSED');
    await assert.rejects(mutex, (e: unknown) => e instanceof Error && (e as { code?: string }).code === 'CLOSED');
    assert.deepEqual(await leasesOf(path), namesOf(h));
    assert.deepEqual(await locksOf(path), []);
    assert.equal(sb.activeWatchCount, 0);
    await h.release();
    await cleanUp(path, [a, b], sessions);
  });
});

describe('the other layout on the path', () => {
  const mismatch = (path: string) => (e: unknown) => e instanceof LayoutMismatchError && e.code === 'LAYOUT_MISMATCH' && e.path === path;

  test('window layout where V2 leases are: refused, its node removed; V2 goes on', async () => {
    const path = uniquePath('v2-vs-window');
    const [sx, sy] = (await fx.sessionsN(2)) as [ZkSession, ZkSession];
    const x = v2(sx, path, 1);
    const h = await x.acquire();
    const w = new Semaphore(sy, path, { maxLeases: 1 });
    await assert.rejects(w.acquire({ timeoutMs: 5000 }), mismatch(path));
    await assert.rejects(w.tryAcquire(), mismatch(path));
    await assert.rejects(w.acquire(1, { timeoutMs: 5000 }), mismatch(path));
    assert.deepEqual(await childrenOf(path), ['leases', 'locks'], 'no lock- node of the window participant');
    await h.release();
    const again = await x.tryAcquire();
    assert.ok(again);
    await again.release();
    await cleanUp(path, [x, w], [sx, sy]);
  });

  test('V2 layout where window nodes are: refused, no lease, mutex node or directory left; the window goes on', async () => {
    const path = uniquePath('window-vs-v2');
    const [sx, sy] = (await fx.sessionsN(2)) as [ZkSession, ZkSession];
    const w = new Semaphore(sx, path, { maxLeases: 1 });
    const h = await w.acquire();
    const x = v2(sy, path, 1);
    await assert.rejects(x.acquire({ timeoutMs: 5000 }), mismatch(path));
    await assert.rejects(x.tryAcquire(), mismatch(path));
    assert.deepEqual(await childrenOf(path), namesOf(h), 'no locks/ or leases/ left to block the window participants');
    await h.release();
    const again = await w.tryAcquire();
    assert.ok(again, 'the window semaphore still works');
    await again.release();
    await cleanUp(path, [w, x], [sx, sy]);
  });
});

describe('faults', () => {
  test("a V2 holder's session expires: its signal aborts with LockLostError, its lease goes, a waiter is granted", async () => {
    const path = uniquePath('v2-expire-holder');
    const proxy = await fx.proxy();
    const victim = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 1500 });
    const [other] = (await fx.sessionsN(1)) as [ZkSession];
    const sv = v2(victim, path, 1);
    const so = v2(other, path, 1);
    const h = await sv.acquire();
    const waiter = so.acquire({ timeoutMs: 30_000 });
    await waitFor(async () => (await leasesOf(path)).length === 2, { timeoutMs: 5000, message: 'the waiter' });
    await expireSession(victim, proxy);
    assert.ok(h.signal.aborted);
    assert.ok(h.signal.reason instanceof LockLostError);
    const wh = await withTimeout(waiter, 10_000, 'the waiter after the expiry');
    assert.deepEqual(await leasesOf(path), namesOf(wh), 'the expired lease is gone');
    await assert.rejects(h.release(), (e: unknown) => e instanceof Error && (e as { code?: string }).code === 'NOT_HELD');
    await wh.release();
    await cleanUp(path, [sv, so], [victim, other]);
  });

  test('the waiter holding the mutex has its session expire: it starts over in the new session, leaving nothing of the old one', async () => {
    const path = uniquePath('v2-expire-waiter');
    const proxy = await fx.proxy();
    const victim = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 1500 });
    const [holder] = (await fx.sessionsN(1)) as [ZkSession];
    const sh = v2(holder, path, 1);
    const sv = v2(victim, path, 1);
    const h = await sh.acquire();
    const waiting = sv.acquire({ timeoutMs: 30_000 });
    await waitFor(async () => (await leasesOf(path)).length === 2, { timeoutMs: 5000, message: "the victim's lease" });
    const firstId = victim.sessionId;
    await expireSession(victim, proxy);
    // Back in a new session, waiting again: a new lease and mutex node owned by it.
    await waitFor(async () => victim.sessionId !== firstId && (await leasesOf(path)).length === 2, { timeoutMs: 10_000, message: 'the victim waiting again' });
    const owners = await Promise.all((await leasesOf(path)).map(async (n) => (await fx.observer.exists(`${path}/leases/${n}`))?.ephemeralOwner));
    assert.ok(!owners.includes(firstId), 'nothing of the expired session');
    await h.release();
    const vh = await withTimeout(waiting, 10_000, 'the victim after the release');
    assert.equal(vh.sessionId, victim.sessionId);
    await vh.release();
    await cleanUp(path, [sh, sv], [victim, holder]);
  });

  test('a lost reply to the lease create: the lease is adopted, no orphan; a lost multi-lease reply or mutex create reply likewise', async () => {
    const path = uniquePath('v2-lost-reply');
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString);
    const sem = v2(session, path, 3, { reapParentAfterMs: Infinity });
    const lost = proxy.loseReply({ op: 'create', path: `${path}/leases` });
    const h = await sem.acquire({ timeoutMs: 15_000 });
    await lost;
    assert.deepEqual(await leasesOf(path), namesOf(h), 'one lease: ours, adopted');
    assert.equal((await fx.observer.exists(h.path))?.ephemeralOwner, session.sessionId);
    assert.deepEqual(await locksOf(path), []);

    const lostMulti = proxy.loseReply({ op: 'multi', path: `${path}/leases` });
    const two = await sem.acquire(2, { timeoutMs: 15_000 });
    await lostMulti;
    assert.deepEqual(await leasesOf(path), namesOf(h, two), 'both of the pair adopted, no second pair');
    await Promise.all([h.release(), two.release()]);
    assert.deepEqual(await leasesOf(path), []);

    const lostMutex = proxy.loseReply({ op: 'create', path: `${path}/locks` });
    const three = await sem.acquire({ timeoutMs: 15_000 });
    await lostMutex;
    assert.deepEqual(await locksOf(path), [], 'the adopted mutex node was released, none orphaned');
    assert.deepEqual(await leasesOf(path), namesOf(three));
    await three.release();
    await cleanUp(path, [sem], [session]);
  });

  test('watchOwnNode: a lease deleted by someone else aborts the handle', async () => {
    const path = uniquePath('v2-own');
    const [s1] = (await fx.sessionsN(1)) as [ZkSession];
    const sem = v2(s1, path, 2, { watchOwnNode: true });
    const h = await sem.acquire();
    assert.equal(s1.activeWatchCount, 1);
    await fx.observer.delete(h.path);
    await waitFor(() => h.signal.aborted, { timeoutMs: 5000, message: 'the handle aborted' });
    assert.ok(h.signal.reason instanceof LockLostError);
    await assert.rejects(h.release());
    await cleanUp(path, [sem], [s1]);
  });
});
