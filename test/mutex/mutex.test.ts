// Mutex against a real standalone ZooKeeper: exclusion, FIFO, no herd, fencing tokens,
// timeout/abort cleanup (nodes and server-side watches), lost creates, expiry, restarts,
// guarded transactions, bad input.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClosedError, InvalidArgumentError, LockLostError, LockTimeoutError, NotHeldError, SessionExpiredError } from '../../src/errors.js';
import { MultiLock, Mutex, Perms, type LockHandle, type SessionOptions, type ZkSession } from '../../src/index.js';
import { MARK_MIN_CHILDREN } from '../../src/driver/lock-driver.js';
import { ChaosProxy, expireSession, waitFor, withTimeout } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
const { pool } = fx;

const sessionsN = (n: number, options = {}): Promise<ZkSession[]> => fx.sessionsN(n, options);

async function lockNodes(path: string): Promise<string[]> {
  const stat = await fx.observer.exists(path);
  return stat ? (await fx.observer.getChildren(path)).children.filter((c) => c.includes('lock-')) : [];
}

const waitNoWatches = (session: ZkSession, under: string): Promise<void> => fx.waitNoWatches(session, under);

/** Waits until `count` nodes are queued on `path`. */
const queued = (path: string, count: number): Promise<boolean> =>
  waitFor(async () => (await lockNodes(path)).length === count, { timeoutMs: 5000, message: `${count} nodes queued on ${path}` });

describe('basics', () => {
  test('acquire, tryAcquire, release, fencing token, await using', async () => {
    const path = uniquePath('basics');
    const [s1, s2] = await sessionsN(2);
    const a = new Mutex(s1!, path);
    const b = new Mutex(s2!, path);
    const h = await a.acquire();
    assert.ok(h.isHeld);
    assert.match(h.path, new RegExp(`^${path}/_c_[0-9a-f-]{36}-lock-\\d{10}$`), 'Curator-compatible name');
    assert.equal(h.fencingToken, (await fx.observer.exists(h.path))?.czxid);
    assert.equal(await b.tryAcquire(), null);
    assert.deepEqual(await lockNodes(path), [h.path.slice(path.length + 1)], 'a failed tryAcquire leaves nothing');
    await h.release();
    assert.equal(h.isHeld, false);
    await assert.rejects(h.release(), NotHeldError);
    {
      await using h2 = await b.acquire();
      assert.ok(h2.fencingToken > h.fencingToken);
    }
    assert.deepEqual(await lockNodes(path), []);
  });

  test('runExclusive passes the signal and releases even when fn throws', async () => {
    const path = uniquePath('run-exclusive');
    const [s] = await sessionsN(1);
    const m = new Mutex(s!, path);
    const seen = await m.runExclusive((signal, handle) => ({ aborted: signal.aborted, held: handle.isHeld }));
    assert.deepEqual(seen, { aborted: false, held: true });
    await assert.rejects(m.runExclusive(() => Promise.reject(new Error('boom'))), /boom/);
    assert.deepEqual(await lockNodes(path), []);
    assert.ok(await m.tryAcquire(), 'free again');
    await m.close();
  });

  test('participants() lists holder and waiters in order with ids and czxids', async () => {
    const path = uniquePath('participants');
    const [s1, s2, s3] = await sessionsN(3);
    const a = new Mutex(s1!, path, { participantId: 'alpha' });
    const b = new Mutex(s2!, path, { participantId: 'beta' });
    const c = new Mutex(s3!, path, { participantId: 'gamma' });
    const h = await a.acquire();
    const pb = b.acquire();
    await queued(path, 2);
    const pc = c.acquire();
    await queued(path, 3);
    const ps = await a.participants();
    assert.deepEqual(ps.map((p) => [p.id, p.isHolder]), [['alpha', true], ['beta', false], ['gamma', false]]);
    assert.equal(ps[0]?.czxid, h.fencingToken);
    await h.release();
    await (await pb).release();
    await (await pc).release();
  });
});

