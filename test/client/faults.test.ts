// Connection states under real faults: silent partitions (blackhole), server restarts, forced
// expiry, requests stranded by a lost session, retries through a dropped connection.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConnectionLossError, InvalidArgumentError, SessionExpiredError } from '../../src/errors.js';
import { ZkSession } from '../../src/client/index.js';
import { ChaosProxy, expireSession, waitFor } from '../../src/testing/index.js';
import { nextState, recordStates, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
const { pool } = fx;

async function proxied(options: { sessionTimeoutMs: number }): Promise<{ session: ZkSession; proxy: ChaosProxy }> {
  const proxy = await fx.proxy();
  const session = await pool.connect(proxy.connectString, options);
  return { session, proxy };
}

describe('silent partition (blackhole)', () => {
  test('is noticed within 2/3 of the session timeout: SUSPENDED, then RECONNECTED to the same session', async () => {
    const { session, proxy } = await proxied({ sessionTimeoutMs: 3000 });
    const id = session.sessionId;
    const timeout = session.timeoutMs;
    const states = recordStates(session);
    const suspended = nextState(session, 'SUSPENDED', timeout);
    proxy.blackhole();
    // node-zookeeper-client alone stays "connected" forever here; only the watchdog notices.
    await suspended;
    const reconnected = nextState(session, 'RECONNECTED', timeout * 2);
    proxy.pass();
    await reconnected;
    assert.equal(session.sessionId, id, 'same session');
    assert.deepEqual(states, ['SUSPENDED', 'RECONNECTED']);
  });

  test('past the session timeout: LOST while still partitioned, then a new session', async () => {
    const { session, proxy } = await proxied({ sessionTimeoutMs: 1500 });
    const base = uniquePath('blackhole-lost');
    await fx.observer.mkdirp(base);
    const eph = await session.create(`${base}/e`, { mode: 'EPHEMERAL' });
    const firstId = session.sessionId;
    const firstSignal = session.signal;
    const states = recordStates(session);
    const lost = nextState(session, 'LOST', session.timeoutMs * 3);
    proxy.blackhole();
    // A request sent into the partition must not hang: it is rejected once the session is lost.
    const stranded = session.getData(eph);
    await lost;
    assert.equal(proxy.mode, 'blackhole', 'LOST was raised locally, without hearing from the server');
    await assert.rejects(stranded, SessionExpiredError);
    assert.ok(firstSignal.aborted && firstSignal.reason instanceof SessionExpiredError);
    const connected = nextState(session, 'CONNECTED', 15000);
    proxy.pass();
    await connected;
    assert.notEqual(session.sessionId, firstId, 'a new session');
    assert.equal(session.generation, 2);
    assert.equal(session.signal.aborted, false);
    assert.deepEqual(states, ['SUSPENDED', 'LOST', 'CONNECTED']);
    // The server expired the old session: its ephemeral is gone.
    await waitFor(async () => (await fx.observer.exists(eph)) === null, { timeoutMs: 10000, message: 'old ephemeral deleted' });
    await fx.observer.deleteRecursive(base);
  });

  test('a hung server (accepts TCP, never answers) in the connect string is failed over', async () => {
    const hung = await fx.proxy();
    hung.blackhole();
    // The client shuffles hosts; whichever it tries first, it must end up connected.
    for (let i = 0; i < 3; i++) {
      const s = await ZkSession.connect(`${hung.connectString},${fx.server.connectString}`, { sessionTimeoutMs: 1500, connectTimeoutMs: 10000 });
      assert.equal(s.state, 'CONNECTED');
      await s.close();
    }
  });
});

describe('server restart and expiry', () => {
  test('restart within the session timeout: SUSPENDED, RECONNECTED, same session, earlier watch still fires', async () => {
    const session = await pool.connect(fx.server.connectString, { sessionTimeoutMs: 15000 });
    const base = uniquePath('restart');
    await session.mkdirp(base);
    const eph = await session.create(`${base}/e`, { mode: 'EPHEMERAL' });
    const watch = await session.getDataWatch(base);
    const id = session.sessionId;
    const states = recordStates(session);
    const suspended = nextState(session, 'SUSPENDED', 10000);
    await fx.server.kill();
    await suspended;
    const reconnected = nextState(session, 'RECONNECTED', 15000);
    await fx.server.restart();
    await reconnected;
    assert.equal(session.sessionId, id);
    assert.deepEqual(states, ['SUSPENDED', 'RECONNECTED']);
    assert.ok(await session.exists(eph), 'ephemeral survived');
    const other = await pool.connect(fx.server.connectString);
    await other.setData(base, 'after restart');
    assert.equal((await watch.changed).type, 'NODE_DATA_CHANGED');
    await session.deleteRecursive(base);
  });

  test('forced expiry: LOST, pending watches reject, ephemerals gone, then a new session', async () => {
    const { session, proxy } = await proxied({ sessionTimeoutMs: 4000 });
    const base = uniquePath('expire');
    await fx.observer.mkdirp(base);
    const eph = await session.create(`${base}/e`, { mode: 'EPHEMERAL' });
    const watch = await session.getDataWatch(base);
    const firstId = session.sessionId;
    const sessions: bigint[] = [];
    session.on('session', (info) => sessions.push(info.sessionId));
    const connected = nextState(session, 'CONNECTED', 20000);
    await expireSession(session, proxy);
    await assert.rejects(watch.changed, SessionExpiredError);
    assert.equal(await fx.observer.exists(eph), null, 'the server expired the session');
    await connected;
    assert.equal(sessions.length, 1);
    assert.notEqual(sessions[0], firstId);
    assert.equal(session.sessionId, sessions[0]);
    // The new session works.
    await session.create(`${base}/again`, { mode: 'EPHEMERAL' });
    await fx.observer.deleteRecursive(base);
  });

  test('with renewOnLoss off, LOST is final: calls fail with SessionExpiredError', async () => {
    const proxy = await fx.proxy();
    const session = await pool.connect(proxy.connectString, { sessionTimeoutMs: 4000, renewOnLoss: false });
    await expireSession(session, proxy);
    assert.equal(session.state, 'LOST');
    await assert.rejects(session.getData('/'), SessionExpiredError);
  });
});

describe('retries', () => {
  test('an idempotent read is retried through a dropped connection', async () => {
    const { session, proxy } = await proxied({ sessionTimeoutMs: 4000 });
    proxy.latency(200);
    const read = session.getChildren('/');
    // Drop the connection while the request is in flight.
    await waitFor(() => proxy.bytes.toTarget > 0 && proxy.connections > 0, { timeoutMs: 2000 });
    const lossSeen = nextState(session, 'SUSPENDED', 5000);
    proxy.dropAll();
    await lossSeen;
    proxy.pass();
    const result = await read;
    assert.ok(result.children.includes('zookeeper'));
  });

  test('a create is not retried: connection loss surfaces as ConnectionLossError', async () => {
    const { session, proxy } = await proxied({ sessionTimeoutMs: 4000 });
    const base = uniquePath('noretry');
    await fx.observer.mkdirp(base);
    const sent = proxy.bytes.toTarget;
    proxy.latency(300);
    const create = session.create(`${base}/s-`, { mode: 'PERSISTENT_SEQUENTIAL' });
    await waitFor(() => proxy.bytes.toTarget > sent, { timeoutMs: 2000 });
    proxy.dropAll();
    await assert.rejects(create, ConnectionLossError);
    proxy.pass();
    await session.waitConnected({ timeoutMs: 5000 });
    // Whether the server applied it is unknown, but it was sent once: at most one node.
    const { children } = await fx.observer.getChildren(base);
    assert.ok(children.length <= 1, `at most one node, got ${children.length}`);
    await fx.observer.deleteRecursive(base);
  });
});

describe('a reply lost after the request got through (ChaosProxy.loseReply)', () => {
  test('the create is applied, the caller sees a connection loss, earlier replies arrive', async () => {
    const { session, proxy } = await proxied({ sessionTimeoutMs: 4000 });
    const base = uniquePath('lose-reply');
    await fx.observer.mkdirp(base);
    const lost = proxy.loseReply({ op: 'create', path: `${base}/b` });
    // Pipelined: the first reply arrives before the lost one, on the same connection.
    const first = session.create(`${base}/a`);
    const second = session.create(`${base}/b`);
    assert.equal(await first, `${base}/a`);
    await assert.rejects(second, ConnectionLossError);
    await lost;
    assert.ok(await fx.observer.exists(`${base}/b`), 'the request whose reply was lost was applied');
    // The session survives (same id) and goes on working.
    const id = session.sessionId;
    assert.ok(await session.exists(`${base}/b`));
    assert.equal(session.sessionId, id);
    await fx.observer.deleteRecursive(base);
  });

  test('rejects when no matching request comes within its deadline, and refuses bad matches', async () => {
    const proxy = await fx.proxy();
    await assert.rejects(proxy.loseReply({ op: 'sync' }, { timeoutMs: 50 }), /no reply to a matching request/);
    assert.throws(() => proxy.loseReply({ op: 'nope' as 'sync' }), InvalidArgumentError);
    assert.throws(() => proxy.loseReply({ path: '' }), InvalidArgumentError);
    assert.throws(() => proxy.loseReply({}, { timeoutMs: 0 }), InvalidArgumentError);
  });
});
