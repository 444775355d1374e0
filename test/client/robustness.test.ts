// The session layer under a refusing server, oversize requests, throttling, aborted signals and
// values the platform rejects (issue 10, items 3-6 and 8): every call settles within its own
// bounds with a typed error, and nothing it gave up on reaches the server later.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ZkSession } from '../../src/client/index.js';
import { ConnectionLossError, InvalidArgumentError } from '../../src/errors.js';
import { freePort, TestingServer, waitFor, withTimeout } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** Resolves to how long `p` took to reject, and its error. */
async function rejection(p: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const start = performance.now();
  try {
    await p;
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
  throw new Error('expected a rejection');
}

describe('a server that refuses connections', () => {
  test('calls reject with ConnectionLossError (sent: false) after the connect timeout, and are never sent later', async () => {
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000, connectTimeoutMs: 700 });
    const base = uniquePath('refused');
    await fx.observer.mkdirp(base);
    const suspended = nextState(session, 'SUSPENDED', 5000);
    proxy.reject(true);
    proxy.dropAll();
    await suspended;
    const before = session.counters;
    const calls = [session.create(`${base}/late`), session.getData(base), session.exists(base), session.multi([{ type: 'create', path: `${base}/late2` }])];
    for (const c of calls) {
      const { ms, error } = await rejection(c);
      assert.ok(error instanceof ConnectionLossError, String(error));
      assert.equal(error.sent, false, 'it says it was not sent');
      assert.ok(ms < 700 + 1000, `settled after ${ms.toFixed(0)} ms (connect timeout 700 ms)`);
    }
    assert.deepEqual(session.counters, before, 'nothing went out');
    const reconnected = nextState(session, 'RECONNECTED', 6000);
    proxy.reject(false);
    await reconnected;
    // A request handed to the client while disconnected would have gone out now.
    await session.sync(base);
    assert.equal(await fx.observer.exists(`${base}/late`), null);
    assert.equal(await fx.observer.exists(`${base}/late2`), null);
    await fx.observer.deleteRecursive(base);
  });

  test('a session that never connected: calls settle within the connect timeout', async () => {
    const port = await freePort();
    const session = new ZkSession(`127.0.0.1:${port}`, { connectTimeoutMs: 500, spinDelayMs: 20 });
    try {
      const { ms, error } = await rejection(session.create('/never'));
      assert.ok(error instanceof ConnectionLossError && !error.sent);
      assert.ok(ms < 500 + 1000, `${ms} ms`);
    } finally {
      await withTimeout(session.close(), 3000, 'close of a never-connected session');
    }
  });

  test('a call aborted while it waits for a connection rejects with the reason and is never sent', async () => {
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000, connectTimeoutMs: 5000 });
    const base = uniquePath('abort-unsent');
    await fx.observer.mkdirp(base);
    const suspended = nextState(session, 'SUSPENDED', 5000);
    proxy.reject(true);
    proxy.dropAll();
    await suspended;
    const controller = new AbortController();
    const create = session.create(`${base}/x`, { signal: controller.signal });
    const read = session.getChildren(base, { signal: controller.signal });
    const reason = new Error('gave up');
    controller.abort(reason);
    await assert.rejects(create, (e) => e === reason);
    await assert.rejects(read, (e) => e === reason);
    const reconnected = nextState(session, 'RECONNECTED', 6000);
    proxy.reject(false);
    await reconnected;
    await session.sync(base);
    assert.equal(await fx.observer.exists(`${base}/x`), null, 'the aborted create was never sent');
    await fx.observer.deleteRecursive(base);
  });
});

describe('requests the server cannot accept', () => {
  test('a transaction over the packet limit is refused before it is sent; the connection stays up', async () => {
    const [session] = (await fx.sessionsN(1)) as [ZkSession];
    const base = uniquePath('oversize');
    const states: string[] = [];
    session.on('state', (s) => states.push(s));
    const before = session.counters.multi;
    const ops = Array.from({ length: 2000 }, (_, i) => ({ type: 'create' as const, path: `${base}/n${i}`, data: Buffer.alloc(600) }));
    await assert.rejects(session.multi(ops), (e: unknown) => e instanceof InvalidArgumentError && /packet limit/.test(e.message));
    assert.equal(session.counters.multi, before, 'not sent');
    // With maxDataBytes raised above what the server reads, the packet limit still applies.
    const big = await fx.pool.connect(fx.server.connectString, { maxDataBytes: 4_000_000 });
    await assert.rejects(big.create(`${base}-big`, { data: Buffer.alloc(1_500_000) }), InvalidArgumentError);
    await assert.rejects(big.setData('/', Buffer.alloc(1_100_000)), InvalidArgumentError);
    assert.equal(big.counters.create + big.counters.setData, 0);
    assert.equal(await fx.observer.exists(`${base}-big`), null);
    assert.deepEqual(states, [], 'no connection was dropped');
    // Just under the limit goes through.
    await big.create(`${base}-ok`, { data: Buffer.alloc(1_000_000) });
    await big.delete(`${base}-ok`);
  });
});