describe('exclusion and order', () => {
  test('8 sessions x 100 acquisitions: never two holders; fencing tokens increase in grant order', async () => {
    const path = uniquePath('exclusion');
    const sessions = await sessionsN(8);
    let holders = 0;
    let maxHolders = 0;
    const tokens: bigint[] = [];
    await Promise.all(
      sessions.map(async (s) => {
        const m = new Mutex(s, path);
        for (let i = 0; i < 100; i++) {
          const h = await m.acquire({ timeoutMs: 30000 });
          holders++;
          maxHolders = Math.max(maxHolders, holders);
          tokens.push(h.fencingToken);
          await new Promise((r) => setImmediate(r));
          holders--;
          await h.release();
        }
      }),
    );
    assert.equal(maxHolders, 1);
    assert.equal(tokens.length, 800);
    for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i]! > tokens[i - 1]!, `token ${i} increases`);
    assert.deepEqual(await lockNodes(path), []);
  });

  test('a waiter whose predecessor (of another process) was the head of its snapshot takes the lock with no read', async () => {
    const path = uniquePath('fast-path');
    const [s1, s2] = await fx.sessionsApart(2);
    const holder = await new Mutex(s1!, path).acquire();
    const pending = new Mutex(s2!, path).acquire();
    await queued(path, 2);
    // The predecessor's watch, and its own node's (what a grant without a listing rests on).
    await waitFor(() => s2!.counters.getData >= 2, { timeoutMs: 5000, message: 'waiter settled' });
    await s2!.sync(path);
    const before = s2!.counters;
    await holder.release();
    await (await pending).release();
    const after = s2!.counters;
    assert.equal(after.getChildren + after.getData + after.exists, before.getChildren + before.getData + before.exists);
    assert.equal(after.watchEvents - before.watchEvents, 2, "the predecessor's deletion, and its own node's at its release");
  });

  test('concurrent acquire() calls on one instance exclude each other (not reentrant)', async () => {
    const path = uniquePath('same-instance');
    const [s] = await sessionsN(1);
    const m = new Mutex(s!, path);
    const first = await m.acquire();
    let secondGranted = false;
    const second = m.acquire({ timeoutMs: 10000 }).then((h) => {
      secondGranted = true;
      return h;
    });
    await queued(path, 2);
    assert.equal(secondGranted, false, 'the second flow waits, although it is the same instance');
    assert.equal(await m.tryAcquire(), null);
    await first.release();
    const h2 = await second;
    assert.ok(h2.fencingToken > first.fencingToken);
    await h2.release();
    await m.close();
  });

  test('FIFO: waiters are granted in the order they queued', async () => {
    const path = uniquePath('fifo');
    const sessions = await sessionsN(6);
    const mutexes = sessions.map((s, i) => new Mutex(s, path, { participantId: `p${i}` }));
    const first = await mutexes[0]!.acquire();
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 1; i < mutexes.length; i++) {
      waiters.push(
        mutexes[i]!.acquire().then(async (h) => {
          order.push(i);
          await h.release();
        }),
      );
      await queued(path, i + 1); // queue strictly one after the other
    }
    await first.release();
    await Promise.all(waiters);
    assert.deepEqual(order, [1, 2, 3, 4, 5]);
  });

  test('no herd: with 20 waiters (each of its own process) each release wakes exactly one, which reads at most once', async () => {
    const path = uniquePath('herd');
    const sessions = await fx.sessionsApart(21);
    const mutexes = sessions.map((s) => new Mutex(s, path));
    const holder = await mutexes[0]!.acquire();
    const grants: LockHandle[] = [];
    const waiting = mutexes.slice(1).map((m) => m.acquire().then((h) => grants.push(h)));
    await queued(path, 21);
    // Every waiter has sent its entry reads (the listing and its predecessor), and the server
    // has answered them: a session's requests are answered in order, the sync's reply last.
    await waitFor(() => sessions.slice(1).every((s) => s.counters.getData >= 1), { timeoutMs: 5000, message: 'waiters settled' });
    await Promise.all(sessions.slice(1).map((s) => s.sync(path)));
    const reads = (s: ZkSession): number => s.counters.getChildren + s.counters.getData + s.counters.exists;
    let current = holder;
    let currentSession = sessions[0]!;
    for (let round = 0; round < 20; round++) {
      const others = sessions.filter((s) => s !== currentSession);
      const eventsBefore = others.map((s) => s.counters.watchEvents);
      const readsBefore = others.map(reads);
      const granted = grants.length;
      await current.release();
      await waitFor(() => grants.length === granted + 1, { timeoutMs: 5000, message: 'next grant' });
      const woken = others.filter((s, i) => s.counters.watchEvents > eventsBefore[i]!);
      assert.equal(woken.length, 1, `round ${round}: exactly one session notified`);
      const readers = others.filter((s, i) => reads(s) > readsBefore[i]!);
      assert.ok(readers.every((s) => s === woken[0]), `round ${round}: only the woken waiter reads`);
      assert.ok(reads(woken[0]!) - readsBefore[others.indexOf(woken[0]!)]! <= 1, `round ${round}: at most one read (a re-listing)`);
      current = grants[grants.length - 1]!;
      currentSession = woken[0]!;
    }
    await current.release();
    await Promise.all(waiting);
  });
});

