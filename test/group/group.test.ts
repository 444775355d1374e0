// GroupMember against a real ZooKeeper: members see each other join, change and leave; a member
// whose session expires leaves the others' views and comes back with its next session; a node
// deleted by someone else comes back; a partitioned member stays in the others' views until the
// server expires its session, and its own view is stale, then re-read after the partition;
// a start that times out or is aborted leaves nothing; bad input and use after close are refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GroupMember, type GroupView } from '../../src/group/index.js';
import type { ZkSession } from '../../src/client/session.js';
import { ClosedError, IllegalStateError, InvalidArgumentError, OperationTimeoutError } from '../../src/errors.js';
import { expireSession, waitFor, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

const ids = (view: GroupView): string[] => [...view.keys()].sort();

/** Waits until `member`'s view holds exactly `expected` (sorted ids). */
async function viewIs(member: GroupMember, expected: string[], timeoutMs = 15_000): Promise<void> {
  const want = [...expected].sort();
  await waitFor(() => JSON.stringify(ids(member.currentMembers())) === JSON.stringify(want), { timeoutMs, message: `${member.memberId} sees ${want.join(',')} (sees ${ids(member.currentMembers()).join(',')})` });
}

/** Resolves with the time `member` next emits `event` for `id`. */
function next(member: GroupMember, event: 'joined' | 'left' | 'changed', id: string, timeoutMs = 20_000): Promise<number> {
  let listener: ((who: string) => void) | undefined;
  const seen = new Promise<number>((resolve) => {
    listener = (who) => {
      if (who === id) resolve(performance.now());
    };
    member.on(event as 'joined', listener);
  });
  return withTimeout(seen, timeoutMs, `${member.memberId}: ${event} ${id}`).finally(() => member.off(event as 'joined', listener));
}

/** Waits until the server holds no watch of `session` under `path` and the session no listener. */
async function noWatches(session: ZkSession, path: string): Promise<void> {
  await fx.waitNoWatches(session, path);
  assert.equal(session.activeWatchCount, 0);
}

describe('GroupMember', () => {
  test('members see each other join, change their payload and leave; close leaves nothing', async () => {
    const path = uniquePath('group');
    const baseline = await fx.watchTotal();
    const sessions = await fx.sessionsApart(3);
    const [a, b, c] = sessions.map((s, i) => new GroupMember(s, path, `m${i}`, `payload-${i}`)) as [GroupMember, GroupMember, GroupMember];
    const joinedSeenByA: string[] = [];
    a.on('joined', (id) => joinedSeenByA.push(id));
    await a.start({ timeoutMs: 10_000 });
    assert.deepEqual(ids(a.currentMembers()), ['m0'], 'a member always sees itself');
    assert.equal(a.state, 'STARTED');
    assert.equal(a.synced, true);
    const bSeen = next(a, 'joined', 'm1');
    await b.start({ timeoutMs: 10_000 });
    await bSeen;
    assert.deepEqual(ids(b.currentMembers()), ['m0', 'm1'], 'start resolves with the view loaded');
    await c.start({ timeoutMs: 10_000 });
    for (const m of [a, b, c]) await viewIs(m, ['m0', 'm1', 'm2']);
    assert.deepEqual(joinedSeenByA.sort(), ['m0', 'm1', 'm2']);
    assert.equal(b.currentMembers().get('m2')?.toString(), 'payload-2');
    // The node is Curator's: <path>/<id>, EPHEMERAL, with the payload.
    const node = await fx.observer.getData(`${path}/m2`);
    assert.equal(node.data.toString(), 'payload-2');
    assert.equal(node.stat.ephemeralOwner, sessions[2]!.sessionId);

    const changed = next(a, 'changed', 'm2');
    await c.setThisData('moved');
    await changed;
    assert.equal(a.currentMembers().get('m2')?.toString(), 'moved');
    assert.equal((await fx.observer.getData(`${path}/m2`)).data.toString(), 'moved');

    const leftA = next(a, 'left', 'm1');
    const leftC = next(c, 'left', 'm1');
    await b.close();
    await Promise.all([leftA, leftC]);
    assert.deepEqual(await fx.children(path), ['m0', 'm2']);
    assert.equal(b.state, 'CLOSED');
    await noWatches(sessions[1]!, path);
    await Promise.all([a.close(), c.close()]);
    assert.deepEqual(await fx.children(path), []);
    for (const s of sessions) await noWatches(s, path);
    // The members' child watches on the group's directory too (the sessions are still open).
    await fx.waitWatchTotal(baseline, 'back to the baseline');
  });

  test('views(): the current view first, then each new one; bounded, it keeps the latest', async () => {
    const path = uniquePath('group-views');
    const sessions = await fx.sessionsApart(2);
    await using a = new GroupMember(sessions[0]!, path, 'a');
    await a.start({ timeoutMs: 10_000 });
    const it = a.views({ bufferSize: 1 });
    const live = a.views();
    const first = await it.next();
    assert.deepEqual(ids(first.value as GroupView), ['a']);
    const b = new GroupMember(sessions[1]!, path, 'b');
    await b.start({ timeoutMs: 10_000 });
    await viewIs(a, ['a', 'b']);
    await a.setThisData('x');
    await viewIs(a, ['a', 'b']);
    await waitFor(() => a.currentMembers().get('a')?.toString() === 'x', { timeoutMs: 10_000, message: 'our own change read back' });
    // Several views came while nobody read `it`: one slot, the newest.
    const latest = await it.next();
    assert.deepEqual(ids(latest.value as GroupView), ['a', 'b']);
    assert.equal((latest.value as GroupView).get('a')?.toString(), 'x');
    // The unbounded-enough one has them in order.
    const seen: string[][] = [];
    for (let i = 0; i < 2; i++) seen.push(ids(((await live.next()).value as GroupView) ?? new Map()));
    assert.deepEqual(seen[0], ['a']);
    assert.deepEqual(seen[1], ['a', 'b']);
    // return() from elsewhere (a shutdown) ends a next() that is waiting.
    const pending = a.views();
    await pending.next();
    const waiting = pending.next();
    await pending.return?.();
    assert.deepEqual(await withTimeout(waiting, 1000, 'the waiting next() ends'), { value: undefined, done: true });
    await b.close();
    await a.close();
    // Iterators end at close, after what they hold (b's leave may still be buffered in `it`).
    const rest: GroupView[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
    assert.ok(rest.length <= 1, 'a one-slot iterator holds at most one view');
    for (const v of rest) assert.deepEqual(ids(v), ['a']);
    assert.equal((await a.views().next()).done, true);
  });

  test('a member whose session expires leaves the others and comes back with its next session', async () => {
    const path = uniquePath('group-expiry');
    const [other] = await fx.sessionsApart(1);
    const proxy = await fx.proxy();
    const victimSession = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
    await using watcher = new GroupMember(other!, path, 'watcher');
    await using victim = new GroupMember(victimSession, path, 'victim', 'v1');
    await watcher.start({ timeoutMs: 10_000 });
    await victim.start({ timeoutMs: 10_000 });
    await viewIs(watcher, ['victim', 'watcher']);
    const first = victimSession.sessionId;
    const left = next(watcher, 'left', 'victim');
    const back = next(watcher, 'joined', 'victim', 30_000);
    await expireSession(victimSession, proxy);
    await left;
    await back;
    const node = await fx.observer.getData(`${path}/victim`);
    assert.notEqual(victimSession.sessionId, first);
    assert.equal(node.stat.ephemeralOwner, victimSession.sessionId, 're-created by the new session');
    assert.equal(node.data.toString(), 'v1');
    // The victim's own view is re-read in the new session.
    await viewIs(victim, ['victim', 'watcher']);
    await waitFor(() => victim.synced, { timeoutMs: 10_000, message: 'the victim is synced again' });
    assert.equal(victim.currentMembers().get('victim')?.toString(), 'v1');
  });

  test('our node deleted by someone else comes back, and the others see it back', async () => {
    const path = uniquePath('group-deleted');
    const sessions = await fx.sessionsApart(2);
    await using a = new GroupMember(sessions[0]!, path, 'a', 'pa');
    await using b = new GroupMember(sessions[1]!, path, 'b', 'pb');
    await a.start({ timeoutMs: 10_000 });
    await b.start({ timeoutMs: 10_000 });
    await viewIs(a, ['a', 'b']);
    const before = (await fx.observer.exists(`${path}/b`))!.czxid;
    await fx.observer.delete(`${path}/b`);
    await waitFor(async () => {
      const stat = await fx.observer.exists(`${path}/b`);
      return stat !== null && stat.czxid !== before;
    }, { timeoutMs: 10_000, message: 'b re-created' });
    const stat = (await fx.observer.getData(`${path}/b`)).stat;
    assert.equal(stat.ephemeralOwner, sessions[1]!.sessionId);
    await viewIs(a, ['a', 'b']);
    await waitFor(() => a.currentMembers().get('b')?.toString() === 'pb', { timeoutMs: 10_000, message: 'a sees b with its payload' });
    // b's own copy holds the new node (not only the synthesized self).
    await waitFor(async () => b.synced && (await fx.observer.exists(`${path}/b`))?.czxid === stat.czxid, { timeoutMs: 10_000, message: 'b synced' });
  });

  test('a partitioned member: the others see it until its session expires; its view is stale, then re-read', async () => {
    const path = uniquePath('group-partition');
    const sessionTimeoutMs = 4000;
    const sessions = await fx.sessionsApart(2);
    const proxy = await fx.proxy();
    const victimSession = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs });
    await using a = new GroupMember(sessions[0]!, path, 'a');
    await using victim = new GroupMember(victimSession, path, 'victim');
    await a.start({ timeoutMs: 10_000 });
    await victim.start({ timeoutMs: 10_000 });
    await viewIs(a, ['a', 'victim']);
    const stale = new Promise<number>((resolve) => victim.once('stale', () => resolve(performance.now())));
    const left = next(a, 'left', 'victim', 3 * sessionTimeoutMs + 5000);
    const cut = performance.now();
    proxy.blackhole();
    // While cut off: a newcomer joins, which the victim cannot see.
    const late = new GroupMember(sessions[1]!, path, 'late');
    await late.start({ timeoutMs: 10_000 });
    await viewIs(a, ['a', 'late', 'victim']);
    assert.deepEqual(ids(late.currentMembers()), ['a', 'late', 'victim'], 'the newcomer sees the partitioned member: its session lives');
    const leftAt = await left;
    const gone = leftAt - cut;
    // The server expires it one session timeout after its last touch (pings every third of it).
    assert.ok(gone >= sessionTimeoutMs / 2, `left ${gone} ms after the cut: not before its session could expire`);
    assert.ok(gone <= sessionTimeoutMs + 4000, `left ${gone} ms after the cut: within the session timeout and a margin`);
    const staleAt = await withTimeout(stale, sessionTimeoutMs, 'the victim goes stale');
    assert.ok(staleAt - cut <= sessionTimeoutMs, 'the victim knows its view is stale within its session timeout');
    assert.equal(victim.synced, false);
    assert.deepEqual(ids(victim.currentMembers()), ['a', 'victim'], 'a stale view is kept as it was, without the newcomer');
    await late.close();
    proxy.pass();
    // After the partition: a new session, our node again, the view re-read in full.
    const back = next(a, 'joined', 'victim', 20_000);
    await back;
    await waitFor(() => victim.synced, { timeoutMs: 15_000, message: 'the victim synced again' });
    await viewIs(victim, ['a', 'victim']);
    assert.equal((await fx.observer.exists(`${path}/victim`))?.ephemeralOwner, victimSession.sessionId);
  });

  test('the view after a reconnect (same session): what changed meanwhile is read again', async () => {
    const path = uniquePath('group-reconnect');
    const sessions = await fx.sessionsApart(2);
    const proxy = await fx.proxy();
    const observerSession = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 8000 });
    await using observer = new GroupMember(observerSession, path, 'observer');
    const leaver = new GroupMember(sessions[0]!, path, 'leaver');
    await observer.start({ timeoutMs: 10_000 });
    await leaver.start({ timeoutMs: 10_000 });
    await viewIs(observer, ['leaver', 'observer']);
    const first = observerSession.sessionId;
    const stale = new Promise<void>((resolve) => observer.once('stale', resolve));
    proxy.blackhole();
    // While the observer is cut off (its session lives): one leaves, one joins.
    await leaver.close();
    await using joiner = new GroupMember(sessions[1]!, path, 'joiner');
    await joiner.start({ timeoutMs: 10_000 });
    await withTimeout(stale, 10_000, 'the observer goes stale');
    assert.deepEqual(ids(observer.currentMembers()), ['leaver', 'observer'], 'kept as it was while cut off');
    // Read inside the listener: the view is brought up to date before `synced`.
    const synced = new Promise<string[]>((resolve) => observer.once('synced', () => resolve(ids(observer.currentMembers()))));
    proxy.pass();
    assert.deepEqual(await withTimeout(synced, 10_000, 'the observer is re-read'), ['joiner', 'observer'], 'the view when synced fires');
    assert.equal(observerSession.sessionId, first, 'the same session: a reconnect, not a new session');
    assert.deepEqual(ids(observer.currentMembers()), ['joiner', 'observer'], 'once synced, the view is the server\'s');
    assert.equal(observer.synced, true);
  });

  test('a close during a partition returns once our node is deleted, after the heal (the session lives on)', async () => {
    const path = uniquePath('group-close-cut');
    const [other] = await fx.sessionsApart(1);
    const proxy = await fx.proxy();
    const victimSession = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 6000 });
    await using a = new GroupMember(other!, path, 'a');
    const victim = new GroupMember(victimSession, path, 'victim');
    await a.start({ timeoutMs: 10_000 });
    await victim.start({ timeoutMs: 10_000 });
    await viewIs(a, ['a', 'victim']);
    const first = victimSession.sessionId;
    proxy.blackhole();
    let closed = false;
    const closing = victim.close().then(() => (closed = true));
    // Its delete cannot arrive: close waits (the session notices the silence: SUSPENDED).
    await waitFor(() => victimSession.state === 'SUSPENDED', { timeoutMs: 10_000, message: 'the victim is SUSPENDED' });
    assert.equal(closed, false, 'close waits: our node is still there');
    assert.deepEqual(await fx.children(path), ['a', 'victim']);
    assert.deepEqual(ids(a.currentMembers()), ['a', 'victim'], 'the others still see it: its session lives');
    proxy.pass();
    await withTimeout(closing, 15_000, 'close ends after the heal');
    assert.equal(victimSession.sessionId, first, 'the same session: had close given up, its node would have stayed');
    assert.deepEqual(await fx.children(path), ['a']);
    await viewIs(a, ['a']);
    await noWatches(victimSession, path);
  });

  test('a start that times out, is aborted or closed leaves nothing in ZooKeeper', async () => {
    const path = uniquePath('group-start');
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
    // Cut off: neither the create nor the first read can finish.
    proxy.blackhole();
    const cut = new GroupMember(s, path, 'cut');
    const t0 = performance.now();
    await assert.rejects(cut.start({ timeoutMs: 300 }), OperationTimeoutError);
    const took = Math.round(performance.now() - t0);
    assert.ok(took < 2000, `rejected at its deadline, not after the cleanup (${took} ms)`);
    assert.equal(cut.state, 'CLOSED');
    proxy.pass();
    await cut.close(); // the cleanup started by the failed start
    await waitFor(() => s.state === 'CONNECTED' || s.state === 'RECONNECTED', { timeoutMs: 15_000, message: 'connected again' });
    await s.sync(path.slice(0, path.lastIndexOf('/')));
    // Whatever was held in the partition has been delivered by now: nothing of ours is there.
    assert.deepEqual(await fx.children(path), []);
    await noWatches(s, path);

    const ac = new AbortController();
    const aborted = new GroupMember(s, path, 'aborted');
    const p = aborted.start({ signal: ac.signal });
    ac.abort(new Error('changed my mind'));
    await assert.rejects(p, /changed my mind/);
    const closing = new GroupMember(s, path, 'closing');
    const q = closing.start({ timeoutMs: 10_000 });
    void closing.close();
    await assert.rejects(q, ClosedError);
    // A timeout that lands after the create: the node is deleted all the same.
    const quick = new GroupMember(s, path, 'quick');
    const created = new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        void fx.observer.exists(`${path}/quick`).then((st) => {
          if (st) {
            clearInterval(poll);
            resolve();
          }
        });
      }, 5);
      setTimeout(() => clearInterval(poll), 10_000).unref();
    });
    const ac2 = new AbortController();
    const r = quick.start({ signal: ac2.signal });
    r.catch(() => undefined);
    await withTimeout(created, 10_000, 'quick created');
    ac2.abort(new Error('late abort'));
    await r.then(() => undefined, (err: unknown) => assert.match(String(err), /late abort/));
    await Promise.all([aborted, closing, quick].map((m) => m.close()));
    assert.deepEqual(await fx.children(path), []);
    await noWatches(s, path);
    for (const m of [aborted, closing, quick]) assert.equal(m.state, 'CLOSED');
  });

  test('bad input, double start and use after close are refused with typed errors', async () => {
    const [s] = await fx.sessionsApart(1);
    assert.throws(() => new GroupMember(s!, 'no-slash', 'a'), InvalidArgumentError);
    assert.throws(() => new GroupMember(s!, '/', 'a'), InvalidArgumentError);
    assert.throws(() => new GroupMember(s!, '/g/', 'a'), InvalidArgumentError);
    assert.throws(() => new GroupMember(s!, '/g', 'a/b'), InvalidArgumentError);
    assert.throws(() => new GroupMember(s!, '/g', ''), InvalidArgumentError);
    assert.throws(() => new GroupMember(s!, '/g', '..'), InvalidArgumentError);
    assert.throws(() => new GroupMember(s!, '/g', 5 as never), InvalidArgumentError);
    assert.throws(() => new GroupMember(s!, '/g', 'a', 5 as never), InvalidArgumentError);
    assert.throws(() => new GroupMember({} as never, '/g', 'a'), InvalidArgumentError);
    const big = Buffer.alloc(s!.dataLimit + 1);
    assert.throws(() => new GroupMember(s!, '/g', 'a', big), InvalidArgumentError);
    const path = uniquePath('group-bad');
    const m = new GroupMember(s!, path, 'a');
    await assert.rejects(m.setThisData(big), InvalidArgumentError);
    await assert.rejects(m.setThisData(undefined as never), InvalidArgumentError);
    await assert.rejects(m.start({ timeout: 5 } as never), InvalidArgumentError);
    await assert.rejects(m.start({ timeoutMs: -1 }), InvalidArgumentError);
    assert.throws(() => m.views({ bufferSize: 0 }), InvalidArgumentError);
    assert.throws(() => m.views({ size: 3 } as never), InvalidArgumentError);
    assert.equal(m.state, 'LATENT', 'a refused start changes nothing');
    await m.start({ timeoutMs: 10_000 });
    await assert.rejects(m.start(), IllegalStateError);
    await m.close();
    await m.close(); // idempotent
    await assert.rejects(m.start(), ClosedError);
    await assert.rejects(m.setThisData('x'), ClosedError);
    assert.deepEqual(await fx.children(path), []);
  });
});
