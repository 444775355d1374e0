// PersistentNode on one server, with real faults: deleted by another session, session expiry,
// lost create replies (with and without protection), close while a create is in flight, a
// blackhole, a persistent error (backoff), the session's close; data kept across re-creates;
// bad input refused with typed errors; nothing left behind (nodes, watches).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PersistentNode } from '../../src/nodes/index.js';
import { ClosedError, InvalidArgumentError, OperationTimeoutError } from '../../src/errors.js';
import type { ZkSession } from '../../src/client/session.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

function nextCreated(node: PersistentNode): Promise<string> {
  return new Promise((resolve) => node.once('created', resolve));
}

/** Waits until `path`'s data reads `data` (as the observer sees it). */
async function dataIs(path: string, data: string): Promise<void> {
  await waitFor(async () => (await fx.observer.getData(path).catch(() => undefined))?.data.toString() === data, { timeoutMs: 15000, message: `${path} holds ${data}` });
}

async function viaProxy(sessionTimeoutMs = 4000): Promise<{ s: ZkSession; proxy: Awaited<ReturnType<typeof fx.proxy>> }> {
  const proxy = await fx.proxy();
  const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs });
  return { s, proxy };
}

test('an ephemeral node comes back after deletion by another session, with the latest data, and close removes it', async () => {
  const base = uniquePath('pn-delete');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  const node = new PersistentNode(s, `${base}/member`, { data: 'v1' });
  const deleted: string[] = [];
  node.on('deleted', (p) => deleted.push(p));
  node.start();
  await node.waitForInitialCreate({ timeoutMs: 10000 });
  assert.equal(node.actualPath, `${base}/member`);
  assert.equal((await fx.observer.getData(`${base}/member`)).data.toString(), 'v1');
  await node.setData('v2', { timeoutMs: 5000 });
  assert.equal((await fx.observer.getData(`${base}/member`)).data.toString(), 'v2');
  for (let i = 0; i < 3; i++) {
    const recreated = nextCreated(node);
    await fx.observer.delete(`${base}/member`);
    assert.equal(await recreated, `${base}/member`);
  }
  assert.deepEqual(deleted, [`${base}/member`, `${base}/member`, `${base}/member`]);
  const got = await fx.observer.getData(`${base}/member`);
  assert.equal(got.data.toString(), 'v2');
  assert.equal(got.stat.ephemeralOwner, s.sessionId);
  await node.close();
  assert.equal(node.actualPath, undefined);
  assert.deepEqual(await fx.children(base), []);
  await fx.waitNoWatches(s, base);
  await assert.rejects(node.setData('x'), ClosedError);
  await assert.rejects(node.waitForInitialCreate(), ClosedError);
  assert.throws(() => node.start(), ClosedError);
  await node.close(); // idempotent
});

