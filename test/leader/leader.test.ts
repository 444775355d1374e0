// LeaderLatch and LeaderSelector against a real standalone ZooKeeper: one leader among five,
// participants() in queue order, never two leaders through the leader's close, its session's
// expiry and a server restart; the old leader is told (event and signal) and re-enters at the
// back; awaitLeadership timeout/abort; LeaderSelector terms, requeue and loss; misuse; and the
// 'lost' policy riding out a short partition that the default policy does not.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { ClosedError, IllegalStateError, InvalidArgumentError, LockLostError, LockTimeoutError } from '../../src/errors.js';
import { LeaderLatch, LeaderSelector, type LeaderLatchOptions, type ZkSession } from '../../src/index.js';
import { ChaosProxy, expireSession, waitFor, withTimeout } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath, childrenOf } from '../helpers.js';

const fx = new ServerFixture();
const { pool } = fx;

const sessionsN = (n: number, options = {}): Promise<ZkSession[]> => fx.sessionsN(n, options);

/** A session whose only route to the server is its own ChaosProxy. */
async function proxied(options = {}): Promise<{ session: ZkSession; proxy: ChaosProxy }> {
  const proxy = await fx.proxy();
  return { session: await pool.connect(proxy.connectString, options), proxy };
}

const nodes = (path: string): Promise<string[]> => childrenOf(fx.observer, path);

/** Waits until `count` nodes are in the election on `path`. */
const queued = (path: string, count: number): Promise<boolean> =>
  waitFor(async () => (await nodes(path)).length === count, { timeoutMs: 10000, message: `${count} nodes on ${path}` });

/** Participants as seen by a latch that takes no part (never started). */
const view = (path: string, options: LeaderLatchOptions = {}): LeaderLatch => new LeaderLatch(fx.observer, path, options);

/** In-process count of leaders, across latches: +1 on `elected`, -1 on `revoked`. */
interface LeaderCount {
  current: number;
  max: number;
  log: string[];
  errors: Error[];
}

function countLeaders(latches: readonly LeaderLatch[], ids: readonly string[]): LeaderCount {
  const c: LeaderCount = { current: 0, max: 0, log: [], errors: [] };
  latches.forEach((l, i) => {
    l.on('elected', () => {
      c.current++;
      c.max = Math.max(c.max, c.current);
      c.log.push(`+${ids[i]}`);
    });
    l.on('revoked', () => {
      c.current--;
      c.log.push(`-${ids[i]}`);
    });
    l.on('error', (e) => c.errors.push(e));
  });
  return c;
}

/** Starts the latches one after the other, so that queue order is start order. */
async function startInOrder(path: string, latches: readonly LeaderLatch[], already = 0): Promise<void> {
  for (const [i, l] of latches.entries()) {
    l.start();
    await queued(path, already + i + 1);
  }
}

/**
 * Waits until exactly one of `latches` is leader and participants() agrees: `expectedIds` in
 * queue order (in any order when `ordered` is false), that leader first. Resolves to the leader.
 */
async function settled(path: string, latches: readonly LeaderLatch[], ids: readonly string[], expectedIds: readonly string[], ordered = true, timeoutMs = 20000): Promise<LeaderLatch> {
  const key = (xs: readonly string[]): string => JSON.stringify(ordered ? xs : [...xs].sort());
  return waitFor(
    async () => {
      const leaders = latches.filter((l) => l.hasLeadership);
      if (leaders.length !== 1) return undefined;
      const leader = leaders[0]!;
      const parts = await view(path).participants();
      const ok =
        key(parts.map((p) => p.id)) === key(expectedIds) &&
        parts[0]?.id === ids[latches.indexOf(leader)] &&
        parts.every((p, i) => p.isLeader === (i === 0));
      return ok ? leader : undefined;
    },
    { timeoutMs, message: `one leader, participants ${expectedIds.join(',')}` },
  );
}

