// Persistent and recursive watches (addWatch): what each delivers, what stays on the server,
// their life across reconnects and session loss, and their coexistence with one-shot watches
// on the same path (a 3.8 server keeps one watch mode per path and session).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClosedError, SessionExpiredError, UnimplementedError } from '../../src/errors.js';
import type { PersistentWatch, PersistentWatchItem, ZkSession } from '../../src/client/index.js';
import { expireSession, waitFor, withTimeout } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** A fresh session (closed with the file's others), and the parent of every test path. */
async function session(): Promise<ZkSession> {
  await fx.observer.mkdirp('/test');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  return s;
}

/** Every item a watch delivers, in order, as `TYPE path`. */
function record(watch: PersistentWatch): string[] {
  const seen: string[] = [];
  watch.on('event', (e) => seen.push(`${e.type} ${e.path}`));
  watch.on('reset', () => seen.push(`RESET ${watch.path}`));
  return seen;
}

/** Waits until `seen` holds `expected` (exactly, in order). */
async function expectSeen(seen: string[], expected: string[], what: string): Promise<void> {
  await waitFor(() => seen.length >= expected.length, { timeoutMs: 5000, message: `${what}: ${JSON.stringify(seen)}` });
  assert.deepEqual(seen, expected, what);
}

/** The paths the server holds watches on for `session` (wchc). */
async function serverWatches(session: { sessionId: bigint }): Promise<string[]> {
  return (await fx.server.watchesBySession()).get(`0x${session.sessionId.toString(16)}`) ?? [];
}

describe('persistent watches', () => {
  test('a persistent watch sees its node created, changed, its children changed and deleted, and stays set; close removes it on the server', async () => {
    const s = await session();
    const p = uniquePath('pw-plain');
    const watch = await s.addWatch(p);
    const seen = record(watch);
    await fx.observer.create(p);
    await fx.observer.setData(p, 'x');
    await fx.observer.create(`${p}/c`);
    await fx.observer.setData(`${p}/c`, 'not seen: a grandchild of nothing, a child of the watched node');
    await fx.observer.delete(`${p}/c`);
    await fx.observer.delete(p);
    await fx.observer.create(p);
    await expectSeen(seen, [`NODE_CREATED ${p}`, `NODE_DATA_CHANGED ${p}`, `NODE_CHILDREN_CHANGED ${p}`, `NODE_CHILDREN_CHANGED ${p}`, `NODE_DELETED ${p}`, `NODE_CREATED ${p}`], 'every event on the node, and it fired more than once');
    assert.deepEqual(await serverWatches(s), [p]);
    assert.equal(s.activeWatchCount, 1);
    await watch.close();
    assert.equal(watch.ended, true);
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 5000, message: 'removed on the server' });
    assert.equal(s.activeWatchCount, 0);
    await fx.observer.deleteRecursive(p);
  });

  test('a recursive watch sees every node under its path, and never NODE_CHILDREN_CHANGED, even beside a one-shot child watch on a descendant', async () => {
    const s = await session();
    const p = uniquePath('pw-recursive');
    await fx.observer.mkdirp(`${p}/a`);
    const watch = await s.addWatch(p, { recursive: true });
    const seen = record(watch);
    // The server sends the descendant's NODE_CHILDREN_CHANGED for this one-shot watch only.
    const child = await s.getChildrenWatch(`${p}/a`);
    await fx.observer.create(`${p}/a/b`);
    assert.deepEqual(await withTimeout(child.changed, 5000, 'the one-shot child watch'), { type: 'NODE_CHILDREN_CHANGED', path: `${p}/a` });
    await fx.observer.setData(`${p}/a/b`, 'v');
    await fx.observer.mkdirp(`${p}/a/b/c/d`);
    await fx.observer.deleteRecursive(`${p}/a`);
    await expectSeen(
      seen,
      [`NODE_CREATED ${p}/a/b`, `NODE_DATA_CHANGED ${p}/a/b`, `NODE_CREATED ${p}/a/b/c`, `NODE_CREATED ${p}/a/b/c/d`, `NODE_DELETED ${p}/a/b/c/d`, `NODE_DELETED ${p}/a/b/c`, `NODE_DELETED ${p}/a/b`, `NODE_DELETED ${p}/a`],
      'descendants, no children events',
    );
    await watch.close();
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 5000, message: 'removed on the server' });
    await fx.observer.deleteRecursive(p);
  });

  test('handles on one path share one server watch; a plain handle beside a recursive one still gets NODE_CHILDREN_CHANGED, the recursive one the descendants', async () => {
    const s = await session();
    const p = uniquePath('pw-shared');
    await fx.observer.create(p);
    const plain = await s.addWatch(p);
    const again = await s.addWatch(p);
    const deep = await s.addWatch(p, { recursive: true });
    const [seenPlain, seenAgain, seenDeep] = [record(plain), record(again), record(deep)];
    assert.deepEqual(await serverWatches(s), [p], 'one server watch');
    await fx.observer.create(`${p}/c`);
    await fx.observer.create(`${p}/c/g`);
    await fx.observer.setData(p, 'x');
    await expectSeen(seenDeep, [`NODE_CREATED ${p}/c`, `NODE_CREATED ${p}/c/g`, `NODE_DATA_CHANGED ${p}`], 'the recursive handle');
    await expectSeen(seenPlain, [`NODE_CHILDREN_CHANGED ${p}`, `NODE_DATA_CHANGED ${p}`], 'the plain handle, under a recursive server watch');
    assert.deepEqual(seenAgain, seenPlain);
    await deep.close();
    await plain.close();
    await fx.observer.setData(p, 'y');
    await expectSeen(seenAgain, [`NODE_CHILDREN_CHANGED ${p}`, `NODE_DATA_CHANGED ${p}`, `NODE_DATA_CHANGED ${p}`], 'the last handle still hears');
    assert.deepEqual(await serverWatches(s), [p]);
    await again.close();
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 5000, message: 'removed with the last handle' });
    assert.equal(s.activeWatchCount, 0);
    await fx.observer.deleteRecursive(p);
  });

  test('one-shot watches on a persistently watched path fire once and leave the persistent watch set (the server keeps one mode per path)', async () => {
    const s = await session();
    const p = uniquePath('pw-oneshot');
    await fx.observer.create(p);
    const watch = await s.addWatch(p);
    const seen = record(watch);
    const data = await s.getDataWatch(p);
    const exists = await s.existsWatch(p);
    const kids = await s.getChildrenWatch(p);
    await fx.observer.setData(p, '1');
    assert.deepEqual(await withTimeout(data.changed, 5000, 'data watch'), { type: 'NODE_DATA_CHANGED', path: p });
    assert.deepEqual(await withTimeout(exists.changed, 5000, 'exists watch'), { type: 'NODE_DATA_CHANGED', path: p });
    await fx.observer.create(`${p}/c`);
    assert.deepEqual(await withTimeout(kids.changed, 5000, 'child watch'), { type: 'NODE_CHILDREN_CHANGED', path: p });
    // A one-shot watch aborted before it fired: its removal must not remove the persistent one.
    const aborted = new AbortController();
    const gone = await s.getDataWatch(p, { signal: aborted.signal });
    aborted.abort();
    await assert.rejects(gone.changed);
    await fx.observer.setData(p, '2');
    await fx.observer.setData(p, '3');
    await expectSeen(seen, [`NODE_DATA_CHANGED ${p}`, `NODE_CHILDREN_CHANGED ${p}`, `NODE_DATA_CHANGED ${p}`, `NODE_DATA_CHANGED ${p}`], 'the persistent watch outlived every one-shot');
    await watch.close();
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 5000, message: 'removed' });
    await fx.observer.deleteRecursive(p);
  });

  test('closed while a one-shot watch rides on it: the one-shot still fires, and the server watch goes with it', async () => {
    const s = await session();
    const p = uniquePath('pw-rider');
    await fx.observer.create(p);
    const watch = await s.addWatch(p);
    const data = await s.getDataWatch(p);
    await watch.close();
    assert.deepEqual(await serverWatches(s), [p], 'kept for the one-shot watch');
    await fx.observer.setData(p, '1');
    assert.deepEqual(await withTimeout(data.changed, 5000, 'the one-shot watch'), { type: 'NODE_DATA_CHANGED', path: p });
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 5000, message: 'removed once nothing rides on it' });
    assert.equal(s.activeWatchCount, 0);
    await fx.observer.deleteRecursive(p);
  });

  test('after a reconnect the watch is set again and yields RESET; what changed while disconnected is not replayed', async () => {
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
    await fx.observer.mkdirp('/test');
    const p = uniquePath('pw-reconnect');
    await fx.observer.create(p);
    const watch = await s.addWatch(p, { recursive: true });
    const seen = record(watch);
    const suspended = nextState(s, 'SUSPENDED', 5000);
    proxy.reject(true);
    proxy.dropAll();
    await suspended;
    await fx.observer.setData(p, 'missed');
    const reconnected = nextState(s, 'RECONNECTED', 8000);
    proxy.reject(false);
    await reconnected;
    // A read sent after RESET goes behind the re-registration: what it sees, the watch covers from there.
    assert.equal((await s.getData(p)).data.toString(), 'missed');
    await fx.observer.create(`${p}/after`);
    await expectSeen(seen, [`RESET ${p}`, `NODE_CREATED ${p}/after`], 'RESET, then the events after it');
    await watch.close();
    await fx.observer.deleteRecursive(p);
  });

  test('a lost session ends every handle with SessionExpiredError (listeners and iterators); close ends an iteration', async () => {
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 4000 });
    const p = uniquePath('pw-lost');
    const watch = await s.addWatch(p);
    const ended = new Promise<unknown>((resolve) => watch.once('end', resolve));
    const iterated = (async () => {
      const items: PersistentWatchItem[] = [];
      for await (const item of watch) items.push(item);
      return items;
    })();
    await fx.observer.create(p);
    await expireSession(s, proxy);
    assert.ok((await withTimeout(ended, 10_000, 'end')) instanceof SessionExpiredError);
    await assert.rejects(iterated, SessionExpiredError);
    assert.equal(watch.ended, true);
    await watch.close();
    // On the session that follows, close ends an iteration cleanly.
    await waitFor(() => s.state === 'CONNECTED', { timeoutMs: 10_000, message: 'a new session' });
    const next = await s.addWatch(p);
    const seen = record(next);
    const items = (async () => {
      const out: string[] = [];
      for await (const item of next) out.push(item.type);
      return out;
    })();
    await fx.observer.setData(p, 'x');
    await expectSeen(seen, [`NODE_DATA_CHANGED ${p}`], "the new session's watch");
    const closed = new Promise<unknown>((resolve) => next.once('end', resolve));
    await next.close();
    assert.ok((await closed) instanceof ClosedError);
    assert.deepEqual(await items, ['NODE_DATA_CHANGED']);
    await fx.observer.deleteRecursive(p);
  });

  test('given up (aborted after it was sent, its reply late): rejects at once, and the watch set by the late reply is removed', async () => {
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
    await fx.observer.mkdirp('/test');
    const p = uniquePath('pw-abort');
    proxy.latency(400);
    const started = performance.now();
    await assert.rejects(s.addWatch(p, { signal: AbortSignal.timeout(100) }), (e: Error) => e.name === 'TimeoutError');
    // Its reply comes 800 ms after the send at the earliest: anything under that is the deadline's.
    const took = performance.now() - started;
    assert.ok(took < 700, `the caller was not kept past its deadline (${Math.round(took)} ms)`);
    proxy.pass();
    await s.sync('/');
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 5000, message: 'nothing left on the server' });
    assert.equal(s.activeWatchCount, 0);
  });

  test('a server without persistent watches (addWatch unknown to it): UnimplementedError, remembered by the session, which goes on', async () => {
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
    await fx.observer.mkdirp('/test');
    const p = uniquePath('pw-old-server');
    proxy.unknownOps([106]);
    const states: string[] = [];
    s.on('state', (st) => states.push(st));
    await assert.rejects(s.addWatch(p), UnimplementedError);
    // The server closed the connection after its answer, as an old one does; nothing is sent again.
    await waitFor(() => states.includes('RECONNECTED'), { timeoutMs: 5000, message: `reconnected: ${states.join(' ')}` });
    const sent = proxy.bytes.toTarget;
    await assert.rejects(s.addWatch(p, { recursive: true }), UnimplementedError);
    assert.equal(proxy.bytes.toTarget, sent);
    await s.mkdirp(p);
    assert.equal(s.activeWatchCount, 0);
    assert.deepEqual(await serverWatches(s), []);
    await fx.observer.deleteRecursive(p);
  });

  test('a slow iterator: past its buffer the events are dropped for one RESET; a listener that throws does not stop the others', async () => {
    const s = await session();
    const p = uniquePath('pw-overflow');
    await fx.observer.create(p);
    const watch = await s.addWatch(p);
    const it = watch[Symbol.asyncIterator]({ bufferSize: 3 });
    const errors: Error[] = [];
    watch.on('error', (e) => errors.push(e));
    watch.on('event', () => {
      throw new Error('listener bug');
    });
    const seen = record(watch);
    for (let i = 0; i < 5; i++) await fx.observer.setData(p, String(i));
    await expectSeen(seen, Array.from({ length: 5 }, () => `NODE_DATA_CHANGED ${p}`), 'every event to the listener after the throwing one');
    assert.equal(errors.length, 5);
    // Three buffered, the fourth overflowed them into a RESET, the fifth came after it.
    assert.deepEqual((await it.next()).value, { type: 'RESET', path: p });
    assert.deepEqual((await it.next()).value, { type: 'NODE_DATA_CHANGED', path: p });
    // return() from elsewhere ends a next() that is waiting.
    const other = watch[Symbol.asyncIterator]();
    const waitingNext = other.next();
    await other.return?.();
    assert.deepEqual(await withTimeout(waitingNext, 5000, 'the waiting next() to end'), { value: undefined, done: true });
    await watch.close();
    assert.deepEqual(await it.next(), { value: undefined, done: true });
    await fx.observer.deleteRecursive(p);
  });

  test('600 persistent and 600 one-shot watches on 1000-byte paths (1.2 MB): after a dropped connection they are all set again, the persistent ones last', async () => {
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
    const base = uniquePath('pw-big-set');
    await fx.observer.mkdirp(base);
    const paths = Array.from({ length: 600 }, (_, i) => `${base}/${'w'.repeat(1000 - base.length - 8)}-${String(i).padStart(5, '0')}`);
    for (let i = 0; i < paths.length; i += 200) await Promise.all(paths.slice(i, i + 200).map((p) => fx.observer.create(p)));
    const watches = await Promise.all(paths.map((p) => s.addWatch(p)));
    const oneShots = await Promise.all(paths.map((p) => s.getDataWatch(p)));
    const heard = new Set<string>();
    for (const w of watches) w.on('event', (e) => e.type === 'NODE_DATA_CHANGED' && heard.add(e.path));
    const reconnected = nextState(s, 'RECONNECTED', 10_000);
    proxy.dropAll();
    await reconnected;
    await s.sync(base);
    await Promise.all(paths.map((p) => fx.observer.setData(p, 'one')));
    await Promise.all(oneShots.map((w) => withTimeout(w.changed, 10_000, 'a one-shot watch')));
    await waitFor(() => heard.size === paths.length, { timeoutMs: 10_000, message: `every persistent watch heard (${heard.size})` });
    // Still persistent after the one-shot watches fired (the server set them last).
    heard.clear();
    await Promise.all(paths.map((p) => fx.observer.setData(p, 'two')));
    await waitFor(() => heard.size === paths.length, { timeoutMs: 10_000, message: `every persistent watch heard again (${heard.size})` });
    await Promise.all(watches.map((w) => w.close()));
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 10_000, message: 'all removed' });
    await fx.observer.deleteRecursive(base);
  });

  test('a one-shot watch aborted beside a persistent one on the same path: once the persistent one closes, nothing is left (an empty table entry kept it forever)', async () => {
    const s = await session();
    const p = uniquePath('pw-rider-aborted');
    await fx.observer.create(p);
    const watch = await s.addWatch(p, { recursive: true });
    const ac = new AbortController();
    const child = await s.getChildrenWatch(p, { signal: ac.signal });
    ac.abort();
    await assert.rejects(child.changed);
    await watch.close();
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 5000, message: 'removed' });
    assert.equal(s.activeWatchCount, 0);
    await fx.observer.deleteRecursive(p);
  });

  test('a path watched again right after its first removal on a server before 3.9 keeps its watch (the removal retried by any would take it)', async () => {
    // A fresh session: it learns only from its first removal that the server wants 'any'.
    const s = await session();
    const p = uniquePath('pw-rewatched');
    await fx.observer.create(p);
    const first = await s.addWatch(p, { recursive: true });
    await first.close();
    const again = await s.addWatch(p, { recursive: true });
    await s.sync(p);
    assert.deepEqual(await serverWatches(s), [p], 'the second watch is on the server');
    const seen = new Promise((resolve) => again.once('event', resolve));
    await fx.observer.setData(p, 'x');
    assert.deepEqual(await withTimeout(seen, 5000, 'an event'), { type: 'NODE_DATA_CHANGED', path: p });
    await again.close();
    await waitFor(async () => (await serverWatches(s)).length === 0, { timeoutMs: 5000, message: 'removed' });
    await fx.observer.deleteRecursive(p);
  });
});