describe('a throttling server (THROTTLED_OP)', () => {
  test('reads and writes are retried with backoff until they go through', async () => {
    const server = await TestingServer.start({
      jvmArgs: ['-Dzookeeper.request_throttle_max_requests=1', '-Dzookeeper.throttled_op_wait_time=1', '-Dzookeeper.request_throttle_stall_time=20'],
    });
    try {
      const session = await fx.pool.connect(server.connectString, { retry: { maxRetries: 40, baseDelayMs: 5, maxDelayMs: 200, deadlineMs: 30_000 } });
      const base = uniquePath('throttled');
      await session.mkdirp(base);
      const writes = await Promise.all(Array.from({ length: 100 }, (_, i) => session.create(`${base}/n${i}`)));
      assert.equal(writes.length, 100);
      const reads = await Promise.all(Array.from({ length: 100 }, (_, i) => session.getData(`${base}/n${i}`)));
      assert.equal(reads.length, 100);
      assert.ok(session.counters.create > 100 || session.counters.getData > 100, 'some were throttled and sent again');
      assert.equal((await session.getChildren(base)).children.length, 100, 'each create applied once');
      await session.close();
    } finally {
      await server.close();
    }
  });
});

describe('aborted signals and values the platform rejects', () => {
  test('an already aborted signal rejects with its reason, connected or not', async () => {
    const [session] = (await fx.sessionsN(1)) as [ZkSession];
    const reason = new Error('stop');
    const signal = AbortSignal.abort(reason);
    await assert.rejects(session.waitConnected({ signal }), (e) => e === reason);
    await assert.rejects(session.getData('/', { signal }), (e) => e === reason);
    await assert.rejects(session.create('/x', { signal }), (e) => e === reason);
    await assert.rejects(session.getDataWatch('/', { signal }), (e) => e === reason);
    assert.equal(session.activeWatchCount, 0);
  });

  test('timeouts beyond what a timer can wait, bad connect strings and stringly booleans are InvalidArgumentError', async () => {
    const [session] = (await fx.sessionsN(1)) as [ZkSession];
    await assert.rejects(session.waitConnected({ timeoutMs: 2 ** 31 }), InvalidArgumentError);
    for (const connectString of ['127.0.0.1:abc', '127.0.0.1:-1', '127.0.0.1:2181:9', '127.0.0.1:0', '127.0.0.1:70000', '[::1]:2181', 'a,,b', 'a b:1']) {
      assert.throws(() => new ZkSession(connectString), InvalidArgumentError, connectString);
    }
    assert.throws(() => new ZkSession(fx.server.connectString, { connectTimeoutMs: 1e12 }), InvalidArgumentError);
    assert.throws(() => new ZkSession(fx.server.connectString, { renewOnLoss: 'false' as unknown as boolean }), InvalidArgumentError);
    assert.throws(() => new ZkSession(fx.server.connectString, { maxPacketBytes: 10 }), InvalidArgumentError);
    await assert.rejects(ZkSession.connect(fx.server.connectString, { connectTimeoutMs: 2 ** 31 }), InvalidArgumentError);
  });
});

describe('watch reads given up', () => {
  test('a watch read sent into a blackhole rejects at its signal; its late reply arms the watch and removes it (none left in the client or on the server)', async () => {
    const path = uniquePath('watch-given-up');
    await fx.observer.mkdirp(path);
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 10_000 });
    proxy.blackhole();
    const started = performance.now();
    for (const read of [
      (signal: AbortSignal) => s.existsWatch(`${path}/x`, { signal }),
      (signal: AbortSignal) => s.getDataWatch(path, { signal }),
      (signal: AbortSignal) => s.getChildrenWatch(path, { signal }),
    ]) {
      await assert.rejects(read(AbortSignal.timeout(200)), (err: Error) => err.name === 'TimeoutError');
    }
    // The session would notice the dead connection after about 6.7 s; the reads did not wait for it.
    assert.ok(performance.now() - started < 3000, `the reads took ${Math.round(performance.now() - started)} ms`);
    proxy.pass();
    await s.sync(path, { signal: AbortSignal.timeout(15_000) });
    await waitFor(() => s.activeWatchCount === 0, { timeoutMs: 15_000, message: 'no watch left in the client' });
    await fx.waitNoWatches(s, path);
  });
});