describe('LeaderLatch', () => {
  test('5 participants: exactly one leader; participants() and leader() are accurate', async () => {
    const path = uniquePath('five');
    const sessions = await sessionsN(5);
    const ids = sessions.map((_, i) => `p${i}`);
    const latches = sessions.map((s, i) => new LeaderLatch(s, path, { participantId: ids[i] }));
    const count = countLeaders(latches, ids);
    await startInOrder(path, latches);
    await withTimeout(latches[0]!.awaitLeadership({ timeoutMs: 5000 }), 6000, 'p0 leads');
    const leader = await settled(path, latches, ids, ids);
    assert.equal(leader, latches[0]);
    assert.deepEqual(latches.map((l) => l.hasLeadership), [true, false, false, false, false]);
    assert.ok(latches[0]!.leadershipSignal && !latches[0]!.leadershipSignal.aborted);
    assert.ok(latches.slice(1).every((l) => l.leadershipSignal === undefined));
    const parts = await latches[3]!.participants();
    assert.deepEqual(parts.map((p) => p.id), ids, 'queue order');
    assert.deepEqual(parts.map((p) => p.isLeader), [true, false, false, false, false]);
    for (const [i, p] of parts.entries()) {
      assert.match(p.path, new RegExp(`^${path}/_c_[0-9a-f-]{36}-latch-\\d{10}$`), 'Curator LeaderLatch layout');
      assert.equal((await fx.observer.exists(p.path))?.ephemeralOwner, sessions[i]!.sessionId, `${p.id}'s node belongs to its session`);
    }
    const l = await latches[4]!.leader();
    assert.deepEqual(l, parts[0]);
    assert.equal(count.max, 1);
    assert.equal(count.current, 1);
    await Promise.all(latches.map((x) => x.close()));
    assert.equal(count.current, 0, 'the leader was told on close');
    assert.deepEqual(await nodes(path), []);
    assert.deepEqual(count.errors, []);
  });

  test('watchOwnNode: a leader whose node someone deletes steps down at once; the next leads; it re-enters', async () => {
    const path = uniquePath('own-node');
    const sessions = await sessionsN(2);
    const ids = ['a', 'b'];
    const latches = sessions.map((s, i) => new LeaderLatch(s, path, { participantId: ids[i], watchOwnNode: true }));
    const count = countLeaders(latches, ids);
    await startInOrder(path, latches);
    await withTimeout(latches[0]!.awaitLeadership({ timeoutMs: 5000 }), 6000, 'a leads');
    const signal = latches[0]!.leadershipSignal!;
    const reasonToken = latches[0]!.fencingToken!;
    const revoked = new Promise<unknown>((resolve) => latches[0]!.once('revoked', resolve));
    const [first] = await latches[1]!.participants();
    await fx.observer.delete(first!.path); // someone deletes the leader's node
    const reason = await withTimeout(revoked, 5000, 'a is told');
    assert.ok(reason instanceof LockLostError && /deleted by someone else/.test(reason.message), String(reason));
    assert.ok(signal.aborted);
    await withTimeout(latches[1]!.awaitLeadership({ timeoutMs: 5000 }), 6000, 'b leads');
    // Both are told by the same deletion, through different sessions, so in this process b may
    // hear first: the deletion ends a's term on the server, which is what a fencing token shows.
    await settled(path, latches, ids, ['b', 'a']);
    assert.ok(latches[1]!.fencingToken! > reasonToken, 'the next term has a larger token');
    await Promise.all(latches.map((x) => x.close()));
    assert.deepEqual(await nodes(path), []);
    assert.deepEqual(count.errors, []);
  });

  test('fencing tokens: each term has one (elected, fencingToken, participants), increasing from term to term', async () => {
    const path = uniquePath('tokens');
    const [s1, s2] = await sessionsN(2);
    const a = new LeaderLatch(s1!, path, { participantId: 'a' });
    const b = new LeaderLatch(s2!, path, { participantId: 'b' });
    const tokenOf = (l: LeaderLatch): bigint | undefined => l.fencingToken;
    const tokens: bigint[] = [];
    for (const l of [a, b]) l.on('elected', (_signal, token) => tokens.push(token));
    assert.equal(a.fencingToken, undefined, 'no token before a term');
    a.start();
    await a.awaitLeadership({ timeoutMs: 5000 });
    b.start();
    await queued(path, 2);
    const first = tokenOf(a) as bigint;
    assert.equal(typeof first, 'bigint');
    assert.equal(b.fencingToken, undefined, 'a follower has no token');
    const parts = await b.participants();
    assert.equal(parts[0]?.czxid, first, "participants() shows the leader's token");
    assert.equal((await fx.observer.exists(parts[0]!.path))?.czxid, first, "the token is the leader node's czxid");
    await a.close();
    await b.awaitLeadership({ timeoutMs: 5000 });
    const second = tokenOf(b) as bigint;
    assert.ok(second > first, 'the next term has a larger token');
    // A new term of the same participant has a new node, so a new, larger token.
    const c = new LeaderLatch(s1!, path, { participantId: 'a2' });
    c.start();
    await queued(path, 2);
    await b.close();
    await c.awaitLeadership({ timeoutMs: 5000 });
    const third = tokenOf(c) as bigint;
    assert.ok(third > second);
    assert.deepEqual(tokens, [first, second]);
    await c.close();
    assert.equal(tokenOf(c), undefined, 'no token after the term');
    assert.deepEqual(await nodes(path), []);
  });

  test('LeaderSelector hands each term its fencing token', async () => {
    const path = uniquePath('selector-token');
    const [s1] = await sessionsN(1);
    const selector = new LeaderSelector(s1!, path, { participantId: 'x' });
    let seen: { token: bigint; czxid: bigint | undefined; same: boolean } | undefined;
    await selector.run(async (signal, term) => {
      const parts = await selector.participants();
      seen = { token: term.fencingToken, czxid: parts[0]?.czxid, same: term.signal === signal };
    });
    assert.ok(seen);
    assert.equal(seen.token, seen.czxid);
    assert.equal(seen.same, true);
    await selector.close();
    assert.deepEqual(await nodes(path), []);
  });

  test("never two leaders through the leader's close, its session's expiry and a server restart", async () => {
    const path = uniquePath('never-two');
    const routes = await Promise.all(Array.from({ length: 5 }, () => proxied({ sessionTimeoutMs: 15000 })));
    const sessions = routes.map((r) => r.session);
    const ids = sessions.map((_, i) => `p${i}`);
    const latches = sessions.map((s, i) => new LeaderLatch(s, path, { participantId: ids[i] }));
    const count = countLeaders(latches, ids);
    await startInOrder(path, latches);
    const first = await settled(path, latches, ids, ids);
    assert.equal(first, latches[0]);

    // 1. The leader closes: it is told (ClosedError), the next in line takes over.
    const firstSignal = first.leadershipSignal;
    const closedReason = new Promise<unknown>((resolve) => first.once('revoked', resolve));
    await first.close();
    assert.ok(firstSignal?.aborted);
    assert.ok((await closedReason) instanceof ClosedError);
    assert.ok(firstSignal.reason instanceof ClosedError);
    const second = await settled(path, latches.slice(1), ids.slice(1), ['p1', 'p2', 'p3', 'p4']);
    assert.equal(second, latches[1]);
    assert.equal(count.max, 1);

    // 2. The leader's session expires: the next in line takes over, the old one re-enters at the back.
    const oldSession = sessions[1]!.sessionId;
    await expireSession(sessions[1]!, routes[1]!.proxy);
    const third = await settled(path, latches.slice(1), ids.slice(1), ['p2', 'p3', 'p4', 'p1']);
    assert.equal(third, latches[2]);
    assert.notEqual(sessions[1]!.sessionId, oldSession);
    assert.equal(count.max, 1);

    // 3. The server restarts: sessions (15 s) survive; leadership moves on, still never two.
    const back = Promise.all(sessions.slice(1).map((s) => nextState(s, 'RECONNECTED', 30000)));
    await fx.server.kill();
    await fx.server.restart();
    await back;
    // Who leads next depends on which sessions reconnect first: any one, but only one.
    await settled(path, latches.slice(1), ids.slice(1), ['p1', 'p2', 'p3', 'p4'], false);
    assert.ok(count.log.lastIndexOf('-p2') > count.log.indexOf('+p2'), 'the leader was told it lost leadership');
    assert.equal(count.max, 1, `never two leaders: ${count.log.join(' ')}`);
    assert.equal(count.current, 1);

    await Promise.all(latches.map((l) => l.close()));
    assert.equal(count.current, 0);
    assert.deepEqual(await nodes(path), []);
  });

  test("a leader's close steps down within the call: told first, with close()'s reason, then its node's deletion is sent", async () => {
    const path = uniquePath('step-down');
    const [s0, s1] = await sessionsN(2);
    const leader = new LeaderLatch(s0!, path, { participantId: 'p0' });
    const next = new LeaderLatch(s1!, path, { participantId: 'p1' });
    await startInOrder(path, [leader, next]);
    await leader.awaitLeadership({ timeoutMs: 10000 });
    const node = (await view(path).participants())[0]!.path;
    // Read in the revoked listener: sent before the deletion, a session's requests are answered
    // in order, so the node is still there; the deletion was not sent yet when it ran.
    let seenByListener: Promise<unknown> | undefined;
    let deletesWhenTold = -1;
    let reason: unknown;
    leader.once('revoked', (r) => {
      reason = r;
      deletesWhenTold = s0!.counters.delete;
      seenByListener = s0!.exists(node);
    });
    const deletes = s0!.counters.delete;
    const socket = (s0 as unknown as { gen: { raw: { connectionManager: { socket: Socket } } } }).gen.raw.connectionManager.socket;
    const closing = leader.close();
    // The deletion went out in close()'s own call, not once the election loop came round,
    // and was written to the socket then, not held (corked) until the turn's reactions had run.
    assert.equal(s0!.counters.delete, deletes + 1);
    assert.equal(socket.writableCorked, 0, 'the deletion was written within the call');
    assert.equal(deletesWhenTold, deletes, 'told before the deletion was sent');
    assert.ok(reason instanceof ClosedError, String(reason));
    await closing;
    assert.notEqual(await seenByListener, null, 'the node was there when the revoked listener read it');
    assert.equal(await s0!.exists(node), null);
    await next.awaitLeadership({ timeoutMs: 10000 });
    await next.close();
    assert.deepEqual(await nodes(path), []);
  });

  test("the old leader is told when its session expires; the next in line leads; it re-enters with its new session", async () => {
    const path = uniquePath('told');
    const { session: victimSession, proxy } = await proxied({ sessionTimeoutMs: 4000 });
    const [s1, s2] = await sessionsN(2);
    const victim = new LeaderLatch(victimSession, path, { participantId: 'victim' });
    const others = [new LeaderLatch(s1!, path, { participantId: 'p1' }), new LeaderLatch(s2!, path, { participantId: 'p2' })];
    const all = [victim, ...others];
    const ids = ['victim', 'p1', 'p2'];
    const count = countLeaders(all, ids);
    const electedSignals: AbortSignal[] = [];
    const revoked: unknown[] = [];
    victim.on('elected', (signal) => electedSignals.push(signal));
    victim.on('revoked', (reason) => revoked.push(reason));
    await startInOrder(path, all);
    await settled(path, all, ids, ids);
    assert.equal(electedSignals.length, 1);
    const signal = electedSignals[0]!;
    assert.equal(victim.leadershipSignal, signal, 'leadershipSignal is the signal given to elected');
    const oldSession = victimSession.sessionId;
    const oldNode = (await view(path).participants())[0]!.path;

    await expireSession(victimSession, proxy);
    assert.equal(revoked.length, 1);
    assert.ok(revoked[0] instanceof LockLostError, String(revoked[0]));
    assert.ok(signal.aborted);
    assert.equal(signal.reason, revoked[0]);
    assert.equal(victim.hasLeadership, false);
    assert.equal(victim.leadershipSignal, undefined);

    const next = await settled(path, all, ids, ['p1', 'p2', 'victim']);
    assert.equal(next, others[0], 'the next participant in line is elected');
    const parts = await view(path).participants();
    const back = parts[2]!;
    assert.notEqual(back.path, oldNode);
    assert.equal(await fx.observer.exists(oldNode), null, 'the expired node is gone');
    assert.equal((await fx.observer.exists(back.path))?.ephemeralOwner, victimSession.sessionId, 'it re-entered with the new session');
    assert.notEqual(victimSession.sessionId, oldSession);

    // Once the others leave, it leads again, in its new session.
    await Promise.all(others.map((l) => l.close()));
    await withTimeout(victim.awaitLeadership(), 10000, 'the victim leads again');
    assert.equal(electedSignals.length, 2);
    assert.equal(count.max, 1, count.log.join(' '));
    await victim.close();
    assert.deepEqual(await nodes(path), []);
  });

  test('awaitLeadership: timeout and abort reject, the participant keeps exactly one node, close removes it', async () => {
    const path = uniquePath('await');
    const [s1, s2] = await sessionsN(2);
    const a = new LeaderLatch(s1!, path, { participantId: 'A' });
    const b = new LeaderLatch(s2!, path, { participantId: 'B' });
    a.start();
    await a.awaitLeadership({ timeoutMs: 5000 });
    await a.awaitLeadership({ timeoutMs: 0 }); // already leader: resolves at once
    b.start();
    await queued(path, 2);

    const err = await b.awaitLeadership({ timeoutMs: 200 }).catch((e: unknown) => e);
    assert.ok(err instanceof LockTimeoutError, String(err));
    assert.equal(err.code, 'LOCK_TIMEOUT');
    const ac = new AbortController();
    const waiting = b.awaitLeadership({ signal: ac.signal });
    const reason = new Error('stop waiting');
    ac.abort(reason);
    await assert.rejects(waiting, (e) => e === reason);
    const pre = new Error('already aborted');
    await assert.rejects(b.awaitLeadership({ signal: AbortSignal.abort(pre) }), (e) => e === pre);

    // B stays in the election (by design), with exactly one node.
    const parts = await view(path).participants();
    assert.deepEqual(parts.map((p) => p.id), ['A', 'B']);
    assert.equal((await nodes(path)).length, 2);
    assert.equal(b.hasLeadership, false);

    // close() while awaiting rejects with ClosedError and removes B's node.
    const closing = b.awaitLeadership();
    const closedRejection = assert.rejects(closing, ClosedError);
    await b.close();
    await closedRejection;
    assert.deepEqual((await view(path).participants()).map((p) => p.id), ['A']);
    assert.ok(a.hasLeadership);
    await a.close();
    assert.deepEqual(await nodes(path), []);
  });

  test('close() right when leadership is being granted always resolves, and never leaves a leader behind', async () => {
    const [s1, s2] = await sessionsN(2);
    // The grant and close() race differently each time; before the fix about 1 in 50 hung.
    for (let i = 0; i < 150; i++) {
      const path = uniquePath(`grant-race-${i}`);
      const a = new LeaderLatch(s1!, path);
      a.start();
      await a.awaitLeadership({ timeoutMs: 10000 });
      const b = new LeaderLatch(s2!, path);
      b.start();
      const closingA = a.close();
      if (i % 3 === 1) await Promise.resolve();
      if (i % 3 === 2) await new Promise((r) => setImmediate(r));
      await withTimeout(b.close(), 5000, `close() of the latch being granted (round ${i})`);
      await closingA;
      assert.equal(b.hasLeadership, false);
      await waitFor(async () => (await nodes(path)).length === 0, { timeoutMs: 5000, message: 'no node left' });
    }
  });

  test('misuse: start twice, await before start, use after close, invalid arguments', async () => {
    const path = uniquePath('misuse');
    const [s] = await sessionsN(1);
    const latch = new LeaderLatch(s!, path);
    await assert.rejects(latch.awaitLeadership(), IllegalStateError);
    const err = await latch.awaitLeadership().catch((e: unknown) => e);
    assert.equal((err as IllegalStateError).code, 'ILLEGAL_STATE');
    latch.start();
    assert.throws(() => latch.start(), IllegalStateError);
    await latch.awaitLeadership({ timeoutMs: 5000 });
    // An aborted signal rejects with its reason, also while leader (issue 10, item 8).
    const reason = new Error('no longer interested');
    await assert.rejects(latch.awaitLeadership({ signal: AbortSignal.abort(reason) }), (e) => e === reason);
    assert.ok(latch.hasLeadership);
    await assert.rejects(latch.awaitLeadership(null as never), InvalidArgumentError);
    await assert.rejects(latch.awaitLeadership({ timeoutMs: -1 }), InvalidArgumentError);
    await assert.rejects(latch.awaitLeadership({ timeoutMs: Number.NaN }), InvalidArgumentError);
    await assert.rejects(latch.awaitLeadership({ signal: {} as AbortSignal }), InvalidArgumentError);
    await latch.close();
    await latch.close(); // idempotent
    assert.throws(() => latch.start(), ClosedError);
    await assert.rejects(latch.awaitLeadership(), ClosedError);
    await assert.rejects(latch.participants(), ClosedError);
    await assert.rejects(latch.leader(), ClosedError);
    assert.deepEqual(await nodes(path), []);

    for (const p of ['', 'leader', '/leader/', '/a//b', '/', 42, undefined]) {
      assert.throws(() => new LeaderLatch(s!, p as string), InvalidArgumentError, `latch path ${String(p)}`);
      assert.throws(() => new LeaderSelector(s!, p as string), InvalidArgumentError, `selector path ${String(p)}`);
    }
    for (const policy of ['bogus', '', 'SUSPENDED', 1]) {
      assert.throws(() => new LeaderLatch(s!, '/x', { policy: policy as never }), InvalidArgumentError, `policy ${String(policy)}`);
      assert.throws(() => new LeaderSelector(s!, '/x', { policy: policy as never }), InvalidArgumentError, `selector policy ${String(policy)}`);
    }
    assert.throws(() => new LeaderLatch(s!, '/x', { participantId: 5 as never }), InvalidArgumentError);
    assert.throws(() => new LeaderLatch(s!, '/x', { lockName: 'a/b' }), InvalidArgumentError);
    assert.throws(() => new LeaderLatch(s!, '/x', { lockName: '' }), InvalidArgumentError);
    assert.throws(() => new LeaderLatch(s!, '/x', null as never), InvalidArgumentError);
    assert.throws(() => new LeaderLatch({} as ZkSession, '/x'), InvalidArgumentError);
    assert.throws(() => new LeaderSelector({} as ZkSession, '/x'), InvalidArgumentError);

    // A latch on a closed session cannot start.
    const closedSession = await pool.connect(fx.server.connectString);
    const orphan = new LeaderLatch(closedSession, uniquePath('closed-session'));
    await closedSession.close();
    assert.throws(() => orphan.start(), ClosedError);
  });
});

