// ReadWriteLock against a real standalone ZooKeeper: readers share, writers exclude everyone,
// strict FIFO with mixed arrivals (no writer starvation), downgrade in place (CURATOR-621),
// upgrade refused, timeout/abort cleanup (nodes and server-side watches), Curator node names,
// bad input and use after close.
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { ClosedError, IllegalStateError, InvalidArgumentError, LockTimeoutError } from '../../src/errors.js';
import { ReadWriteLock, type LockHandle, type ZkSession } from '../../src/index.js';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
const { pool } = fx;

const sessionsN = (n: number, options = {}): Promise<ZkSession[]> => fx.sessionsN(n, options);

const READ_NAME = /^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-__READ__\d{10}$/;
const WRITE_NAME = /^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-__WRIT__\d{10}$/;

/** Read and write lock nodes under `path`, sorted; [] when the directory does not exist. */
async function lockNodes(path: string): Promise<string[]> {
  const stat = await fx.observer.exists(path);
  return stat ? (await fx.observer.getChildren(path)).children.filter((c) => c.includes('__READ__') || c.includes('__WRIT__')).sort() : [];
}

const nameOf = (h: LockHandle): string => h.path.slice(h.path.lastIndexOf('/') + 1);
const seqOf = (h: LockHandle): string => h.path.slice(-10);

/** Waits until `count` nodes are queued on `path`. */
const queued = (path: string, count: number): Promise<boolean> =>
  waitFor(async () => (await lockNodes(path)).length === count, { timeoutMs: 5000, message: `${count} nodes queued on ${path}` });

/** Paths `session` watches on the server (wchc; a session whose watches were removed may stay listed, empty). */
async function watchedBy(session: ZkSession): Promise<string[]> {
  return (await fx.server.watchesBySession()).get(`0x${session.sessionId.toString(16)}`) ?? [];
}

/** Polls wchc until `session` watches nothing under `under`. */
async function waitNoWatches(session: ZkSession, under: string): Promise<void> {
  await waitFor(async () => !(await watchedBy(session)).some((p) => p === under || p.startsWith(`${under}/`)), {
    timeoutMs: 5000,
    message: `no watches of 0x${session.sessionId.toString(16)} under ${under}`,
  });
}

