// What goes out on a reconnect (issues 9.7 and 9.9): nothing of a generation we declared lost
// (no ConnectRequest with its id and password), and on an authenticated session the
// authentication before any request queued while disconnected.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Acls } from '../../src/client/index.js';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

describe('reconnects', () => {
  test('a generation declared LOST never reconnects: the old session expires on the server as counted', async () => {
    const T = 2000;
    const proxy = await fx.proxy();
    // Quick reconnect attempts: an old generation's pending attempt would fire right after LOST.
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: T, spinDelayMs: 20 });
    const base = uniquePath('no-revival');
    await fx.observer.mkdirp(base);
    const eph = await session.create(`${base}/e`, { mode: 'EPHEMERAL' });
    const oldId = session.sessionId;
    const lost = new Promise<void>((resolve) =>
      session.on('state', (s) => {
        if (s !== 'LOST') return;
        // Let connections through the moment we give the session up.
        proxy.reject(false);
        resolve();
      }),
    );
    proxy.reject(true);
    proxy.dropAll();
    await withTimeout(lost, 3 * T, 'LOST');
    // The server expires the session a full T after it last heard from us (we said LOST at
    // 0.95 T), rounded up to its next tick (200 ms): well within half a timeout of our LOST. A
    // reconnect with the old id would have revived it for another T.
    await waitFor(async () => (await fx.observer.exists(eph)) === null, { timeoutMs: T / 2, message: 'the old session expired on the server' });
    await waitFor(() => session.state === 'CONNECTED', { timeoutMs: 3 * T, message: 'a new session' });
    assert.notEqual(session.sessionId, oldId);
    assert.equal(session.generation, 2);
    await fx.observer.deleteRecursive(base);
  });

  test('requests sent into a partition are discarded when we drop the connection: healed right after LOST, the old session still expires as counted', async () => {
    const T = 2000;
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: T });
    const base = uniquePath('no-late-packets');
    await fx.observer.mkdirp(base);
    const eph = await session.create(`${base}/e`, { mode: 'EPHEMERAL' });
    const lost = nextState(session, 'LOST', 3 * T);
    proxy.blackhole();
    // Sent into the partition (the proxy holds it, as a network would): it must never arrive.
    const stranded = session.getData(eph).catch(() => undefined);
    await lost;
    // Heal at once: bytes the kernel still held for a closed (not reset) socket would reach the
    // server now and touch the session we gave up, keeping its ephemeral for another timeout.
    proxy.pass();
    await stranded;
    await waitFor(async () => (await fx.observer.exists(eph)) === null, { timeoutMs: T / 2, message: 'the old session expired on the server' });
    await fx.observer.deleteRecursive(base);
  });

  test('auth goes out before the requests queued while disconnected (CREATOR_ALL node readable after reconnect)', async () => {
    const proxy = await fx.proxy();
    const auth = [{ scheme: 'digest', credentials: 'carol:pw' }];
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 6000, auth });
    const base = uniquePath('auth-first');
    await fx.observer.mkdirp(base);
    const secret = await session.create(`${base}/secret`, { data: 's', acl: Acls.CREATOR_ALL });
    const suspended = nextState(session, 'SUSPENDED', 5000);
    proxy.reject(true);
    proxy.dropAll();
    await suspended;
    // Queued while disconnected: they go out right after the next handshake.
    const reads = Array.from({ length: 5 }, () => session.getData(secret));
    const reconnected = nextState(session, 'RECONNECTED', 5000);
    proxy.reject(false);
    await reconnected;
    for (const r of await Promise.all(reads)) assert.equal(r.data.toString(), 's');
    await session.delete(secret);
    await fx.observer.deleteRecursive(base);
  });

  test('a connection dropped in the middle of a reply: the next connection starts clean, and the read is answered after the reconnect', async () => {
    const proxy = await fx.proxy();
    const session = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 6000 });
    const base = uniquePath('cut-reply');
    await fx.observer.mkdirp(base);
    // Far more than one read of the proxy's socket: the first chunks of the reply reach the
    // client, then the connection drops (loseReply cuts at the chunk that completes it).
    const big = Buffer.alloc(512 * 1024, 7);
    await fx.observer.create(`${base}/big`, { data: big });
    const before = proxy.bytes.toClient;
    const cut = proxy.loseReply({ op: 'getData', path: `${base}/big` });
    const reconnected = nextState(session, 'RECONNECTED', 5000);
    // Retried after the reconnect (a read): answered in full, over the new connection.
    const read = session.getData(`${base}/big`);
    await cut;
    // Its first chunks reached the client; the one that completes it did not.
    assert.ok(proxy.bytes.toClient > before, 'part of the reply reached the client');
    await reconnected;
    assert.ok((await read).data.equals(big));
    await fx.observer.deleteRecursive(base);
  });
});