describe('LeaderLatch.start(): resolves once the node is in the election', () => {
  test('a leader and a follower: participants() lists each at once after its start() resolved', async () => {
    const path = uniquePath('start-ready');
    const [s1, s2] = await sessionsN(2);
    const a = new LeaderLatch(s1!, path, { participantId: 'A' });
    const b = new LeaderLatch(s2!, path, { participantId: 'B' });
    await a.start();
    assert.deepEqual((await a.participants()).map((p) => p.id), ['A']);
    await b.start();
    // B's start resolved while B follows: it is in the election, not elected.
    assert.equal(b.hasLeadership, false);
    assert.deepEqual((await b.participants()).map((p) => [p.id, p.isLeader]), [['A', true], ['B', false]]);
    await a.awaitLeadership({ timeoutMs: 5000 });
    // With a bound that is not needed: resolves as well, and the bound ends with it.
    const c = new LeaderLatch(s1!, path, { participantId: 'C' });
    const ac = new AbortController();
    await c.start({ timeoutMs: 5000, signal: ac.signal });
    ac.abort(new Error('too late to matter'));
    assert.deepEqual((await view(path).participants()).map((p) => p.id), ['A', 'B', 'C'], 'aborting after start() resolved changes nothing');
    await Promise.all([a.close(), b.close(), c.close()]);
    assert.deepEqual(await nodes(path), []);
  });

  test('blackholed during start(): rejects with LockTimeoutError in time, the latch is closed, nothing is left once the server answers', async () => {
    const path = uniquePath('start-blackhole');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 20_000 });
    // The directory exists, so the held create makes our node once it gets through.
    await fx.observer.mkdirp(path);
    const latch = new LeaderLatch(session, path, { participantId: 'X' });
    const errors: Error[] = [];
    latch.on('error', (e) => errors.push(e));
    proxy.blackhole();
    const creates = session.counters.create;
    const started = performance.now();
    const outcome = latch.start({ timeoutMs: 800 }).catch((e: unknown) => e);
    await waitFor(() => session.counters.create > creates, { timeoutMs: 5000, message: 'the create was sent into the blackhole' });
    const err = await outcome;
    const took = performance.now() - started;
    assert.ok(err instanceof LockTimeoutError, String(err));
    assert.equal(err.path, path);
    assert.ok(took >= 790 && took < 3000, `rejected after ${took.toFixed(0)} ms`);
    // Gave up: closed, as by close().
    assert.throws(() => latch.start(), ClosedError);
    await assert.rejects(latch.awaitLeadership(), ClosedError);
    assert.equal(latch.hasLeadership, false);
    // The held create reaches the server once the partition heals: its node is deleted then.
    const deletes = session.counters.delete;
    proxy.pass();
    await withTimeout(latch.close(), 15_000, 'close() after the partition healed');
    assert.ok(session.counters.delete > deletes, 'the node the held create made was deleted');
    assert.deepEqual(await nodes(path), [], 'no node left');
    assert.equal(session.activeWatchCount, 0, 'no watch left');
    assert.deepEqual(errors, []);
    assert.equal(session.state, 'CONNECTED', 'the session itself was never in doubt');
  });

  test("start({ signal }) aborted while its create is held: rejects with the signal's reason; nothing is left", async () => {
    const path = uniquePath('start-abort');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 20_000 });
    await fx.observer.mkdirp(path);
    const latch = new LeaderLatch(session, path);
    proxy.blackhole();
    const creates = session.counters.create;
    const ac = new AbortController();
    const outcome = latch.start({ signal: ac.signal }).catch((e: unknown) => e);
    await waitFor(() => session.counters.create > creates, { timeoutMs: 5000, message: 'the create was sent into the blackhole' });
    const reason = new Error('shutting down');
    ac.abort(reason);
    assert.equal(await withTimeout(outcome, 1500, 'start() after the abort'), reason);
    const deletes = session.counters.delete;
    proxy.pass();
    await withTimeout(latch.close(), 15_000, 'close() after the partition healed');
    assert.ok(session.counters.delete > deletes, 'the node the held create made was deleted');
    assert.deepEqual(await nodes(path), []);
    assert.equal(session.activeWatchCount, 0);
    // An already aborted signal: nothing is sent at all.
    const sent = session.counters.create + session.counters.getChildren;
    const pre = new Error('aborted before');
    const never = new LeaderLatch(session, path);
    await assert.rejects(never.start({ signal: AbortSignal.abort(pre) }), (e) => e === pre);
    assert.equal(session.counters.create + session.counters.getChildren, sent);
    assert.throws(() => never.start(), ClosedError);
  });

  test('close() while start() waits: start() rejects with ClosedError; nothing is left', async () => {
    const path = uniquePath('start-close');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 20_000 });
    const latch = new LeaderLatch(session, path);
    proxy.blackhole();
    const creates = session.counters.create;
    const outcome = latch.start().catch((e: unknown) => e);
    await waitFor(() => session.counters.create > creates, { timeoutMs: 5000, message: 'the create was sent into the blackhole' });
    const closing = latch.close();
    assert.ok((await outcome) instanceof ClosedError);
    proxy.pass();
    await withTimeout(closing, 15_000, 'close() after the partition healed');
    assert.deepEqual(await nodes(path), []);
  });

  test('the session is lost before the node could be made (renewOnLoss off): start() rejects with SessionExpiredError', async () => {
    const path = uniquePath('start-lost');
    const { session, proxy } = await proxied({ sessionTimeoutMs: 1500, renewOnLoss: false });
    const latch = new LeaderLatch(session, path);
    latch.on('error', () => undefined);
    proxy.blackhole();
    const outcome = latch.start().catch((e: unknown) => e);
    const err = await withTimeout(outcome, 10_000, 'start() once the session is lost');
    assert.equal((err as { code?: string }).code, 'SESSION_EXPIRED', String(err));
    proxy.pass();
    await latch.close();
    await waitFor(async () => (await nodes(path)).length === 0, { timeoutMs: 10_000, message: 'the node, if any, went with the session' });
  });

  test('a start() nobody awaits never rejects unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const [s] = await sessionsN(1);
      const latch = new LeaderLatch(s!, uniquePath('start-unawaited'));
      void latch.start();
      await latch.close(); // the start rejects with ClosedError, unobserved
      const early = new LeaderLatch(s!, uniquePath('start-unawaited'));
      void early.start({ timeoutMs: 0 }); // gives up at once: closed
      await early.close();
      // Two turns of the event loop: Node reports unhandled rejections after the microtasks.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('LeaderSelector', () => {
  test('run(fn): fn runs only while leader; the second selector runs only after the first finished', async () => {
    const path = uniquePath('selector');
    const [s1, s2] = await sessionsN(2);
    const a = new LeaderSelector(s1!, path, { participantId: 'A' });
    const b = new LeaderSelector(s2!, path, { participantId: 'B' });
    const events: string[] = [];
    let releaseA!: () => void;
    const aGate = new Promise<void>((resolve) => (releaseA = resolve));
    let aStarted!: () => void;
    const aRunning = new Promise<void>((resolve) => (aStarted = resolve));
    const aRun = a.run(async (signal) => {
      events.push('A start');
      assert.ok(a.hasLeadership, 'A leads while its fn runs');
      assert.equal(signal.aborted, false);
      aStarted();
      await aGate;
      assert.ok(a.hasLeadership, 'A still leads at the end of its fn');
      events.push('A end');
    });
    await withTimeout(aRunning, 5000, "A's fn");
    const bRun = b.run((signal) => {
      events.push('B start');
      assert.ok(b.hasLeadership, 'B leads while its fn runs');
      assert.equal(a.hasLeadership, false);
      assert.equal(signal.aborted, false);
      events.push('B end');
    });
    await queued(path, 2);
    const parts = await b.participants();
    assert.deepEqual(parts.map((p) => [p.id, p.isLeader]), [['A', true], ['B', false]]);
    assert.match(parts[0]!.path, new RegExp(`^${path}/_c_[0-9a-f-]{36}-lock-\\d{10}$`), "Curator LeaderSelector layout (lock-)");
    assert.equal(b.hasLeadership, false);
    assert.deepEqual(events, ['A start']);
    releaseA();
    await withTimeout(aRun, 5000, 'A.run');
    await withTimeout(bRun, 5000, 'B.run');
    assert.deepEqual(events, ['A start', 'A end', 'B start', 'B end']);
    assert.equal(a.hasLeadership, false);
    assert.equal(b.hasLeadership, false);
    assert.deepEqual(await nodes(path), [], 'each selector left the election after its term');
    await Promise.all([a.close(), b.close()]);
  });

  test('requeue: two selectors alternate terms; stopped by close() while waiting and by an AbortSignal during a term', async () => {
    const path = uniquePath('requeue');
    const [s1, s2] = await sessionsN(2);
    const a = new LeaderSelector(s1!, path, { participantId: 'A' });
    const b = new LeaderSelector(s2!, path, { participantId: 'B' });
    const terms: string[] = [];
    const termSignals: AbortSignal[] = [];
    let active = 0;
    let maxActive = 0;
    let endTerm: (() => void) | undefined;
    const fnFor = (name: string, self: LeaderSelector) => async (signal: AbortSignal) => {
      terms.push(name);
      termSignals.push(signal);
      active++;
      maxActive = Math.max(maxActive, active);
      assert.ok(self.hasLeadership, `${name} leads during its term`);
      await new Promise<void>((resolve) => {
        endTerm = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      active--;
    };
    const stopA = new AbortController();
    const aRun = a.run(fnFor('A', a), { requeue: true, signal: stopA.signal });
    await waitFor(() => terms.length === 1, { timeoutMs: 5000, message: "A's first term" });
    const bRun = b.run(fnFor('B', b), { requeue: true });
    await queued(path, 2);
    for (let k = 1; k <= 4; k++) {
      endTerm!();
      await waitFor(() => terms.length === k + 1, { timeoutMs: 5000, message: `term ${k + 1}` });
      await queued(path, 2); // the one whose term ended is queued again, behind
    }
    assert.deepEqual(terms, ['A', 'B', 'A', 'B', 'A'], 'terms alternate');
    // B is waiting: close() stops it, and its run() resolves.
    await b.close();
    await withTimeout(bRun, 5000, 'B.run after close');
    assert.equal(b.hasLeadership, false);
    assert.equal((await nodes(path)).length, 1, "B's node is gone");
    // A is in a term: aborting its signal aborts the term's signal; run() resolves.
    const reason = new Error('stop A');
    stopA.abort(reason);
    await withTimeout(aRun, 5000, 'A.run after abort');
    const last = termSignals[termSignals.length - 1]!;
    assert.ok(last.aborted);
    assert.equal(last.reason, reason);
    assert.equal(maxActive, 1, 'never two terms at once');
    assert.ok(terms.filter((t) => t === 'A').length >= 2 && terms.filter((t) => t === 'B').length >= 2);
    assert.equal(terms.length, 5, 'no term after the stop');
    assert.deepEqual(await nodes(path), []);
    await a.close();
  });

  test("fn's signal aborts when the leader's session expires; the next selector runs after", async () => {
    const path = uniquePath('selector-expiry');
    const { session: victimSession, proxy } = await proxied({ sessionTimeoutMs: 4000 });
    const [s2] = await sessionsN(1);
    const a = new LeaderSelector(victimSession, path, { participantId: 'A' });
    const b = new LeaderSelector(s2!, path, { participantId: 'B' });
    let aSignal: AbortSignal | undefined;
    let aEnded = false;
    const aRun = a.run(async (signal) => {
      aSignal = signal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      aEnded = true;
    });
    await waitFor(() => aSignal, { timeoutMs: 5000, message: "A's term" });
    let bSawAEnded: boolean | undefined;
    const bRun = b.run(() => {
      bSawAEnded = aEnded;
    });
    await queued(path, 2);
    assert.equal(aSignal!.aborted, false);
    await expireSession(victimSession, proxy);
    assert.ok(aSignal!.aborted, "A's signal aborted");
    assert.ok(aSignal!.reason instanceof LockLostError, String(aSignal!.reason));
    await withTimeout(aRun, 10000, 'A.run returns after its fn did');
    await withTimeout(bRun, 10000, 'B runs after the expiry');
    assert.equal(bSawAEnded, true, "B's term began after A's fn had returned");
    assert.deepEqual(await nodes(path), []);
    await Promise.all([a.close(), b.close()]);
  });

  test('stopping: with requeue an abort while waiting resolves run(); without requeue it rejects with the reason', async () => {
    const path = uniquePath('selector-stop');
    const [s1, s2, s3] = await sessionsN(3);
    const holder = new LeaderSelector(s1!, path);
    let release!: () => void;
    const holding = holder.run(() => new Promise<void>((r) => (release = r)));
    await queued(path, 1);
    const stopA = new AbortController();
    const a = new LeaderSelector(s2!, path).run(() => assert.fail('never leader'), { requeue: true, signal: stopA.signal });
    const stopB = new AbortController();
    const b = new LeaderSelector(s3!, path).run(() => assert.fail('never leader'), { signal: stopB.signal });
    await queued(path, 3);
    stopA.abort(new Error('stop A'));
    await a; // resolves
    const reason = new Error('stop B');
    stopB.abort(reason);
    await assert.rejects(b, (e) => e === reason);
    release();
    await holding;
    await waitFor(async () => (await fx.observer.exists(path)) === null || (await fx.observer.getChildren(path)).children.length === 0, { timeoutMs: 5000, message: 'no node left' });
  });

  test('misuse: run twice, run after close, a non-function', async () => {
    const path = uniquePath('selector-misuse');
    const [s] = await sessionsN(1);
    const sel = new LeaderSelector(s!, path);
    await assert.rejects(sel.run('nope' as never), InvalidArgumentError);
    await assert.rejects(sel.run(() => undefined, { signal: {} as AbortSignal }), InvalidArgumentError);
    await assert.rejects(sel.run(() => undefined, { requeue: 'false' as never }), InvalidArgumentError);
    const stopped = new Error('stopped before the run');
    await assert.rejects(sel.run(() => undefined, { requeue: true, signal: AbortSignal.abort(stopped) }), (e) => e === stopped);
    let termSignal: AbortSignal | undefined;
    const running = sel.run((signal) => {
      termSignal = signal;
      return new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    });
    const again = await sel.run(() => undefined).catch((e: unknown) => e);
    assert.ok(again instanceof IllegalStateError, String(again));
    assert.equal(again.code, 'ILLEGAL_STATE');
    await waitFor(() => termSignal, { timeoutMs: 5000, message: 'term' });
    await sel.close();
    await withTimeout(running, 5000, 'run resolves after close');
    assert.ok(termSignal!.aborted, 'close aborts the running term');
    await assert.rejects(sel.run(() => undefined), ClosedError);
    assert.deepEqual(await nodes(path), []);
  });
});

describe("policy: 'lost' vs 'suspended'", () => {
  /** Leader behind a proxy (8 s session) and a follower; blackholes the leader until SUSPENDED, then heals. */
  async function partitionLeader(policy: LeaderLatchOptions['policy']) {
    const path = uniquePath(`policy-${policy ?? 'default'}`);
    const { session, proxy } = await proxied({ sessionTimeoutMs: 8000 });
    const [s2] = await sessionsN(1);
    const leader = new LeaderLatch(session, path, { participantId: 'L', ...(policy ? { policy } : {}) });
    const other = new LeaderLatch(s2!, path, { participantId: 'O' });
    const count = countLeaders([leader, other], ['L', 'O']);
    const revoked: unknown[] = [];
    leader.on('revoked', (r) => revoked.push(r));
    leader.start();
    await leader.awaitLeadership({ timeoutMs: 5000 });
    other.start();
    await queued(path, 2);
    const signal = leader.leadershipSignal!;
    const sessionId = session.sessionId;
    const suspended = nextState(session, 'SUSPENDED', 15000);
    proxy.blackhole();
    await suspended;
    const reconnected = nextState(session, 'RECONNECTED', 15000);
    proxy.pass();
    await reconnected;
    assert.equal(session.sessionId, sessionId, 'the same session came back');
    return { path, leader, other, count, revoked, signal };
  }

  test("'lost': a short partition (shorter than the session timeout) does not revoke leadership", async () => {
    const { path, leader, other, count, revoked, signal } = await partitionLeader('lost');
    assert.deepEqual(revoked, []);
    assert.ok(leader.hasLeadership);
    assert.equal(signal.aborted, false);
    assert.equal(leader.leadershipSignal, signal, 'the same term');
    assert.equal(other.hasLeadership, false);
    assert.deepEqual((await view(path).participants()).map((p) => [p.id, p.isLeader]), [['L', true], ['O', false]]);
    assert.equal(count.max, 1);
    await Promise.all([leader.close(), other.close()]);
    assert.deepEqual(await nodes(path), []);
  });

  test('default policy: the same partition revokes leadership at suspension; the other participant takes over', async () => {
    const { path, leader, other, count, revoked, signal } = await partitionLeader(undefined);
    assert.equal(revoked.length, 1);
    assert.ok(revoked[0] instanceof LockLostError, String(revoked[0]));
    assert.ok(signal.aborted);
    const next = await settled(path, [leader, other], ['L', 'O'], ['O', 'L']);
    assert.equal(next, other);
    assert.equal(count.max, 1, count.log.join(' '));
    await Promise.all([leader.close(), other.close()]);
    assert.deepEqual(await nodes(path), []);
  });
});