describe('sharing and exclusion', () => {
  test('readers overlap: two sessions hold the read lock at the same time; a writer cannot get in', async () => {
    const path = uniquePath('readers-overlap');
    const [s1, s2, s3] = await sessionsN(3);
    const a = new ReadWriteLock(s1!, path);
    const b = new ReadWriteLock(s2!, path);
    const w = new ReadWriteLock(s3!, path);
    const ra = await a.readLock().acquire({ timeoutMs: 5000 });
    const rb = await b.readLock().acquire({ timeoutMs: 5000 });
    assert.ok(ra.isHeld && rb.isHeld, 'both readers hold');
    assert.equal(await w.writeLock().tryAcquire(), null, 'no writer while readers hold');
    assert.deepEqual(await lockNodes(path), [nameOf(ra), nameOf(rb)].sort(), 'the failed tryAcquire left no node');
    const parts = await w.readLock().participants();
    assert.deepEqual(parts.map((p) => [p.path, p.isHolder]), [[ra.path, true], [rb.path, true]]);
    await ra.release();
    await rb.release();
    const wh = await w.writeLock().tryAcquire();
    assert.ok(wh, 'free for a writer once the readers left');
    await wh.release();
    await Promise.all([a.close(), b.close(), w.close()]);
    assert.deepEqual(await lockNodes(path), []);
  });

  test('three readers hold together, and the counters see all three', async () => {
    const path = uniquePath('three-readers');
    const sessions = await sessionsN(3);
    const locks = sessions.map((s) => new ReadWriteLock(s, path));
    let readers = 0;
    let maxReaders = 0;
    const handles = await Promise.all(
      locks.map(async (l) => {
        const h = await l.readLock().acquire({ timeoutMs: 5000 });
        readers++;
        maxReaders = Math.max(maxReaders, readers);
        return h;
      }),
    );
    assert.equal(maxReaders, 3);
    assert.ok(handles.every((h) => h.isHeld));
    const parts = await locks[0]!.readLock().participants();
    assert.equal(parts.length, 3);
    assert.ok(parts.every((p) => p.isHolder));
    await Promise.all(handles.map((h) => h.release()));
    await Promise.all(locks.map((l) => l.close()));
    assert.deepEqual(await lockNodes(path), []);
  });

  test('6 reader and 2 writer sessions, 320 acquisitions: a writer never overlaps anyone; readers do overlap', async () => {
    const path = uniquePath('stress');
    const sessions = await sessionsN(8);
    const locks = sessions.map((s) => new ReadWriteLock(s, path));
    let readers = 0;
    let writers = 0;
    let readersWhileWriting = 0;
    let maxWriters = 0;
    let maxReaders = 0;
    let grants = 0;
    const tokens = new Set<bigint>();
    const reader = async (l: ReadWriteLock): Promise<void> => {
      for (let i = 0; i < 40; i++) {
        const h = await l.readLock().acquire({ timeoutMs: 60000 });
        readers++;
        grants++;
        tokens.add(h.fencingToken);
        if (writers > 0) readersWhileWriting++;
        maxReaders = Math.max(maxReaders, readers);
        await nextTurn();
        readers--;
        await h.release();
      }
    };
    const writer = async (l: ReadWriteLock): Promise<void> => {
      for (let i = 0; i < 40; i++) {
        const h = await l.writeLock().acquire({ timeoutMs: 60000 });
        writers++;
        grants++;
        tokens.add(h.fencingToken);
        if (readers > 0) readersWhileWriting++;
        maxWriters = Math.max(maxWriters, writers);
        await nextTurn();
        writers--;
        await h.release();
      }
    };
    await withTimeout(Promise.all(locks.map((l, i) => (i < 6 ? reader(l) : writer(l)))), 120000, '320 acquisitions');
    assert.equal(grants, 320);
    assert.equal(tokens.size, 320, 'every grant has its own node');
    assert.equal(readersWhileWriting, 0, 'no reader ever held while a writer did');
    assert.equal(maxWriters, 1, 'never two writers');
    assert.ok(maxReaders > 1, `readers overlapped at least once (max ${maxReaders})`);
    await Promise.all(locks.map((l) => l.close()));
    assert.deepEqual(await lockNodes(path), []);
  });
});

