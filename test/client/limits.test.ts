// The session layer at its limits (issue 22), against real servers: a watch set over the packet
// limit (re-registered in batches), a reconnect that fails after every handshake (backoff, and
// the session ends LOST), request ids past 2^31, `sent: false` after an earlier attempt was
// sent, sizes under a multi-byte chroot, size checks of every request kind, and an existence
// watch filed for an existing node.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import { MAX_XID, type RawClient } from '../../src/client/nzc.js';
import { ConnectionLossError, InvalidArgumentError, NoNodeError, SessionExpiredError } from '../../src/errors.js';
import { ChaosProxy, TestingServer, waitFor, withTimeout, type LoseReplyMatch } from '../../src/testing/index.js';
import { nextState, recordStates, ServerFixture, SessionPool, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** The session's node-zookeeper-client instance (white-box: its request id counter). */
function rawOf(session: ZkSession): RawClient {
  return (session as unknown as { gen: { raw: RawClient } }).gen.raw;
}

/** `count` child paths of `base` of about `bytes` bytes each. */
function longPaths(base: string, count: number, bytes: number): string[] {
  return Array.from({ length: count }, (_, i) => `${base}/${'w'.repeat(bytes - base.length - 8)}-${String(i).padStart(5, '0')}`);
}

/** Creates `paths` (pipelined) through `session`. */
async function createAll(session: ZkSession, paths: readonly string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 200) await Promise.all(paths.slice(i, i + 200).map((p) => session.create(p)));
}

describe('re-registering a watch set over the packet limit (issue 22.1)', () => {
  test('1100 data watches on 1000-byte paths (1.1 MB): after a dropped connection, one reconnect and every watch still fires', async (t) => {
    const base = uniquePath('big-watch-set');
    await fx.observer.mkdirp(base);
    const paths = longPaths(base, 1100, 1000);
    await createAll(fx.observer, paths);
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
    const watched = await Promise.all(paths.map((p) => session.getDataWatch(p)));
    const fired = new Set<string>();
    for (const [i, w] of watched.entries()) void w.changed.then((e) => e.type === 'NODE_DATA_CHANGED' && fired.add(paths[i] ?? ''));
    const states = recordStates(session);
    const sentBefore = proxy.bytes.toTarget;
    const reconnected = nextState(session, 'RECONNECTED', 10_000);
    proxy.dropAll();
    await reconnected;
    // A round trip behind the re-registration: every SetWatches packet was answered by then.
    await session.sync(base);
    const rewatchBytes = proxy.bytes.toTarget - sentBefore;
    await Promise.all(paths.map((p) => fx.observer.setData(p, 'changed')));
    await waitFor(() => fired.size === paths.length, { timeoutMs: 20_000, message: `every watch fired (${fired.size} of ${paths.length})` });
    const reconnects = states.filter((s) => s === 'RECONNECTED').length;
    t.diagnostic(`1100 watches: ${reconnects} reconnect(s), ${rewatchBytes} bytes sent to re-register them`);
    assert.equal(reconnects, 1, `states after the drop: ${states.join(' ')}`);
    assert.ok(rewatchBytes < 1_300_000, `${rewatchBytes} bytes re-sent`);
    assert.equal(session.state, 'RECONNECTED');
    await fx.observer.deleteRecursive(base);
  });

  describe('a server that drops the connection after every handshake (jute.maxbuffer 64 kB, a client told 1 MB)', () => {
    let small: TestingServer;
    const pool = new SessionPool();
    before(async () => {
      small = await TestingServer.start({ jvmArgs: ['-Djute.maxbuffer=65536'] });
    });
    after(async () => {
      await pool.closeAll();
      await small?.close();
    });

    test('reconnects back off and the session ends LOST at its deadline, instead of reconnecting forever', async (t) => {
      const T = 4000;
      const setup = await pool.connect(small.connectString);
      const base = uniquePath('storm');
      await setup.mkdirp(base);
      // 100 kB of watches: one SetWatches packet over the server's limit (each read is 1 kB).
      const paths = longPaths(base, 100, 1000);
      await createAll(setup, paths);
      const proxy = await ChaosProxy.start({ targetPort: small.port });
      try {
        const session = await pool.connect(proxy.connectString, { sessionTimeoutMs: T, spinDelayMs: 20 });
        assert.equal(session.timeoutMs, T);
        const watched = await Promise.all(paths.map((p) => session.getDataWatch(p)));
        const states = recordStates(session);
        const lost = nextState(session, 'LOST', 2 * T);
        const start = performance.now();
        proxy.dropAll();
        await lost;
        const ms = performance.now() - start;
        const attempts = states.filter((s) => s === 'RECONNECTED').length;
        t.diagnostic(`LOST after ${ms.toFixed(0)} ms and ${attempts} attempts that got through the handshake`);
        // Without backoff: hundreds of attempts in those seconds, and never LOST.
        assert.ok(attempts >= 1 && attempts <= 15, `${attempts} attempts: ${states.join(' ')}`);
        for (const w of watched) await assert.rejects(w.changed, SessionExpiredError);
        // The new session has no watches: it connects and works.
        await session.waitConnected({ timeoutMs: 2 * T });
        assert.equal(session.generation, 2);
        assert.ok((await session.exists(paths[0] ?? '/')) !== null);
      } finally {
        await proxy.close();
      }
      await setup.deleteRecursive(base);
    });
  });
});

