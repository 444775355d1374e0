// SASL DIGEST-MD5 against a real server with a JAAS DigestLoginModule (the test kit's `sasl`
// option): recipes on a path only alice may use, refusals that fail fast and typed, and a
// reconnect that authenticates again before the requests queued while disconnected.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Acls, AuthFailedError, DistributedQueue, Mutex, NoAuthError, Perms, saslAcl, ZkSession, type SessionOptions } from '../../src/index.js';
import { ChaosProxy, TestingServer, withTimeout } from '../../src/testing/index.js';
import { nextState, SessionPool, uniquePath } from '../helpers.js';

const USERS = { alice: 'alice-secret', bob: 'bob-secret' };
const alice = { mechanism: 'DIGEST-MD5', username: 'alice', password: USERS.alice } as const;
const bob = { mechanism: 'DIGEST-MD5', username: 'bob', password: USERS.bob } as const;
// A timeout whose handshake bound (T/3, at most 2 s) leaves the SASL round trips room.
const T = 6000;

let server: TestingServer;
let plain: ZkSession;
const pool = new SessionPool();
const proxies: ChaosProxy[] = [];

before(async () => {
  server = await TestingServer.start({ sasl: { users: USERS } });
  plain = await pool.connect(server.connectString, { sessionTimeoutMs: 30_000 });
});
after(async () => {
  await pool.closeAll();
  await Promise.all(proxies.map((p) => p.close()));
  await server?.close();
});

const connect = (sasl: SessionOptions['sasl'], options: SessionOptions = {}, to = server.connectString): Promise<ZkSession> => pool.connect(to, { sessionTimeoutMs: T, sasl, ...options });

/** A base path that only alice may use (sasl:alice:cdrwa), readable by nobody else. */
async function aliceOnly(name: string, as: ZkSession): Promise<string> {
  const base = uniquePath(name);
  await plain.mkdirp(base.slice(0, base.lastIndexOf('/')));
  await as.create(base, { acl: [saslAcl('alice')] });
  return base;
}