describe('fairness and lock conversion', () => {
  test('FIFO with mixed arrivals: R1 holds, W1 waits, R2 arrives and queues behind W1', async () => {
    const path = uniquePath('fifo-mixed');
    const [s1, s2, s3] = await fx.sessionsApart(3);
    const r1 = new ReadWriteLock(s1!, path, { participantId: 'R1' });
    const w1 = new ReadWriteLock(s2!, path, { participantId: 'W1' });
    const r2 = new ReadWriteLock(s3!, path, { participantId: 'R2' });
    const order: string[] = [];
    const r1h = await r1.readLock().acquire();
    let w1h: LockHandle | undefined;
    let w1Released = false;
    const w1Done = w1.writeLock().acquire({ timeoutMs: 20000 }).then(async (h) => {
      w1h = h;
      order.push('W1');
      assert.equal(r1h.isHeld, false, 'W1 only after R1 released');
      await nextTurn();
      w1Released = true;
      await h.release();
    });
    await queued(path, 2);
    assert.equal(await r2.readLock().tryAcquire(), null, 'a reader may not pass a waiting writer');
    assert.equal((await lockNodes(path)).length, 2, 'the failed tryAcquire left no node');
    let r2Granted = false;
    const r2Done = r2.readLock().acquire({ timeoutMs: 20000 }).then((h) => {
      r2Granted = true;
      order.push('R2');
      assert.ok(w1h !== undefined && w1Released && !w1h.isHeld, 'R2 only after W1 got and released the write lock');
      return h;
    });
    await queued(path, 3);
    const parts = await r2.readLock().participants();
    assert.deepEqual(parts.map((p) => [p.id, p.isHolder]), [['R1', true], ['W1', false], ['R2', false]]);
    // R2 waits on W1's node (the nearest preceding writer), not on R1's.
    await waitFor(async () => (await watchedBy(s3!)).includes(parts[1]!.path), { timeoutMs: 5000, message: 'R2 watching W1' });
    assert.ok(!(await watchedBy(s3!)).includes(r1h.path));
    assert.equal(r2Granted, false);
    assert.deepEqual(order, []);
    await r1h.release();
    await withTimeout(w1Done, 10000, 'W1 granted after R1 released');
    const r2h = await withTimeout(r2Done, 10000, 'R2 granted after W1 released');
    assert.deepEqual(order, ['W1', 'R2']);
    await r2h.release();
    await Promise.all([r1.close(), w1.close(), r2.close()]);
    assert.deepEqual(await lockNodes(path), []);
  });

  test('a writer and then a reader behind writers granted in this session take the lock on the notification, with no read', async () => {
    const path = uniquePath('head-handoff');
    const [s] = await sessionsN(1);
    const locks = [s!, s!, s!].map((x) => new ReadWriteLock(x, path));
    const w1 = await locks[0]!.writeLock().acquire();
    const w2 = locks[1]!.writeLock().acquire();
    await queued(path, 2);
    const r3 = locks[2]!.readLock().acquire();
    await queued(path, 3);
    // Both listed (a sync behind each listing: its reply is in), and wait following their
    // predecessor in this session: on the server each watches only its own node.
    await waitFor(() => s!.counters.getChildren >= 2 && s!.counters.getData >= 2, { timeoutMs: 5000, message: 'both listed' });
    await s!.sync(path);
    const waiters = (await lockNodes(path)).filter((n) => `${path}/${n}` !== w1.path).map((n) => `${path}/${n}`);
    assert.deepEqual([...(await watchedBy(s!))].sort(), waiters.sort());
    const reads = (x: ZkSession): number => x.counters.getChildren + x.counters.getData + x.counters.exists;
    const before = reads(s!);
    await w1.release();
    const w2h = await withTimeout(w2, 5000, 'W2 granted');
    // R3 waits on W2 (the nearest writer ahead): W2 was granted, so nothing is ahead of it.
    await w2h.release();
    const r3h = await withTimeout(r3, 5000, 'R3 granted');
    assert.equal(reads(s!), before, 'no read');
    await r3h.release();
    await Promise.all(locks.map((l) => l.close()));
    assert.deepEqual(await lockNodes(path), []);
  });

  test("a reader granted beside a downgrade's read node is not the head: a writer of its process behind it still waits", async () => {
    // Found by the chaos suite (seed 20261201): the reader took the write node's deletion as
    // "nothing left ahead", but the downgrade's read node stood there, and the writer behind
    // it, following the reader in this process, took the lock beside that read node.
    const path = uniquePath('downgrade-head');
    const [other] = await fx.sessionsApart(1);
    const [s1, s2] = await sessionsN(2);
    const a = new ReadWriteLock(other!, path, { participantId: 'A' });
    const wa = await a.writeLock().acquire();
    const reader = new ReadWriteLock(s1!, path, { participantId: 'B' }).readLock().acquire({ timeoutMs: 30000 });
    await queued(path, 2);
    let cGranted = false;
    const writer = new ReadWriteLock(s2!, path, { participantId: 'C' }).writeLock().acquire({ timeoutMs: 30000 }).then((h) => {
      cGranted = true;
      return h;
    });
    await queued(path, 3);
    await waitFor(async () => (await watchedBy(s1!)).includes(wa.path), { timeoutMs: 5000, message: "B watches A's write node" });
    const ra = await a.readLock().acquire({ timeoutMs: 5000 }); // the downgrade: in the write node's place
    await wa.release();
    const rb = await withTimeout(reader, 5000, 'B reads beside A');
    await rb.release();
    // C was told of B's deletion here; A's read node is still ahead of it.
    await waitFor(() => cGranted || s2!.counters.getChildren >= 2, { timeoutMs: 5000, message: 'C granted or looked again' });
    await s2!.sync(path);
    assert.equal(cGranted, false, "C did not get the write lock beside A's read node");
    await ra.release();
    const ch = await withTimeout(writer, 5000, 'C after A released the read lock');
    await ch.release();
    await a.close();
    assert.deepEqual(await lockNodes(path), []);
  });

  for (const apart of [false, true]) {
  test(`downgrade: the read lock takes the write node's place, so a queued writer stays out until it is released (B ${apart ? 'of another process' : 'of this process'})`, async () => {
    const path = uniquePath('downgrade');
    const [s1, s2] = await (apart ? fx.sessionsApart(2) : sessionsN(2));
    const a = new ReadWriteLock(s1!, path, { participantId: 'A' });
    const b = new ReadWriteLock(s2!, path, { participantId: 'B' });
    const wa = await a.writeLock().acquire();
    let bGranted = false;
    const bDone = b.writeLock().acquire({ timeoutMs: 30000 }).then((h) => {
      bGranted = true;
      return h;
    });
    await queued(path, 2);
    const bNode = (await b.writeLock().participants())[1]!;
    assert.equal(bNode.id, 'B');
    // B waits behind A's write node: A's own read lock must not wait behind B.
    const before = s1!.counters;
    const ra = await withTimeout(a.readLock().acquire({ timeoutMs: 5000 }), 5000, 'downgrade granted at once');
    const after = s1!.counters;
    // Two requests, as a plain create2 and listing: the check rides in the create's transaction,
    // and the token is the write node's, so no read for the read node's Stat.
    const cost = (k: keyof typeof before): number => after[k] - before[k];
    assert.deepEqual([cost('multi'), cost('getChildren'), cost('create'), cost('exists'), cost('getData')], [1, 1, 0, 0, 0], 'one transaction and one listing');
    assert.ok(ra.isHeld);
    assert.match(nameOf(ra), READ_NAME);
    assert.equal(seqOf(ra), seqOf(wa), "the read node carries the write node's sequence");
    const parts = await a.readLock().participants();
    assert.deepEqual(parts.map((p) => [p.id, p.path]), [['A', ra.path], ['A', wa.path], ['B', bNode.path]], 'read node first, in the write node\'s place');
    assert.deepEqual(parts.map((p) => p.isHolder), [true, true, false], 'A holds both (read node and write node), B waits');
    assert.deepEqual((await a.writeLock().participants()).map((p) => p.isHolder), [true, true, false], 'both sides agree');
    const listingsBefore = s2!.counters.getChildren;
    await wa.release();
    // B is told of the write node's deletion (A forgot that its write node was the head, so
    // B does not take the deletion for a handoff), re-lists, and then waits on A's read node.
    await waitFor(() => s2!.counters.getChildren > listingsBefore, { timeoutMs: 5000, message: 'B re-listed' });
    if (apart) await waitFor(async () => (await watchedBy(s2!)).includes(ra.path), { timeoutMs: 5000, message: "B watching A's read node" });
    else await s2!.sync(path); // the listing's reply is in
    await a.readLock().participants(); // one more round trip
    assert.equal(bGranted, false, 'B did not get the write lock while A holds the read lock');
    assert.ok(await fx.observer.exists(bNode.path), "B's node is still queued");
    assert.deepEqual(await lockNodes(path), [nameOf(ra), bNode.path.slice(path.length + 1)].sort());
    await ra.release();
    const bh = await withTimeout(bDone, 10000, 'B granted after A released the read lock');
    assert.equal(bh.path, bNode.path);
    await bh.release();
    await Promise.all([a.close(), b.close()]);
    assert.deepEqual(await lockNodes(path), []);
  });
  }

  test("fencing tokens increase in grant order across a downgrade: the read lock carries its write node's token", async () => {
    const path = uniquePath('downgrade-tokens');
    const [s1, s2, s3, s4] = await sessionsN(4);
    const a = new ReadWriteLock(s1!, path, { participantId: 'A' });
    const b = new ReadWriteLock(s2!, path, { participantId: 'B' });
    const c = new ReadWriteLock(s3!, path, { participantId: 'C' });
    const d = new ReadWriteLock(s4!, path, { participantId: 'D' });
    const grants: [string, bigint][] = [];
    for (const [who, rw] of [['A', a], ['B', b], ['C', c], ['D', d]] as const) {
      rw.readLock().on('acquired', (h) => grants.push([`${who} read`, h.fencingToken]));
      rw.writeLock().on('acquired', (h) => grants.push([`${who} write`, h.fencingToken]));
    }
    const wa = await a.writeLock().acquire();
    // Queued behind A, in this order: writer B, writer C, reader D.
    const bDone = b.writeLock().acquire({ timeoutMs: 30000 });
    await queued(path, 2);
    const cDone = c.writeLock().acquire({ timeoutMs: 30000 });
    await queued(path, 3);
    const dDone = d.readLock().acquire({ timeoutMs: 30000 });
    await queued(path, 4);
    const ra = await withTimeout(a.readLock().acquire({ timeoutMs: 5000 }), 5000, 'downgrade granted at once');
    // participants() (here another participant's view) derives the read node's token from the
    // write node with its sequence, while that is queued; afterwards only the handle knows it.
    const parts = await d.readLock().participants();
    assert.deepEqual(parts.map((p) => [p.path, p.fencingToken]), [[ra.path, wa.fencingToken], ...parts.slice(1).map((p) => [p.path, p.czxid])]);
    assert.ok(parts[0]!.czxid > parts[2]!.czxid, "the read node's own czxid is newer than B's");
    await wa.release();
    const afterRelease = await d.readLock().participants();
    assert.deepEqual(afterRelease.map((p) => [p.id, p.fencingToken]), afterRelease.map((p) => [p.id, p.czxid]), 'write node gone: own czxids');
    await ra.release();
    await (await withTimeout(bDone, 10000, 'B granted')).release();
    await (await withTimeout(cDone, 10000, 'C granted')).release();
    await (await withTimeout(dDone, 10000, 'D granted')).release();
    assert.deepEqual(grants.map(([who]) => who), ['A write', 'A read', 'B write', 'C write', 'D read']);
    for (let i = 1; i < grants.length; i++) {
      const [prev, next] = [grants[i - 1]!, grants[i]!];
      assert.ok(next[1] >= prev[1], `token of ${next[0]} (${next[1]}) is not below that of ${prev[0]} (${prev[1]}), granted before it`);
    }
    assert.equal(ra.fencingToken, wa.fencingToken, "the downgraded read lock takes the write node's place, and its token");
    await Promise.all([a, b, c, d].map((l) => l.close()));
    assert.deepEqual(await lockNodes(path), []);
  });

  test('upgrade: with the read lock held, writeLock().acquire() and tryAcquire() reject at once and create nothing', async () => {
    const path = uniquePath('upgrade');
    const [s] = await sessionsN(1);
    const a = new ReadWriteLock(s!, path);
    const r = await a.readLock().acquire();
    const creates = s!.counters.create;
    const err = await a.writeLock().acquire({ timeoutMs: 5000 }).catch((e: unknown) => e);
    assert.ok(err instanceof IllegalStateError, String(err));
    assert.equal(err.code, 'ILLEGAL_STATE');
    const err2 = await a.writeLock().tryAcquire().catch((e: unknown) => e);
    assert.ok(err2 instanceof IllegalStateError, String(err2));
    assert.equal(err2.code, 'ILLEGAL_STATE');
    assert.equal(s!.counters.create, creates, 'no create was sent');
    assert.deepEqual(await lockNodes(path), [nameOf(r)]);
    assert.ok(r.isHeld, 'the read lock is still held');
    await r.release();
    const w = await a.writeLock().tryAcquire();
    assert.ok(w, 'once the read lock is released, the write lock can be taken');
    await w.release();
    await a.close();
    assert.deepEqual(await lockNodes(path), []);
  });
});