describe('handoff inside one process', () => {
  test('20 waiters in one session: each release grants the next in memory (no listing, no watch on another node, no notification of it)', async () => {
    const path = uniquePath('local-handoff');
    const [s] = await sessionsN(1);
    const m = new Mutex(s!, path);
    const holder = await m.acquire();
    const grants: LockHandle[] = [];
    const waiting: Promise<number>[] = [];
    for (let i = 1; i <= 20; i++) {
      waiting.push(m.acquire().then((h) => grants.push(h)));
      await queued(path, i + 1); // in order: waiter i behind waiter i - 1
    }
    await waitFor(() => s!.counters.getData >= 20, { timeoutMs: 5000, message: 'every waiter watches its own node' });
    await s!.sync(path);
    // Each waiter follows its predecessor here; on the server it watches only its own node.
    const bySeq = (a: string, b: string): number => a.slice(-10).localeCompare(b.slice(-10));
    const waiters = (await lockNodes(path)).sort(bySeq).map((n) => `${path}/${n}`).filter((p) => p !== holder.path);
    const watched = await fx.server.watchesByPath();
    assert.deepEqual([...watched.keys()].filter((p) => p.startsWith(path)).sort(), [...waiters].sort(), 'only their own nodes');
    const before = s!.counters;
    let current = holder;
    for (let round = 0; round < 20; round++) {
      await current.release();
      await waitFor(() => grants.length === round + 1, { timeoutMs: 5000, message: `grant ${round + 1}` });
      current = grants[round]!;
      assert.equal(current.path, waiters[round], 'in queue order');
    }
    await current.release();
    await Promise.all(waiting);
    const after = s!.counters;
    assert.equal(after.getChildren + after.getData + after.exists - (before.getChildren + before.getData + before.exists), 0, 'no read');
    await waitFor(() => s!.counters.watchEvents - before.watchEvents === 20, { timeoutMs: 5000, message: "one notification per waiter: its own node's, at its release" });
    assert.deepEqual(await lockNodes(path), []);
  });

  test('a waiter of another session of this process waits for its own server, as another process would', async () => {
    const path = uniquePath('local-other-session');
    const [s1, s2] = await sessionsN(2); // one connect string: one process's sessions
    const holder = await new Mutex(s1!, path).acquire();
    const next = new Mutex(s2!, path).acquire();
    await queued(path, 2);
    const hex = `0x${s2!.sessionId.toString(16)}`;
    await waitFor(async () => ((await fx.server.watchesBySession()).get(hex) ?? []).includes(holder.path), { timeoutMs: 5000, message: "it watches the holder's node on the server" });
    const events = s2!.counters.watchEvents;
    await holder.release();
    const h = await withTimeout(next, 5000, 'granted');
    assert.ok(s2!.counters.watchEvents > events, 'granted on its own notification');
    await h.release();
    assert.deepEqual(await lockNodes(path), []);
  });
});

/**
 * Two sessions of one connect string (so of one process: they share what they know of their
 * nodes), each on a route of its own: the holder's through proxy A, the waiter's through B,
 * with A refusing new connections until a test lets it (so the waiter cannot move to A).
 */
async function twoRoutes(waiterOptions: SessionOptions): Promise<{ viaA: ChaosProxy; viaB: ChaosProxy; holderSession: ZkSession; waiterSession: ZkSession }> {
  const [viaA, viaB] = [await fx.proxy(), await fx.proxy()];
  const cs = `${viaA.connectString},${viaB.connectString}`;
  viaB.reject(true);
  const holderSession = await pool.connect(cs, { sessionTimeoutMs: 10000 });
  viaB.reject(false);
  viaA.reject(true);
  const waiterSession = await pool.connect(cs, waiterOptions);
  return { viaA, viaB, holderSession, waiterSession };
}

describe('handoff inside one process: failure paths', () => {
  test('a held node of this session that someone else deletes: its successor here waits for the release, which reports the loss', async () => {
    const path = uniquePath('local-deleted');
    const [s1] = await sessionsN(1);
    const s2 = s1;
    const holder = await new Mutex(s1!, path).acquire();
    let granted = false;
    const next = new Mutex(s2!, path).acquire().then((h) => {
      granted = true;
      return h;
    });
    await queued(path, 2);
    await fx.observer.delete(holder.path);
    // A server watch would grant it now, beside a holder that still believes it holds.
    await fx.observer.sync(path);
    await s2!.sync(path);
    assert.equal(granted, false, 'not granted while the holder believes it holds');
    assert.ok(holder.isHeld);
    await assert.rejects(holder.release(), NotHeldError);
    const h = await withTimeout(next, 5000, 'granted once the holder released');
    await h.release();
    assert.deepEqual(await lockNodes(path), []);
  });

  test("a waiter of another session of this process ends with its own session, not with the holder's", async () => {
    const path = uniquePath('local-own-expiry');
    const { viaA, viaB, holderSession, waiterSession } = await twoRoutes({ sessionTimeoutMs: 4000, renewOnLoss: false });
    const holder = await new Mutex(holderSession, path).acquire();
    const waiting = new Mutex(waiterSession, path).acquire();
    waiting.catch(() => undefined);
    await queued(path, 2);
    await expireSession(waiterSession, viaB);
    // Its node went with its session: it is not left waiting for the holder.
    await assert.rejects(withTimeout(waiting, 5000, 'the wait ended with its session'), SessionExpiredError);
    assert.ok(holder.isHeld);
    assert.deepEqual(await lockNodes(path), [holder.path.slice(path.length + 1)]);
    viaA.reject(false);
    await holder.release();
    assert.deepEqual(await lockNodes(path), []);
  });

  test('a waiter of another session of this process whose connection is down is granted only once its session is back', async () => {
    const path = uniquePath('local-suspended');
    const { viaA, viaB, holderSession, waiterSession } = await twoRoutes({ sessionTimeoutMs: 10000 });
    const holder = await new Mutex(holderSession, path).acquire();
    const seen: string[] = [];
    waiterSession.on('state', (st) => seen.push(st));
    const next = new Mutex(waiterSession, path).acquire().then((h) => {
      seen.push('GRANTED');
      return h;
    });
    await queued(path, 2);
    await waitFor(() => waiterSession.counters.getChildren >= 1, { timeoutMs: 5000, message: 'the waiter listed' });
    await waiterSession.sync(path);
    // The waiter's route goes dark and the other refuses it: it stays SUSPENDED while the holder,
    // connected through A, releases.
    viaB.blackhole();
    await waitFor(() => seen.includes('SUSPENDED'), { timeoutMs: 10000, message: 'the waiter suspended' });
    await holder.release();
    await holderSession.sync(path);
    assert.ok(!seen.includes('GRANTED'), `not granted while suspended (${seen.join(', ')})`);
    viaA.reject(false);
    viaB.pass();
    const h = await withTimeout(next, 15000, 'granted after the reconnect');
    assert.ok(seen.indexOf('GRANTED') > seen.indexOf('RECONNECTED') && seen.includes('RECONNECTED'), `granted after RECONNECTED (${seen.join(', ')})`);
    assert.ok(h.isHeld);
    await h.release();
    assert.deepEqual(await lockNodes(path), []);
  });
});