test('after session expiry the node is back under the new session (plain and protected sequential)', async () => {
  const base = uniquePath('pn-expire');
  const { s, proxy } = await viaProxy();
  await using plain = new PersistentNode(s, `${base}/e`, { data: 'p' });
  await using seq = new PersistentNode(s, `${base}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL', protection: true, data: 'd' });
  plain.start();
  seq.start();
  await Promise.all([plain.waitForInitialCreate({ timeoutMs: 10000 }), seq.waitForInitialCreate({ timeoutMs: 10000 })]);
  const first = seq.actualPath;
  assert.match(first ?? '', /\/_c_[0-9a-f-]{36}-n-\d{10}$/);
  const old = s.sessionId;
  const again = [nextCreated(plain), nextCreated(seq)];
  await expireSession(s, proxy);
  const [p2, s2] = await Promise.all(again);
  assert.equal(p2, `${base}/e`);
  assert.notEqual(s2, first);
  assert.notEqual(s.sessionId, old);
  await waitFor(async () => (await fx.children(base)).length === 2, { timeoutMs: 15000 });
  for (const path of [p2, s2 as string]) {
    const got = await fx.observer.getData(path);
    assert.equal(got.stat.ephemeralOwner, s.sessionId, path);
  }
  await plain.close();
  await seq.close();
  assert.deepEqual(await fx.children(base), []);
  await fx.waitNoWatches(s, base);
});

test('a create whose reply was lost: with protection it is found again, exactly one node and one create sent', async () => {
  const base = uniquePath('pn-lost');
  const { s, proxy } = await viaProxy();
  await fx.observer.mkdirp(base);
  const lost = proxy.loseReply({ op: 'create', path: base });
  const creates = s.counters.create;
  await using node = new PersistentNode(s, `${base}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL', protection: true, data: 'x' });
  const errors: Error[] = [];
  node.on('error', (e) => errors.push(e));
  node.start();
  await lost;
  await node.waitForInitialCreate({ timeoutMs: 15000 });
  const children = await fx.children(base);
  assert.equal(children.length, 1, children.join());
  assert.equal(`${base}/${children[0]}`, node.actualPath);
  assert.equal(s.counters.create - creates, 1, 'found again, not created a second time');
  assert.equal((await fx.observer.exists(node.actualPath as string))?.ephemeralOwner, s.sessionId);
  assert.ok(errors.length >= 1, 'the lost reply was reported');
  await node.close();
  assert.deepEqual(await fx.children(base), []);
});

test('a create whose reply was lost at a plain path: created again, the existing one adopted, one node', async () => {
  const base = uniquePath('pn-lost-plain');
  const { s, proxy } = await viaProxy();
  const lost = proxy.loseReply({ op: 'create', path: `${base}/p` });
  await using node = new PersistentNode(s, `${base}/p`, { mode: 'PERSISTENT', data: 'x' });
  node.on('error', () => undefined);
  node.start();
  await lost;
  await node.waitForInitialCreate({ timeoutMs: 15000 });
  assert.deepEqual(await fx.children(base), ['p']);
  await node.setData('y', { timeoutMs: 5000 });
  await dataIs(`${base}/p`, 'y');
  await node.close();
  assert.deepEqual(await fx.children(base), []);
});

test('close while the create is in flight leaves nothing: reply lost, and reply delayed', async () => {
  const base = uniquePath('pn-close-inflight');
  // Reply lost: close as soon as it is (the lookup by uuid finds and deletes it).
  {
    const { s, proxy } = await viaProxy();
    await fx.observer.mkdirp(`${base}/a`);
    const node = new PersistentNode(s, `${base}/a/n-`, { mode: 'PERSISTENT_SEQUENTIAL', protection: true });
    node.on('error', () => undefined);
    const lost = proxy.loseReply({ op: 'create', path: `${base}/a/` });
    node.start();
    await lost;
    await node.close({ timeoutMs: 15000 });
    assert.deepEqual(await fx.children(`${base}/a`), []);
  }
  // Reply lost at a plain persistent path (no protection: looked up by its path).
  {
    const { s, proxy } = await viaProxy();
    await fx.observer.mkdirp(`${base}/b`);
    const node = new PersistentNode(s, `${base}/b/p`, { mode: 'PERSISTENT' });
    node.on('error', () => undefined);
    const lost = proxy.loseReply({ op: 'create', path: `${base}/b/p` });
    node.start();
    await lost;
    await node.close({ timeoutMs: 15000 });
    assert.deepEqual(await fx.children(`${base}/b`), []);
  }
  // Reply delayed: the create is sent, close is called before its reply; the node it made goes.
  {
    const { s, proxy } = await viaProxy();
    await fx.observer.mkdirp(`${base}/c`);
    const node = new PersistentNode(s, `${base}/c/n-`, { mode: 'PERSISTENT_SEQUENTIAL', protection: true });
    const creates = s.counters.create;
    proxy.latency(300);
    node.start();
    await waitFor(() => s.counters.create > creates, { timeoutMs: 5000, message: 'the create was sent' });
    const closed = node.close({ timeoutMs: 15000 });
    await closed;
    proxy.pass();
    assert.deepEqual(await fx.children(`${base}/c`), []);
    assert.equal(node.actualPath, undefined);
  }
});

test('a blackhole: the first create waits (timeout is typed), then it is there; a deletion during a blackhole is repaired on the same session', async () => {
  const base = uniquePath('pn-blackhole');
  const { s, proxy } = await viaProxy();
  proxy.blackhole();
  await using node = new PersistentNode(s, `${base}/m`, { data: 'b' });
  node.on('error', () => undefined);
  node.start();
  await assert.rejects(node.waitForInitialCreate({ timeoutMs: 300 }), OperationTimeoutError);
  const ac = new AbortController();
  const aborted = node.waitForInitialCreate({ signal: ac.signal });
  ac.abort(new Error('caller gave up'));
  await assert.rejects(aborted, /caller gave up/);
  proxy.pass();
  await node.waitForInitialCreate({ timeoutMs: 15000 });
  const session = s.sessionId;
  // Cut off, deleted meanwhile, healed: the watch (re-sent on reconnect) reports it.
  proxy.blackhole();
  const suspended = nextState(s, 'SUSPENDED', 10000);
  await fx.observer.delete(`${base}/m`);
  await suspended;
  const back = nextCreated(node);
  proxy.pass();
  await back;
  assert.equal(s.sessionId, session, 'the same session');
  const got = await fx.observer.getData(`${base}/m`);
  assert.equal(got.stat.ephemeralOwner, session);
  assert.equal(got.data.toString(), 'b');
  await node.close();
  assert.deepEqual(await fx.children(base), []);
});

test('close under a blackhole keeps its deadline (a delete sent into the dead connection is not waited for), and the ephemeral goes with its session', async () => {
  const base = uniquePath('pn-close-bh');
  const { s, proxy } = await viaProxy(10_000);
  const node = new PersistentNode(s, `${base}/m`, { data: 'c' });
  node.on('error', () => undefined);
  node.start();
  await node.waitForInitialCreate({ timeoutMs: 10_000 });
  proxy.blackhole();
  const started = performance.now();
  await assert.rejects(node.close({ timeoutMs: 500 }), OperationTimeoutError);
  // The session would notice the dead connection after about 2/3 of its 10 s timeout.
  assert.ok(performance.now() - started < 3000, `close took ${Math.round(performance.now() - started)} ms`);
  proxy.pass();
  await s.close();
  await waitFor(async () => (await fx.children(base)).length === 0, { timeoutMs: 15_000, message: 'the ephemeral gone with its session' });
});

test('setData during a create in flight reaches the node; setData before start is used by the first create', async () => {
  const base = uniquePath('pn-data');
  const { s, proxy } = await viaProxy();
  await using node = new PersistentNode(s, `${base}/d`, { data: 'old' });
  await node.setData('before-start');
  const creates = s.counters.create;
  proxy.latency(200);
  node.start();
  await waitFor(() => s.counters.create > creates, { timeoutMs: 5000, message: 'the create was sent' });
  await node.setData('during-create');
  proxy.pass();
  await node.waitForInitialCreate({ timeoutMs: 10000 });
  await dataIs(`${base}/d`, 'during-create');
  // A write cut off by a lost reply is retried (setData is idempotent).
  const lost = proxy.loseReply({ op: 'setData', path: `${base}/d` });
  await node.setData('after-loss', { timeoutMs: 15000 });
  await lost;
  await dataIs(`${base}/d`, 'after-loss');
  await node.close();
});

test('an existing node at the path is adopted (our data onto it) and re-created once it goes', async () => {
  const base = uniquePath('pn-adopt');
  const [s, other] = await fx.sessionsApart(2);
  assert.ok(s && other);
  await other.mkdirp(base);
  await other.create(`${base}/x`, { mode: 'EPHEMERAL', data: 'theirs' });
  await using node = new PersistentNode(s, `${base}/x`, { data: 'ours' });
  node.start();
  await node.waitForInitialCreate({ timeoutMs: 10000 });
  await dataIs(`${base}/x`, 'ours');
  assert.equal((await fx.observer.exists(`${base}/x`))?.ephemeralOwner, other.sessionId);
  const back = nextCreated(node);
  await other.close();
  await back;
  await waitFor(async () => (await fx.observer.exists(`${base}/x`))?.ephemeralOwner === s.sessionId, { timeoutMs: 10000, message: 'ours now' });
  await dataIs(`${base}/x`, 'ours');
});

test('a persistent error backs off (a few requests a second); closing the session ends the loop and the wait', async () => {
  const base = uniquePath('pn-backoff');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  await fx.observer.mkdirp(base);
  await fx.observer.create(`${base}/blocked`, { mode: 'EPHEMERAL' });
  const node = new PersistentNode(s, `${base}/blocked/deeper`, { mode: 'PERSISTENT', errorBackoff: { baseDelayMs: 50, maxDelayMs: 200 } });
  const errors: Error[] = [];
  node.on('error', (e) => errors.push(e));
  const creates = s.counters.create;
  const started = performance.now();
  node.start();
  await assert.rejects(node.waitForInitialCreate({ timeoutMs: 1500 }), OperationTimeoutError);
  const seconds = (performance.now() - started) / 1000;
  const sent = s.counters.create - creates;
  assert.ok(errors.length >= 2, `retried: ${errors.length} errors`);
  assert.ok(sent <= 2 + 20 * seconds, `${sent} creates in ${seconds.toFixed(1)} s`);
  const waiting = assert.rejects(node.waitForInitialCreate(), ClosedError);
  await s.close();
  await waiting;
  await node.close();
});

test('bad input is refused with typed errors', async () => {
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  const bad: [string, () => unknown][] = [
    ['no session', () => new PersistentNode(undefined as never, '/a')],
    ['relative path', () => new PersistentNode(s, 'no-slash')],
    ['trailing slash', () => new PersistentNode(s, '/a/')],
    ['root', () => new PersistentNode(s, '/')],
    ['container mode', () => new PersistentNode(s, '/a', { mode: 'CONTAINER' as never })],
    ['number mode', () => new PersistentNode(s, '/a', { mode: 1 as never })],
    ['number data', () => new PersistentNode(s, '/a', { data: 5 as never })],
    ['oversize data', () => new PersistentNode(s, '/a', { data: Buffer.alloc(s.dataLimit + 1) })],
    ['string protection', () => new PersistentNode(s, '/a', { protection: 'yes' as never })],
    ['unknown option', () => new PersistentNode(s, '/a', { protect: true } as never)],
    ['bad backoff', () => new PersistentNode(s, '/a', { errorBackoff: { baseDelayMs: -1 } })],
    ['null options', () => new PersistentNode(s, '/a', null as never)],
  ];
  for (const [what, make] of bad) assert.throws(make, InvalidArgumentError, what);
  const node = new PersistentNode(s, uniquePath('pn-bad'));
  await assert.rejects(node.waitForInitialCreate(), InvalidArgumentError, 'not started');
  await assert.rejects(node.setData(Buffer.alloc(s.dataLimit + 1)), InvalidArgumentError);
  await assert.rejects(node.setData('x', { timeout: 5 } as never), InvalidArgumentError);
  node.start();
  assert.throws(() => node.start(), InvalidArgumentError, 'started twice');
  await assert.rejects(node.waitForInitialCreate({ timeoutMs: -1 }), InvalidArgumentError);
  await assert.rejects(node.waitForInitialCreate({ signal: 'x' as never }), InvalidArgumentError);
  await node.waitForInitialCreate({ timeoutMs: 10000 });
  assert.throws(() => node.close({ timeoutMs: 'soon' as never }), InvalidArgumentError);
  await node.close();
  await assert.rejects(node.setData('x'), ClosedError);
});