describe('giving up leaves nothing behind', () => {
  test('timeout of a read waiter and of a write waiter: LockTimeoutError, no node, no watch', async () => {
    const path = uniquePath('timeout');
    const [s1, s2, s3] = await sessionsN(3);
    const holder = new ReadWriteLock(s1!, path);
    const w = await holder.writeLock().acquire();
    // With watchOwnNode the waiters also watch their own nodes: those watches must go too.
    const readErr = await new ReadWriteLock(s2!, path, { watchOwnNode: true }).readLock().acquire({ timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(readErr instanceof LockTimeoutError, String(readErr));
    assert.equal(readErr.code, 'LOCK_TIMEOUT');
    const writeErr = await new ReadWriteLock(s3!, path, { watchOwnNode: true }).writeLock().acquire({ timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(writeErr instanceof LockTimeoutError, String(writeErr));
    assert.deepEqual(await lockNodes(path), [nameOf(w)]);
    await waitNoWatches(s2!, path);
    await waitNoWatches(s3!, path);
    await w.release();
    // Behind a reader, a write waiter times out the same way.
    const r = await holder.readLock().acquire();
    const writeErr2 = await new ReadWriteLock(s3!, path).writeLock().acquire({ timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(writeErr2 instanceof LockTimeoutError, String(writeErr2));
    assert.deepEqual(await lockNodes(path), [nameOf(r)]);
    await waitNoWatches(s3!, path);
    await r.release();
    await holder.close();
  });

  test('abort of a read waiter and of a write waiter: rejects with the reason, no node, no watch', async () => {
    const path = uniquePath('abort');
    // Each of its own process: they wait with server watches, which must not linger.
    const [s1, s2, s3] = await fx.sessionsApart(3);
    const holder = new ReadWriteLock(s1!, path);
    const w = await holder.writeLock().acquire();
    const readAbort = new AbortController();
    const reading = new ReadWriteLock(s2!, path).readLock().acquire({ signal: readAbort.signal });
    await queued(path, 2);
    const writeAbort = new AbortController();
    const writing = new ReadWriteLock(s3!, path).writeLock().acquire({ signal: writeAbort.signal });
    await queued(path, 3);
    const readNode = `${path}/${(await lockNodes(path)).find((n) => n.includes('__READ__'))!}`;
    // The reader waits on the writer's node; the writer on its predecessor, the reader's node.
    await waitFor(async () => (await watchedBy(s2!)).includes(w.path) && (await watchedBy(s3!)).includes(readNode), { timeoutMs: 5000, message: 'both waiting' });
    const readReason = new Error('reader gave up');
    readAbort.abort(readReason);
    await assert.rejects(reading, (e) => e === readReason);
    const writeReason = new Error('writer gave up');
    writeAbort.abort(writeReason);
    await assert.rejects(writing, (e) => e === writeReason);
    assert.deepEqual(await lockNodes(path), [nameOf(w)]);
    await waitNoWatches(s2!, path);
    await waitNoWatches(s3!, path);
    // An already aborted signal rejects at once and creates nothing.
    const creates = s2!.counters.create;
    await assert.rejects(new ReadWriteLock(s2!, path).readLock().acquire({ signal: AbortSignal.abort(new Error('no')) }), /no/);
    await assert.rejects(new ReadWriteLock(s2!, path).writeLock().acquire({ signal: AbortSignal.abort(new Error('no')) }), /no/);
    assert.equal(s2!.counters.create, creates);
    await w.release();
    await holder.close();
    assert.deepEqual(await lockNodes(path), []);
  });
});

describe('layout, bad input and close', () => {
  test('Curator layout: _c_<uuid>-__READ__<seq> and _c_<uuid>-__WRIT__<seq> under the path', async () => {
    const path = uniquePath('layout');
    const [s1, s2] = await sessionsN(2);
    const a = new ReadWriteLock(s1!, path);
    const b = new ReadWriteLock(s2!, path);
    const r = await a.readLock().acquire();
    const wDone = b.writeLock().acquire({ timeoutMs: 10000 });
    await queued(path, 2);
    assert.equal(r.path, `${path}/${nameOf(r)}`);
    const names = await lockNodes(path);
    const readNames = names.filter((n) => READ_NAME.test(n));
    const writeNames = names.filter((n) => WRITE_NAME.test(n));
    assert.deepEqual(readNames, [nameOf(r)]);
    assert.equal(writeNames.length, 1);
    assert.ok(Number(writeNames[0]!.slice(-10)) > Number(seqOf(r)), 'one sequence counter for both kinds');
    assert.equal((await fx.observer.exists(r.path))?.ephemeralOwner, s1!.sessionId, 'ephemeral, owned by the session');
    assert.equal(r.fencingToken, (await fx.observer.exists(r.path))?.czxid);
    await r.release();
    const w = await wDone;
    assert.match(nameOf(w), WRITE_NAME);
    assert.equal(w.path, `${path}/${writeNames[0]}`);
    await w.release();
    await Promise.all([a.close(), b.close()]);
  });

  test('invalid paths, options and arguments are InvalidArgumentError', async () => {
    const [s] = await sessionsN(1);
    for (const p of ['', 'locks', '/locks/', '/a//b', '/', 42, undefined]) {
      assert.throws(() => new ReadWriteLock(s!, p as string), InvalidArgumentError, `path ${String(p)}`);
    }
    assert.throws(() => new ReadWriteLock({} as ZkSession, '/x'), InvalidArgumentError);
    assert.throws(() => new ReadWriteLock(s!, '/x', { participantId: 5 as never }), InvalidArgumentError);
    assert.throws(() => new ReadWriteLock(s!, '/x', { reapParentAfterMs: -1 }), InvalidArgumentError);
    const path = uniquePath('bad-args');
    const rw = new ReadWriteLock(s!, path);
    const creates = s!.counters.create;
    for (const side of [rw.readLock(), rw.writeLock()]) {
      await assert.rejects(side.acquire({ timeoutMs: -1 }), InvalidArgumentError);
      await assert.rejects(side.acquire({ timeoutMs: Number.NaN }), InvalidArgumentError);
      await assert.rejects(side.acquire({ timeoutMs: Number.POSITIVE_INFINITY }), InvalidArgumentError);
      await assert.rejects(side.acquire({ timeoutMs: '100' as never }), InvalidArgumentError);
      await assert.rejects(side.acquire({ signal: {} as AbortSignal }), InvalidArgumentError);
      await assert.rejects(side.acquire('soon' as never), InvalidArgumentError);
    }
    assert.equal(s!.counters.create, creates, 'nothing was sent');
    assert.equal(await fx.observer.exists(path), null);
    await rw.close();
  });

  test('close releases both sides and rejects a pending acquisition; use after close is ClosedError', async () => {
    const path = uniquePath('close');
    const [s1, s2] = await sessionsN(2);
    const holder = new ReadWriteLock(s1!, path);
    const waiter = new ReadWriteLock(s2!, path);
    const w = await holder.writeLock().acquire();
    const r = await holder.readLock().acquire(); // downgrade: both sides held
    const pending = waiter.readLock().acquire();
    await queued(path, 3);
    const rejected = assert.rejects(pending, ClosedError);
    await waiter.close();
    await rejected;
    await waitNoWatches(s2!, path);
    await holder.close();
    assert.equal(w.isHeld, false);
    assert.equal(r.isHeld, false);
    assert.deepEqual(await lockNodes(path), []);
    for (const rw of [holder, waiter]) {
      await assert.rejects(rw.readLock().acquire(), ClosedError);
      await assert.rejects(rw.readLock().tryAcquire(), ClosedError);
      await assert.rejects(rw.writeLock().acquire(), ClosedError);
      await assert.rejects(rw.writeLock().tryAcquire(), ClosedError);
      await assert.rejects(rw.readLock().participants(), ClosedError);
      await assert.rejects(rw.readLock().runExclusive(() => undefined), ClosedError);
    }
    await holder.close(); // idempotent
    // A closed session makes the lock unusable too.
    const s3 = await pool.connect(fx.server.connectString);
    const rw = new ReadWriteLock(s3, uniquePath('closed-session'));
    await s3.close();
    await assert.rejects(rw.readLock().acquire(), ClosedError);
    await assert.rejects(rw.writeLock().acquire(), ClosedError);
  });
});