describe('handoff: a woken waiter learns its predecessor held from one small read', () => {
  test('an uncontended cycle releases with a plain delete, and so does a holder that waited in a short queue', async () => {
    const path = uniquePath('uncontended');
    const [s1, s2] = await sessionsN(2);
    const m = new Mutex(s1!, path);
    await (await m.acquire()).release();
    const before = s1!.counters;
    for (let i = 0; i < 5; i++) await (await m.acquire()).release();
    const after = s1!.counters;
    assert.equal(after.multi - before.multi, 0, 'no transaction');
    assert.equal(after.delete - before.delete, 5);
    const first = await m.acquire();
    const waited = new Mutex(s2!, path).acquire();
    await queued(path, 2);
    await first.release();
    const h = await waited;
    const multis = s2!.counters.multi;
    await h.release();
    assert.equal(s2!.counters.multi - multis, 0, 'two nodes: a listing is cheaper than the mark');
    assert.equal((await fx.observer.getData(path)).data.toString(), 'zk-recipes:mutex', 'no mark: the data is what the mutex recorded');
  });

  test('100 waiters, each behind one of another process: while the directory is long, releases name their node and the woken waiter reads that, not the listing', async () => {
    const path = uniquePath('handoff');
    const sessions = await fx.sessionsApart(8);
    const n = 100;
    const holder = await new Mutex(sessions[0]!, path).acquire();
    const grants: LockHandle[] = [];
    const waiting: Promise<number>[] = [];
    // Waiter i in session i % 8: each but the first waits behind one of another process.
    const queuedAt = path;
    for (let i = 0; i < n; i++) {
      waiting.push(new Mutex(sessions[i % 8]!, path).acquire().then((h) => grants.push(h)));
      await queued(queuedAt, i + 2); // in order
    }
    await waitFor(() => sessions.reduce((k, s) => k + s.counters.getData, 0) >= n - 1, { timeoutMs: 5000, message: 'waiters settled' });
    let current = holder;
    let marked = 0;
    let unlisted = 0;
    let markRead = 0;
    for (let round = 0; round < n; round++) {
      const before = sessions.map((s) => s.counters);
      await current.release();
      const mark = (await fx.observer.getData(queuedAt)).data.toString();
      await waitFor(() => grants.length === round + 1, { timeoutMs: 5000, message: 'next grant' });
      const next = grants[round]!;
      const i = sessions.findIndex((s) => s.sessionId === next.sessionId);
      const listings = sessions[i]!.counters.getChildren - before[i]!.getChildren;
      const reads = sessions[i]!.counters.getData - before[i]!.getData;
      // The first holder took the lock at once: it is the head of every snapshot, no mark.
      if (round === 0) assert.equal(mark, 'zk-recipes:mutex', 'round 0: a plain delete (the data is what the mutex recorded)');
      if (mark === current.path.slice(current.path.lastIndexOf('/') + 1)) {
        marked++;
        assert.ok(listings + reads <= 1, `round ${round}: marked, yet ${listings} listings and ${reads} reads`);
        if (reads === 1) markRead++;
      } else assert.ok(listings + reads <= 2, `round ${round}: ${listings} listings and ${reads} reads`);
      if (listings === 0) unlisted++;
      current = next;
    }
    await current.release();
    await Promise.all(waiting);
    // Waiters that entered behind at least MARK_MIN_CHILDREN nodes and were granted while that
    // many were left: about 100 - 2 x 32 here.
    assert.ok(marked >= 25, `${marked} marked releases`);
    assert.ok(markRead >= 25, `${markRead} handoffs that read the mark`);
    assert.ok(unlisted >= 25, `${unlisted} handoffs without a listing`);
    assert.deepEqual(await lockNodes(queuedAt), []);
  });

  test('waits that entered while the directory was short, handing over once it is long, use the mark as the directory is now', async () => {
    const path = uniquePath('grown');
    // Three processes: the holder, P and W (each of its own), so W is told of P by the server.
    const [s0, s1, s2] = await fx.sessionsApart(3);
    const [mP, mW] = [new Mutex(s1!, path), new Mutex(s2!, path)];
    const holder = await new Mutex(s0!, path).acquire();
    const p = mP.acquire();
    await queued(path, 2);
    const w = mW.acquire();
    await queued(path, 3); // P and W listed a directory of 2 and 3 children
    // The directory grows long; later waits of the same two instances list it so.
    await Promise.all(Array.from({ length: MARK_MIN_CHILDREN }, (_, i) => fx.observer.create(`${path}/pad-${i}`)));
    const later = [mP.acquire(), mW.acquire()];
    await waitFor(() => s1!.counters.getChildren >= 2 && s2!.counters.getChildren >= 2, { timeoutMs: 5000, message: 'the later waits listed' });
    await Promise.all([s1!.sync(path), s2!.sync(path)]);
    const before = s2!.counters;
    await holder.release();
    const ph = await withTimeout(p, 5000, 'P granted');
    await ph.release(); // P waited, and the directory is long: it names its node
    const wh = await withTimeout(w, 5000, 'W granted');
    const after = s2!.counters;
    assert.equal(after.getChildren - before.getChildren, 0, 'W did not list the long directory');
    // It entered a short directory, so it did not watch its own node then: it reads it with the
    // mark, in the same round trip (what a grant without a listing rests on).
    assert.equal(after.getData - before.getData, 2, 'W read the mark, and its own node');
    await wh.release();
    await withTimeout(Promise.all(later.map(async (l) => (await l).release())), 5000, 'the later waits granted in turn');
    assert.deepEqual(await lockNodes(path), []);
  });

  test('a marked release whose reply is lost: retried, it resolves (no NotHeldError), the node is gone and named', async () => {
    const path = uniquePath('mark-lost-reply');
    const proxy = await fx.proxy();
    const victim = await pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
    const [s1] = await sessionsN(1);
    // A long directory, so that a holder that waited marks its release.
    await fx.observer.mkdirp(path);
    await Promise.all(Array.from({ length: MARK_MIN_CHILDREN }, (_, i) => fx.observer.create(`${path}/pad-${i}`)));
    const first = await new Mutex(s1!, path).acquire();
    const pending = new Mutex(victim, path).acquire();
    await queued(path, 2);
    await first.release();
    const h = await pending;
    const lost = proxy.loseReply({ op: 'multi', path: h.path.slice(path.length + 1) });
    await withTimeout(h.release(), 10000, 'the release settles');
    await lost;
    assert.equal(h.isHeld, false);
    assert.equal(await fx.observer.exists(h.path), null, 'our node is gone');
    assert.equal((await fx.observer.getData(path)).data.toString(), h.path.slice(path.length + 1), 'the mark names it');
    assert.deepEqual(await lockNodes(path), []);
  });

  test('a directory the participants may not write: releases delete without the mark, waiters list', async () => {
    const path = uniquePath('no-write');
    // Curator needs only read, create and delete on a lock directory.
    await fx.observer.mkdirp(path.slice(0, path.lastIndexOf('/')));
    await fx.observer.create(path, { acl: [{ perms: Perms.READ | Perms.CREATE | Perms.DELETE, scheme: 'world', id: 'anyone' }] });
    const sessions = await sessionsN(3);
    const mutexes = sessions.map((x) => new Mutex(x, path));
    const holder = await mutexes[0]!.acquire();
    const order: number[] = [];
    const waiters = [1, 2].map(async (i) => {
      const p = mutexes[i]!.acquire({ timeoutMs: 10000 });
      return p.then(async (h) => {
        order.push(i);
        await h.release();
      });
    });
    await queued(path, 3);
    await holder.release();
    await Promise.all(waiters);
    assert.equal(order.length, 2);
    assert.equal((await fx.observer.getData(path)).data.length, 0, 'no mark written');
    assert.deepEqual(await lockNodes(path), []);
  });

  test('a predecessor that gave up or whose session expired while waiting hands nothing over', async () => {
    const path = uniquePath('no-handoff');
    const proxy = await fx.proxy();
    // Not renewed: its acquisition must not re-enter the queue in a new session.
    const victimSession = await pool.connect(proxy.connectString, { sessionTimeoutMs: 4000, renewOnLoss: false });
    // Each of its own process: woken waiters consult the server, not this process.
    const [s0, s1, s2] = await fx.sessionsApart(3);
    // A long directory (children of other names count, and are ignored), so that woken waiters
    // consult the mark; and a stale mark, naming an earlier holder: it must count for nobody.
    await fx.observer.mkdirp(path);
    await Promise.all(Array.from({ length: MARK_MIN_CHILDREN }, (_, i) => fx.observer.create(`${path}/pad-${i}`)));
    await fx.observer.setData(path, '_c_0b1f6a52-6f0e-4a43-9d1c-5b0e7f3c2a11-lock-0000000000');
    const holder = await new Mutex(s0!, path).acquire();
    const quitter = new AbortController();
    const p1 = new Mutex(s1!, path).acquire({ signal: quitter.signal });
    p1.catch(() => undefined);
    await queued(path, 2);
    const p2 = new Mutex(victimSession, path).acquire();
    p2.catch(() => undefined);
    await queued(path, 3);
    let granted = false;
    const last = new Mutex(s2!, path).acquire().then((h) => {
      granted = true;
      return h;
    });
    await queued(path, 4);
    await waitFor(() => s2!.counters.getData >= 1, { timeoutMs: 5000, message: 'the last waiter watches its predecessor' });
    // Its predecessor's session expires while waiting: the server deletes the node, no mark.
    let reads = s2!.counters.getChildren;
    await expireSession(victimSession, proxy);
    await waitFor(() => s2!.counters.getChildren > reads, { timeoutMs: 5000, message: 'it lists again' });
    await queued(path, 3);
    // Its new predecessor gives up.
    reads = s2!.counters.getChildren;
    quitter.abort(new Error('gave up'));
    await assert.rejects(p1, /gave up/);
    await waitFor(() => s2!.counters.getChildren > reads, { timeoutMs: 5000, message: 'it lists again' });
    const hex = `0x${s2!.sessionId.toString(16)}`;
    await waitFor(async () => ((await fx.server.watchesBySession()).get(hex) ?? []).includes(holder.path), { timeoutMs: 5000, message: 'and watches the holder' });
    // Each time it read the mark first (the directory is long) and found it names another.
    assert.ok(s2!.counters.getData >= 5, `mark reads: ${s2!.counters.getData} reads`);
    assert.equal(granted, false, 'not granted while the holder holds');
    assert.ok(holder.isHeld);
    await holder.release();
    const h = await withTimeout(last, 5000, 'granted after the holder released');
    await h.release();
    assert.deepEqual(await lockNodes(path), []);
  });
});