/** Connects expecting a refusal; returns the error and how long it took. */
async function refused(options: SessionOptions): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  const err = await ZkSession.connect(server.connectString, { sessionTimeoutMs: T, connectTimeoutMs: 10_000, ...options }).then(
    async (s) => {
      await s.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  return { err, ms: performance.now() - started };
}

describe('SASL DIGEST-MD5', () => {
  test('alice authenticates: a node with sasl:alice is hers alone (bob and an unauthenticated session get NoAuth)', async () => {
    const a = await connect(alice);
    const b = await connect(bob);
    const base = await aliceOnly('sasl-acl', a);
    await a.create(`${base}/secret`, { data: 'for alice', acl: [saslAcl('alice'), saslAcl('bob', Perms.READ)] });
    assert.equal((await a.getData(`${base}/secret`)).data.toString(), 'for alice');
    // bob may read the one node he was granted READ on, and nothing else.
    assert.equal((await b.getData(`${base}/secret`)).data.toString(), 'for alice');
    await assert.rejects(b.setData(`${base}/secret`, 'bob was here'), NoAuthError);
    await assert.rejects(b.getChildren(base), NoAuthError);
    await assert.rejects(plain.getData(`${base}/secret`), NoAuthError);
    await a.deleteRecursive(base);
  });

  test('Acls.CREATOR_ALL on a SASL session names its SASL user', async () => {
    const a = await connect(alice);
    const b = await connect(bob);
    const base = await aliceOnly('sasl-creator', a);
    await a.create(`${base}/mine`, { data: 'x', acl: Acls.CREATOR_ALL });
    assert.equal((await a.getData(`${base}/mine`)).data.toString(), 'x');
    // A second session of alice is alice too; bob is not.
    const a2 = await connect(alice);
    assert.equal((await a2.getData(`${base}/mine`)).data.toString(), 'x');
    await assert.rejects(b.getData(`${base}/mine`), NoAuthError);
    await a.deleteRecursive(base);
  });

  test('a mutex and a queue work on a path only alice may use; bob is refused NoAuth there', async () => {
    const [a1, a2] = [await connect(alice), await connect(alice)];
    const base = await aliceOnly('sasl-recipes', a1);
    const m1 = new Mutex(a1, `${base}/lock`);
    const m2 = new Mutex(a2, `${base}/lock`);
    const held = await m1.acquire({ timeoutMs: 5000 });
    assert.equal(await m2.tryAcquire(), null);
    const second = m2.acquire({ timeoutMs: 5000 });
    await held.release();
    await (await second).release();
    const q = new DistributedQueue(a1, `${base}/queue`);
    await q.put('job-1');
    await q.put('job-2');
    const consumer = new DistributedQueue(a2, `${base}/queue`);
    assert.equal((await consumer.take({ timeoutMs: 5000 })).toString(), 'job-1');
    assert.equal((await consumer.take({ timeoutMs: 5000 })).toString(), 'job-2');
    const b = await connect(bob);
    // Under alice's path bob can create nothing (what the recipe creates below it carries its own ACL).
    const mb = new Mutex(b, `${base}/bobs-lock`);
    await assert.rejects(mb.acquire({ timeoutMs: 5000 }), NoAuthError);
    await Promise.all([m1.close(), m2.close(), mb.close(), q.close(), consumer.close()]);
    await a1.deleteRecursive(base);
  });

  test('a wrong password rejects connect with AuthFailedError at once (no reconnect loop)', async () => {
    const { err, ms } = await refused({ sasl: { ...alice, password: 'wrong' } });
    assert.ok(err instanceof AuthFailedError, `AuthFailedError, got ${String(err)}`);
    assert.equal(err.code, 'AUTH_FAILED');
    assert.equal(err.zkCode, -115);
    assert.match(err.message, /alice/);
    assert.ok(ms < 3000, `refused in ${Math.round(ms)} ms`);
  });

  test('an unknown user rejects connect with AuthFailedError', async () => {
    const { err, ms } = await refused({ sasl: { mechanism: 'DIGEST-MD5', username: 'mallory', password: 'x' } });
    assert.ok(err instanceof AuthFailedError, `AuthFailedError, got ${String(err)}`);
    assert.equal(err.code, 'AUTH_FAILED');
    assert.ok(ms < 3000, `refused in ${Math.round(ms)} ms`);
  });

  test('a server without SASL: connect rejects with AuthFailedError saying so', async () => {
    await using bare = await TestingServer.start();
    const started = performance.now();
    const err = await ZkSession.connect(bare.connectString, { sessionTimeoutMs: T, sasl: alice }).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    assert.ok(err instanceof AuthFailedError, `AuthFailedError, got ${String(err)}`);
    assert.match(err.message, /SASL/);
    assert.ok(performance.now() - started < 3000, 'refused at once');
  });

  test('a session created without connect(): its calls reject with AuthFailedError, it closes and never reconnects', async () => {
    const s = new ZkSession(server.connectString, { sessionTimeoutMs: T, sasl: { ...bob, password: 'nope' } });
    const errors: Error[] = [];
    s.on('error', (e) => errors.push(e));
    const closed = nextState(s, 'CLOSED', 5000);
    await assert.rejects(s.exists('/'), AuthFailedError);
    await closed;
    assert.ok(errors.some((e) => e instanceof AuthFailedError), 'reported as an error event');
    // Closed for good, and says why.
    await assert.rejects(s.waitConnected({ timeoutMs: 100 }), (e: unknown) => e instanceof Error && (e as { cause?: unknown }).cause instanceof AuthFailedError);
    await assert.rejects(s.exists('/'), /closed/);
  });

  test('a connection dropped in the middle of the exchange: the next one resumes the same session, none is left behind', async () => {
    const proxy = await ChaosProxy.start({ targetPort: server.port });
    proxies.push(proxy);
    // The first request after the handshake is the SASL token: its reply is lost, the connection closed.
    const lost = proxy.loseReply();
    // A server numbers its sessions in order; `dump` is not an atomic snapshot (a session being
    // touched may be missing from one), so count the ids above the highest seen before.
    const ids = async (): Promise<bigint[]> => (await server.dump()).sessions.map((s) => BigInt(s.sessionId));
    const highest = (await ids()).reduce((m, id) => (id > m ? id : m), 0n);
    const a = await connect(alice, {}, proxy.connectString);
    await lost;
    const created = (await ids()).filter((id) => id > highest);
    assert.deepEqual(created, [a.sessionId], 'one session: the second attempt resumed the first one');
    assert.ok((await a.exists('/')) !== null);
  });

  test('a reconnect authenticates before the requests queued while disconnected; session id and watches survive', async () => {
    const proxy = await ChaosProxy.start({ targetPort: server.port });
    proxies.push(proxy);
    const a = await connect(alice, {}, proxy.connectString);
    const writer = await connect(alice);
    const base = await aliceOnly('sasl-reconnect', a);
    const secret = `${base}/secret`;
    await a.create(secret, { data: 'v1', acl: [saslAcl('alice')] });
    const watched = await a.getDataWatch(secret);
    const id = a.sessionId;
    const suspended = nextState(a, 'SUSPENDED', 5000);
    proxy.reject(true);
    proxy.dropAll();
    await suspended;
    // Queued while disconnected, on nodes only an authenticated alice may read and write: they
    // go out right after the next handshake, and succeed only if SASL went first.
    const reads = Array.from({ length: 5 }, () => a.getData(secret));
    const write = a.create(`${secret}-2`, { data: 'queued', acl: [saslAcl('alice')] });
    const reconnected = nextState(a, 'RECONNECTED', 5000);
    proxy.reject(false);
    await reconnected;
    for (const r of await Promise.all(reads)) assert.equal(r.data.toString(), 'v1');
    assert.equal(await write, `${secret}-2`);
    assert.equal(a.sessionId, id, 'the same session');
    // The watch set before the drop was re-registered (after SASL) and fires.
    await writer.setData(secret, 'v2');
    const event = await withTimeout(watched.changed, 5000, 'the watch fires');
    assert.equal(event.type, 'NODE_DATA_CHANGED');
    await a.deleteRecursive(base);
  });
});
