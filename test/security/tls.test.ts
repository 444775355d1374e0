// TLS to a real ZooKeeper's secureClientPort (issue 28): recipes over TLS, and every way a TLS
// setup can be wrong fails ZkSession.connect with a TlsError, fast (never the connect deadline's
// timeout, never an endless reconnect loop). One TLS server (test kit certificates) for the file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ZkSession, type SessionOptions } from '../../src/client/index.js';
import { TlsError } from '../../src/errors.js';
import { Mutex } from '../../src/mutex/index.js';
import { DistributedQueue } from '../../src/queue/index.js';
import { ChaosProxy, expireSession, TestingServer, type TestCertificates } from '../../src/testing/index.js';
import { SessionPool, uniquePath } from '../helpers.js';

let server: TestingServer;
let certs: TestCertificates;
const pool = new SessionPool();

before(async () => {
  server = await TestingServer.start({ tls: true });
  certs = server.certificates as TestCertificates;
});
after(async () => {
  await pool.closeAll();
  await server?.close();
});

/** Connecting with `options` fails with a TlsError well before the connect deadline; returns it. */
async function refused(connectString: string, options: SessionOptions): Promise<TlsError> {
  const started = performance.now();
  const err = await ZkSession.connect(connectString, { connectTimeoutMs: 20_000, spinDelayMs: 50, ...options }).then(
    (s) => {
      void s.close();
      assert.fail('connected');
    },
    (e: unknown) => e,
  );
  const took = performance.now() - started;
  assert.ok(err instanceof TlsError, `a TlsError, got ${String(err)}`);
  assert.equal(err.code, 'TLS_FAILED');
  assert.ok(took < 5000, `failed fast (${took.toFixed(0)} ms), not at the 20 s deadline`);
  return err;
}

describe('TLS: secureClientPort', () => {
  test('a mutex and a queue over TLS', async () => {
    const a = await pool.connect(server.secureConnectString, { tls: certs.clientTls });
    const b = await pool.connect(server.secureConnectString, { tls: certs.clientTls });
    const base = uniquePath('tls-recipes');
    const held = await new Mutex(a, `${base}/lock`).acquire({ timeoutMs: 5000 });
    assert.equal(await new Mutex(b, `${base}/lock`).tryAcquire(), null, 'held by a');
    await held.release();
    const h2 = await new Mutex(b, `${base}/lock`).acquire({ timeoutMs: 5000 });
    await h2.release();
    const q1 = new DistributedQueue(a, `${base}/queue`);
    const q2 = new DistributedQueue(b, `${base}/queue`);
    await q1.put('one');
    await q1.put('two');
    assert.equal((await q2.take({ timeoutMs: 5000 })).toString(), 'one');
    assert.equal((await q2.take({ timeoutMs: 5000 })).toString(), 'two');
    await Promise.all([q1.close(), q2.close()]);
    await a.deleteRecursive(base);
  });

  test('expireSession expires a TLS session behind a proxy (the joiner connects over TLS too)', async () => {
    const proxy = await ChaosProxy.start({ targetPort: server.securePort as number });
    try {
      const victim = await pool.connect(proxy.connectString, { tls: certs.clientTls, sessionTimeoutMs: 6000 });
      const before = victim.sessionId;
      await expireSession(victim, proxy);
      assert.notEqual(victim.sessionId, before, 'a new session after LOST');
      await victim.waitConnected({ timeoutMs: 10_000 });
      assert.ok(await victim.exists('/zookeeper'), 'the new session works over TLS');
    } finally {
      await proxy.close();
    }
  });

  test('a server certificate from another CA is refused (TlsError, the verification error as cause)', async () => {
    const err = await refused(server.secureConnectString, { tls: certs.otherCaTls });
    assert.match(String((err.cause as NodeJS.ErrnoException).code), /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/);
    assert.equal(err.server, server.secureConnectString);
  });

  test('the server refuses a client certificate it does not trust, and one missing', async () => {
    const err = await refused(server.secureConnectString, { tls: certs.otherClientTls });
    assert.match(err.message, /refused our client certificate|closed the connection during the TLS handshake/);
    await refused(server.secureConnectString, { tls: { ca: certs.clientTls.ca } });
  });

  test('host name verification: on by default; servername or checkServerIdentity: false change it explicitly', async () => {
    const err = await refused(server.secureConnectString, { tls: { ...certs.clientTls, servername: 'zk.example.invalid' } });
    assert.equal((err.cause as NodeJS.ErrnoException).code, 'ERR_TLS_CERT_ALTNAME_INVALID');
    assert.match(err.message, /not issued for "zk\.example\.invalid"/);
    const byName = await pool.connect(server.secureConnectString, { tls: { ...certs.clientTls, servername: 'localhost' } });
    assert.ok(byName.sessionId > 0n);
    const unchecked = await pool.connect(server.secureConnectString, { tls: { ...certs.clientTls, servername: 'zk.example.invalid', checkServerIdentity: false } });
    assert.ok(unchecked.sessionId > 0n);
    // A check of one's own sees the name and the certificate.
    const seen: string[] = [];
    const own = await pool.connect(server.secureConnectString, {
      tls: {
        ...certs.clientTls,
        checkServerIdentity: (host, cert) => {
          seen.push(`${host} ${cert.subject.CN}`);
          return undefined;
        },
      },
    });
    assert.ok(own.sessionId > 0n);
    assert.deepEqual([...new Set(seen)], ['127.0.0.1 localhost']);
  });

  test('a TLS client to the plain port fails typed and fast', async () => {
    const err = await refused(server.connectString, { tls: certs.clientTls });
    assert.match(err.message, /is it a secureClientPort/);
  });

  test('a plain client to the TLS port fails typed and fast', async () => {
    const err = await refused(server.secureConnectString, {});
    assert.match(err.message, /speaks TLS/);
    assert.equal(err.cause, undefined);
  });

  test('a bad tls option is refused before anything connects', async () => {
    await assert.rejects(ZkSession.connect(server.secureConnectString, { tls: { ca: '' } }), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(ZkSession.connect(server.secureConnectString, { tls: { cert: certs.clientTls.cert as Buffer } }), /go together/);
    await assert.rejects(ZkSession.connect(server.secureConnectString, { tls: { servername: '127.0.0.1' } }), /not an IP address/);
    await assert.rejects(ZkSession.connect(server.secureConnectString, { tls: { cA: 'x' } as never }), { code: 'INVALID_ARGUMENT' });
  });
});