describe('giving up leaves nothing behind', () => {
  test('timeout: LockTimeoutError, node and watch gone, the lock still works', async () => {
    const path = uniquePath('timeout');
    const [s1, s2, s3] = await sessionsN(3);
    const holder = await new Mutex(s1!, path).acquire();
    const err = await new Mutex(s2!, path).acquire({ timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(err instanceof LockTimeoutError, String(err));
    assert.equal(err.code, 'LOCK_TIMEOUT');
    assert.deepEqual(await lockNodes(path), [holder.path.slice(path.length + 1)]);
    await waitNoWatches(s2!, path);
    const next = new Mutex(s3!, path).acquire({ timeoutMs: 5000 });
    await holder.release();
    await (await next).release();
  });

  test('abort while waiting: rejects with the reason, node and watch gone', async () => {
    const path = uniquePath('abort');
    const [s1, s2] = await sessionsN(2);
    const holder = await new Mutex(s1!, path).acquire();
    const ac = new AbortController();
    const pending = new Mutex(s2!, path).acquire({ signal: ac.signal });
    await queued(path, 2);
    const reason = new Error('user gave up');
    ac.abort(reason);
    await assert.rejects(pending, (e) => e === reason);
    assert.deepEqual(await lockNodes(path), [holder.path.slice(path.length + 1)]);
    await waitNoWatches(s2!, path);
    await holder.release();
  });

  test('an already aborted signal rejects at once and creates nothing', async () => {
    const path = uniquePath('pre-aborted');
    const [s] = await sessionsN(1);
    const before = s!.counters.create;
    await assert.rejects(new Mutex(s!, path).acquire({ signal: AbortSignal.abort(new Error('no')) }), /no/);
    assert.equal(s!.counters.create, before);
  });

  test('connection loss right after the create is sent: one node for the attempt, none orphaned', async () => {
    const path = uniquePath('lost-create');
    const proxy = await fx.proxy();
    const victim = await pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
    const holder = await new Mutex(fx.observer, path).acquire();
    const m = new Mutex(victim, path, { participantId: 'victim' });
    proxy.latency(250); // replies are held long enough to cut them off
    const sentBefore = proxy.bytes.toTarget;
    const pending = m.acquire({ timeoutMs: 20000 });
    await waitFor(async () => proxy.bytes.toTarget > sentBefore && (await lockNodes(path)).length === 2, { timeoutMs: 5000, message: 'create applied' });
    proxy.dropAll(); // the create's reply is lost with the connection
    proxy.pass();
    await nextState(victim, 'RECONNECTED', 10000);
    await waitFor(async () => (await m.participants()).filter((p) => p.id === 'victim').length === 1, { timeoutMs: 5000, message: 'victim queued' });
    await holder.release();
    const h = await pending;
    assert.equal((await m.participants()).filter((p) => p.id === 'victim').length, 1, 'exactly one node for the attempt');
    await h.release();
    assert.deepEqual(await lockNodes(path), []);
  });
});

describe('tryAcquire with a signal', () => {
  test('the signal aborts while the create is applied but its answer held up (latency): rejects with the reason within its grace; the node is deleted once the answer comes', async () => {
    const path = uniquePath('try-abort');
    const proxy = await fx.proxy();
    // A 1.4 s round trip for seconds: a timeout whose loss-clock margins it fits in (docs/sessions.md).
    const victim = await pool.connect(proxy.connectString, { sessionTimeoutMs: 20_000 });
    const m = new Mutex(victim, path, { participantId: 'victim', reapParentAfterMs: 0 });
    proxy.latency(700);
    const ac = new AbortController();
    const reason = new Error('caller gave up');
    const pending = m.tryAcquire({ signal: ac.signal });
    await waitFor(async () => (await lockNodes(path)).length === 1, { timeoutMs: 20_000, message: 'the create applied' });
    ac.abort(reason);
    // At most the grace (GRACE_MS, 500 ms) a caller that gave up waits for what it sent.
    await assert.rejects(withTimeout(pending, 2000, 'tryAcquire to give up'), (err) => err === reason);
    await waitFor(async () => (await lockNodes(path)).length === 0, { timeoutMs: 10_000, message: 'the node deleted' });
    proxy.pass();
    const again = await m.tryAcquire({ signal: AbortSignal.timeout(5000) });
    assert.ok(again, 'free again');
    await again.release();
    await m.close();
    await waitNoWatches(victim, path);
  });

  test('multi-lock: the signal aborts during a member\'s try: rejects with the reason; nothing is left', async () => {
    const base = uniquePath('try-abort-multi');
    const proxy = await fx.proxy();
    const victim = await pool.connect(proxy.connectString, { sessionTimeoutMs: 20_000 });
    const multi = new MultiLock(victim, [`${base}/a`, `${base}/b`]);
    proxy.latency(700);
    const ac = new AbortController();
    const pending = multi.tryAcquire({ signal: ac.signal });
    await waitFor(async () => (await lockNodes(`${base}/a`)).length === 1, { timeoutMs: 20_000, message: "the first member's create applied" });
    ac.abort(new Error('stop'));
    await assert.rejects(withTimeout(pending, 2000, 'tryAcquire to give up'), /stop/);
    await waitFor(async () => (await lockNodes(`${base}/a`)).length + (await lockNodes(`${base}/b`)).length === 0, { timeoutMs: 10_000, message: 'nothing left' });
    proxy.pass();
    await multi.close();
  });
});

describe('failures while holding', () => {
  test("the holder's session expires: signal aborts with LockLostError, the next waiter gets the lock, the old release does not touch it", async () => {
    const path = uniquePath('expiry');
    const proxy = await fx.proxy();
    const victimSession = await pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
    const [s2] = await sessionsN(1);
    const victim = new Mutex(victimSession, path);
    const lostEvents: LockLostError[] = [];
    victim.on('lost', (_h, e) => lostEvents.push(e));
    const held = await victim.acquire();
    const next = new Mutex(s2!, path).acquire({ timeoutMs: 20000 });
    await queued(path, 2);
    await expireSession(victimSession, proxy);
    assert.ok(held.signal.aborted);
    assert.ok(held.signal.reason instanceof LockLostError);
    assert.equal(lostEvents.length, 1);
    const nextHandle = await next;
    assert.ok(nextHandle.fencingToken > held.fencingToken);
    await assert.rejects(held.release(), NotHeldError);
    assert.ok(await fx.observer.exists(nextHandle.path), "the new holder's node is untouched");
    assert.ok(nextHandle.isHeld);
    await nextHandle.release();
  });

  test('a server restart within the session timeout: the holder keeps the lock, the waiter is woken after', async () => {
    const path = uniquePath('restart');
    const [s1, s2] = await sessionsN(2, { sessionTimeoutMs: 15000 });
    const holder = await new Mutex(s1!, path).acquire();
    const next = new Mutex(s2!, path).acquire({ timeoutMs: 30000 });
    await queued(path, 2);
    const back = Promise.all([nextState(s1!, 'RECONNECTED', 15000), nextState(s2!, 'RECONNECTED', 15000)]);
    await fx.server.kill();
    await fx.server.restart();
    await back;
    assert.ok(holder.isHeld && !holder.signal.aborted, 'still held');
    await holder.release();
    const h = await withTimeout(next, 10000, 'waiter woken after the restart');
    await h.release();
  });

  test("with watchOwnNode, deleting the holder's node aborts its signal; handle.multi then refuses to commit", async () => {
    const path = uniquePath('guarded');
    const [s] = await sessionsN(1);
    await fx.observer.mkdirp(`${path}-data`);
    const h = await new Mutex(s!, path, { watchOwnNode: true }).acquire();
    await h.multi([{ type: 'setData', path: `${path}-data`, data: 'v1' }]);
    assert.equal((await fx.observer.getData(`${path}-data`)).data.toString(), 'v1');
    await fx.observer.delete(h.path); // someone deletes our lock node
    await waitFor(() => h.signal.aborted, { timeoutMs: 5000, message: 'signal aborted' });
    assert.ok(h.signal.reason instanceof LockLostError);
    await assert.rejects(h.multi([{ type: 'setData', path: `${path}-data`, data: 'v2' }]), NotHeldError);
    assert.equal((await fx.observer.getData(`${path}-data`)).data.toString(), 'v1');
    await fx.observer.deleteRecursive(`${path}-data`);
  });

  test('release() of a lock whose node someone deleted rejects with NotHeldError (never a silent no-op)', async () => {
    const path = uniquePath('release-gone');
    const [s] = await sessionsN(1);
    const m = new Mutex(s!, path);
    const lost: LockLostError[] = [];
    m.on('lost', (_h, e) => lost.push(e));
    const h = await m.acquire();
    await fx.observer.delete(h.path);
    await assert.rejects(h.release(), (e: unknown) => e instanceof NotHeldError && e.cause instanceof LockLostError);
    assert.ok(h.signal.aborted && h.signal.reason instanceof LockLostError);
    assert.equal(lost.length, 1);
    await m.close();
  });

  test('handle.multi rejects with LockLostError when the node vanished unnoticed', async () => {
    const path = uniquePath('guarded-unwatched');
    const [s] = await sessionsN(1);
    await fx.observer.mkdirp(`${path}-data`);
    const h = await new Mutex(s!, path, { watchOwnNode: false }).acquire();
    await fx.observer.delete(h.path);
    await assert.rejects(h.multi([{ type: 'setData', path: `${path}-data`, data: 'x' }]), LockLostError);
    assert.equal((await fx.observer.getData(`${path}-data`)).data.length, 0, 'nothing committed');
    assert.ok(h.signal.aborted);
    await fx.observer.deleteRecursive(`${path}-data`);
  });
});

describe('close and bad input', () => {
  test('close releases held locks and rejects pending acquisitions with ClosedError', async () => {
    const path = uniquePath('close');
    const [s1, s2] = await sessionsN(2);
    const holder = new Mutex(s1!, path);
    const h = await holder.acquire();
    const waiterMutex = new Mutex(s2!, path);
    const pending = waiterMutex.acquire();
    await queued(path, 2);
    const rejected = assert.rejects(pending, ClosedError);
    await waiterMutex.close();
    await rejected;
    await holder.close();
    assert.equal(h.isHeld, false);
    assert.deepEqual(await lockNodes(path), []);
    await assert.rejects(holder.acquire(), ClosedError);
    await assert.rejects(holder.tryAcquire(), ClosedError);
    await assert.rejects(holder.participants(), ClosedError);
    await waitNoWatches(s2!, path);
  });

  test('invalid paths, options and arguments are typed errors', async () => {
    const [s] = await sessionsN(1);
    for (const p of ['', 'locks', '/locks/', '/a//b', '/', 42]) {
      assert.throws(() => new Mutex(s!, p as string), InvalidArgumentError, `path ${String(p)}`);
    }
    assert.throws(() => new Mutex({} as ZkSession, '/x'), InvalidArgumentError);
    assert.throws(() => new Mutex(s!, '/x', { participantId: 5 as never }), InvalidArgumentError);
    assert.throws(() => new Mutex(s!, '/x', { reapParentAfterMs: -1 }), InvalidArgumentError);
    const m = new Mutex(s!, uniquePath('bad-args'));
    await assert.rejects(m.acquire({ timeoutMs: -1 }), InvalidArgumentError);
    await assert.rejects(m.acquire({ timeoutMs: Number.NaN }), InvalidArgumentError);
    await assert.rejects(m.acquire({ signal: {} as AbortSignal }), InvalidArgumentError);
    // Checked before the first request (issue 10, item 7): runExclusive('x') used to take the
    // lock, then fail with a TypeError.
    const creates = s!.counters.create;
    await assert.rejects(m.runExclusive('x' as never), InvalidArgumentError);
    await assert.rejects(m.runExclusive(() => 1, { timeoutMs: 2 ** 31 }), InvalidArgumentError);
    await assert.rejects(m.acquire(null as never), InvalidArgumentError);
    assert.equal(s!.counters.create, creates, 'no lock was taken');
    assert.equal(await fx.observer.exists(m.path), null);
  });

  test('use after the session is closed is a ClosedError', async () => {
    const s = await pool.connect(fx.server.connectString);
    const m = new Mutex(s, uniquePath('closed-session'));
    await s.close();
    await assert.rejects(m.acquire(), ClosedError);
  });
});