describe('request ids past 2^31 (issue 22.2)', () => {
  test('calls, transactions and heartbeats go on across the wrap, back to 1, and nothing throws from a timer', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => {
      uncaught.push(err);
    };
    process.on('uncaughtException', onUncaught);
    try {
      const session = await fx.pool.connect(fx.server.connectString, { sessionTimeoutMs: 4000 });
      const base = uniquePath('xid-wrap');
      await session.mkdirp(base);
      const cm = rawOf(session).connectionManager;
      cm.xid = MAX_XID - 3;
      // Our frames, the client's own encoding (multi) and reads, each with an xid of its own.
      for (let i = 0; i < 3; i++) {
        await session.create(`${base}/n${i}`);
        await session.multi([{ type: 'check', path: `${base}/n${i}` }]);
        await session.getData(`${base}/n${i}`);
      }
      assert.ok(cm.xid >= 1 && cm.xid < 20, `the next xid is ${cm.xid}`);
      // Heartbeats (sent from a timer) across the wrap: the last id, then 1.
      cm.xid = MAX_XID - 1;
      const heartbeats = session.counters.heartbeat;
      await waitFor(() => session.counters.heartbeat >= heartbeats + 2, { timeoutMs: 8000, message: 'two heartbeats across the wrap' });
      assert.ok(cm.xid >= 1 && cm.xid < 10, `the next xid is ${cm.xid}`);
      await session.sync(base);
      assert.equal(session.state, 'CONNECTED');
      assert.deepEqual(uncaught, []);
      await session.deleteRecursive(base);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('sent: false means no attempt of the call reached the server (issue 22.3)', () => {
  /**
   * Runs `call` while the reply to its request matching `match` is lost and the connection
   * closed; reconnects are refused from then on, so a retry waits the connect timeout and is not
   * sent. Resolves to the call's error, with reconnects allowed again.
   */
  async function lostReplyError(proxy: ChaosProxy, session: ZkSession, match: LoseReplyMatch, call: () => Promise<unknown>): Promise<ConnectionLossError> {
    const lost = proxy.loseReply(match).then(() => proxy.reject(true));
    const error = await call().then(
      () => undefined,
      (err: unknown) => err,
    );
    await lost;
    assert.ok(error instanceof ConnectionLossError, String(error));
    proxy.reject(false);
    await session.waitConnected({ timeoutMs: 5000 });
    return error;
  }

  const setup = async (label: string): Promise<{ proxy: ChaosProxy; session: ZkSession; base: string }> => {
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000, connectTimeoutMs: 500 });
    return { proxy, session, base: uniquePath(label) };
  };

  test('delete: the first attempt applied, its reply lost, the retry never sent: the error says sent', async () => {
    const { proxy, session, base } = await setup('sent-delete');
    await fx.observer.mkdirp(`${base}/gone`);
    const error = await lostReplyError(proxy, session, { op: 'delete', path: `${base}/gone` }, () => session.delete(`${base}/gone`));
    assert.equal(error.sent, true, error.message);
    assert.equal(await fx.observer.exists(`${base}/gone`), null, 'the first attempt deleted it');
    await fx.observer.deleteRecursive(base);
  });

  test('deleteRecursive and mkdirp: an inner request reached the server, its reply lost, nothing sent after: the error says sent', async () => {
    const { proxy, session, base } = await setup('sent-tree');
    await fx.observer.mkdirp(`${base}/tree/leaf`);
    const deleteError = await lostReplyError(proxy, session, { op: 'delete', path: `${base}/tree/leaf` }, () => session.deleteRecursive(`${base}/tree`));
    assert.equal(deleteError.sent, true, deleteError.message);
    assert.equal(await fx.observer.exists(`${base}/tree/leaf`), null, 'the leaf was deleted');
    // mkdirp tries the deepest create first: it reaches the server (refused there, NoNode) and its
    // reply is lost; the parent's create that would follow is never sent.
    const mkdirError = await lostReplyError(proxy, session, { op: 'create', path: `${base}/made/deeper` }, () => session.mkdirp(`${base}/made/deeper`));
    assert.equal(mkdirError.sent, true, mkdirError.message);
    assert.equal(await fx.observer.exists(`${base}/made`), null, 'nothing was created, yet a request of the call reached the server');
    await fx.observer.deleteRecursive(base);
  });
});

describe('sizes in bytes under a multi-byte chroot (issue 22.4)', () => {
  test('a create is refused exactly when its encoded size (a 3-byte-per-character chroot counted in bytes) is over the limit', async () => {
    const chroot = `${uniquePath('chroot')}-${'日'.repeat(3000)}`;
    await fx.observer.mkdirp(chroot);
    const session = await fx.pool.connect(`${fx.server.connectString}${chroot}`, { maxDataBytes: 2_000_000 });
    const states = recordStates(session);
    const limit = 1_048_575;
    // create: xid, op, path (chroot + '/n'), data, one open ACL (perms, 'world', 'anyone'), flags.
    const fixed = 8 + 4 + Buffer.byteLength(`${chroot}/n`) + 4 + (4 + 4 + 4 + 5 + 4 + 6) + 4;
    const utf16 = 8 + 4 + `${chroot}/n`.length + 4 + (4 + 4 + 4 + 5 + 4 + 6) + 4;
    assert.ok(fixed - utf16 >= 6000);
    const before = session.counters.create;
    // Within the limit counted in UTF-16 units, 6 kB over it in bytes: the server would drop it.
    await assert.rejects(session.create('/n', { data: Buffer.alloc(limit - utf16 - 100) }), InvalidArgumentError);
    await assert.rejects(session.create('/n', { data: Buffer.alloc(limit - fixed + 1) }), InvalidArgumentError);
    assert.equal(session.counters.create, before, 'nothing was sent');
    // Exactly at the limit: the server takes it.
    await session.create('/n', { data: Buffer.alloc(limit - fixed) });
    assert.equal((await fx.observer.exists(`${chroot}/n`))?.dataLength, limit - fixed);
    assert.deepEqual(states, [], 'the connection never dropped');
    await fx.observer.deleteRecursive(chroot);
  });
});

describe('every request kind is size-checked (issue 22.5)', () => {
  test('reads, sync, delete and watch-setting reads of an oversize path are refused before they are sent', async () => {
    const session = await fx.pool.connect(fx.server.connectString);
    const states = recordStates(session);
    const huge = `/${'p'.repeat(1_048_600)}`;
    const before = session.counters;
    const calls: [string, () => Promise<unknown>][] = [
      ['exists', () => session.exists(huge)],
      ['getData', () => session.getData(huge)],
      ['getChildren', () => session.getChildren(huge)],
      ['sync', () => session.sync(huge)],
      ['delete', () => session.delete(huge)],
      ['deleteRecursive', () => session.deleteRecursive(huge)],
      ['getDataWatch', () => session.getDataWatch(huge)],
      ['getChildrenWatch', () => session.getChildrenWatch(huge)],
      ['existsWatch', () => session.existsWatch(huge)],
      ['setData', () => session.setData(huge, 'x')],
      ['create', () => session.create(huge)],
      ['mkdirp', () => session.mkdirp(huge)],
    ];
    for (const [name, call] of calls) await assert.rejects(withTimeout(call(), 2000, name), InvalidArgumentError, name);
    assert.deepEqual(session.counters, before, 'nothing was sent');
    assert.deepEqual(states, [], 'the connection never dropped');
  });

  test('a watch whose re-registration would be over the limit is refused, though the same read without a watch fits', async () => {
    const session = await fx.pool.connect(fx.server.connectString);
    const states = recordStates(session);
    // getData: 13 bytes + the path; the SetWatches of that one path: 32 bytes + the path.
    const path = `/${'q'.repeat(1_048_575 - 13 - 1)}`;
    await assert.rejects(session.getData(path), NoNodeError, 'the server read the largest read it takes');
    await assert.rejects(session.getDataWatch(path), InvalidArgumentError);
    await assert.rejects(session.existsWatch(path), InvalidArgumentError);
    assert.deepEqual(states, [], 'the connection never dropped');
  });
});

describe('existsWatch on an existing node, answered after the previous watch fired (issue 22.6)', () => {
  test('filed as the data watch the server set: a reconnect does not fire it with NODE_CREATED', async () => {
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 8000 });
    const base = uniquePath('exists-watch');
    const path = `${base}/n`;
    await fx.observer.mkdirp(path);
    const first = await session.getDataWatch(path);
    const order: string[] = [];
    void first.changed.then(() => order.push('first fired'));
    // The server sends the notification of our setData before its reply, and answers the
    // existsWatch after both: the read went out with the first watch's entry, now fired.
    const write = session.setData(path, 'v1');
    const second = await session.existsWatch(path);
    order.push('exists answered');
    await write;
    assert.deepEqual(order, ['first fired', 'exists answered']);
    assert.ok(second.result !== null);
    let early: string | undefined;
    void second.changed.then((e) => {
      early = e.type;
    });
    const reconnected = nextState(session, 'RECONNECTED', 10_000);
    proxy.dropAll();
    await reconnected;
    // A round trip behind the re-registered watches: any notification they caused came first.
    await session.getData(path);
    assert.equal(early, undefined, 'the watch fired for a node that never changed');
    await fx.observer.setData(path, 'v2');
    assert.equal((await withTimeout(second.changed, 5000, 'the watch fires on a change')).type, 'NODE_DATA_CHANGED');
    await fx.observer.deleteRecursive(base);
  });
});
