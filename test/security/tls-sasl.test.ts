// TLS and SASL together (issue 28): a server with a secureClientPort and a JAAS digest login;
// a session over TLS that authenticates with SASL DIGEST-MD5 works on a node only its SASL
// identity may use, and a reconnect keeps the session, its watches and its identity (requests
// queued while disconnected go out after SASL, over TLS); recipes run on a path secured so; a
// wrong password over TLS is an AuthFailedError, a wrong CA a TlsError, both fast.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AuthFailedError, DistributedQueue, Mutex, NoAuthError, saslAcl, TlsError, ZkSession, type SessionOptions } from '../../src/index.js';
import { ChaosProxy, TestingServer, withTimeout, type TestCertificates } from '../../src/testing/index.js';
import { nextState, SessionPool, uniquePath } from '../helpers.js';

let server: TestingServer;
let certs: TestCertificates;
const pool = new SessionPool();
const proxies: ChaosProxy[] = [];
const alice = { mechanism: 'DIGEST-MD5' as const, username: 'alice', password: 'alice-secret' };
const bob = { mechanism: 'DIGEST-MD5' as const, username: 'bob', password: 'bob-secret' };

before(async () => {
  server = await TestingServer.start({ tls: true, sasl: { users: { alice: alice.password, bob: bob.password } } });
  certs = server.certificates as TestCertificates;
});
after(async () => {
  await pool.closeAll();
  await Promise.all(proxies.map((p) => p.close()));
  await server?.close();
});

const connect = (to: string, options: SessionOptions): Promise<ZkSession> => pool.connect(to, { sessionTimeoutMs: 6000, tls: certs.clientTls, ...options });

describe('TLS and SASL together', () => {
  test('a TLS session authenticated by SASL: its identity\'s nodes and recipes; another identity is refused', async () => {
    const a = await connect(server.secureConnectString, { sasl: alice });
    const b = await connect(server.secureConnectString, { sasl: bob });
    const base = uniquePath('tls-sasl');
    await a.mkdirp(base.slice(0, base.lastIndexOf('/')));
    await a.create(base, { acl: [saslAcl('alice')] });
    await using mutex = new Mutex(a, `${base}/lock`, { acl: [saslAcl('alice')] });
    await mutex.runExclusive(async (_signal, lock) => {
      assert.ok(lock.fencingToken > 0n);
    });
    const queue = new DistributedQueue(a, `${base}/queue`, { acl: [saslAcl('alice')] });
    await queue.put('job', { timeoutMs: 10_000 });
    assert.equal((await queue.take({ timeoutMs: 10_000 })).toString(), 'job');
    await queue.close();
    await assert.rejects(b.getChildren(base), NoAuthError);
    await assert.rejects(new Mutex(b, `${base}/lock`).acquire({ timeoutMs: 5000 }), NoAuthError);
    await a.deleteRecursive(base);
  });

  test('a reconnect over TLS authenticates before the queued requests; the session and its watches survive', async () => {
    const proxy = await ChaosProxy.start({ targetPort: server.securePort as number });
    proxies.push(proxy);
    const a = await connect(proxy.connectString, { sasl: alice });
    const writer = await connect(server.secureConnectString, { sasl: alice });
    const base = uniquePath('tls-sasl-re');
    await a.mkdirp(base.slice(0, base.lastIndexOf('/')));
    await a.create(base, { acl: [saslAcl('alice')], data: 'v1' });
    const watched = await a.getDataWatch(base);
    const id = a.sessionId;
    const suspended = nextState(a, 'SUSPENDED', 5000);
    proxy.reject(true);
    proxy.dropAll();
    await suspended;
    const read = a.getData(base);
    const write = a.create(`${base}/queued`, { acl: [saslAcl('alice')] });
    const reconnected = nextState(a, 'RECONNECTED', 10_000);
    proxy.reject(false);
    await reconnected;
    assert.equal((await read).data.toString(), 'v1');
    assert.equal(await write, `${base}/queued`);
    assert.equal(a.sessionId, id, 'the same session');
    await writer.setData(base, 'v2');
    assert.equal((await withTimeout(watched.changed, 5000, 'the watch fires')).type, 'NODE_DATA_CHANGED');
    await a.deleteRecursive(base);
  });

  test('refusals are typed and fast: a wrong password over TLS (AuthFailedError), a wrong CA (TlsError)', async () => {
    const t0 = performance.now();
    await assert.rejects(ZkSession.connect(server.secureConnectString, { sessionTimeoutMs: 6000, tls: certs.clientTls, sasl: { ...alice, password: 'nope' } }), AuthFailedError);
    await assert.rejects(ZkSession.connect(server.secureConnectString, { sessionTimeoutMs: 6000, tls: certs.otherCaTls, sasl: alice }), TlsError);
    const took = Math.round(performance.now() - t0);
    assert.ok(took < 10_000, `both refused well within the connect deadline (${took} ms)`);
  });
});
