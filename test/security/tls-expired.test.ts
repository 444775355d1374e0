// A server whose certificate expired (issue 28): ZkSession.connect rejects with a TlsError whose
// cause says so, fast, and nothing is left running. One TLS server (expired certificate) for the file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ZkSession } from '../../src/client/index.js';
import { TlsError } from '../../src/errors.js';
import { generateTestCertificates, TestingServer, type TestCertificates } from '../../src/testing/index.js';

let server: TestingServer;
let certs: TestCertificates;

before(async () => {
  certs = await generateTestCertificates();
  server = await TestingServer.start({ tls: certs.expiredServerTls });
});
after(async () => {
  await server?.close();
});

describe('TLS: an expired server certificate', () => {
  test('is refused with a TlsError (CERT_HAS_EXPIRED) well before the connect deadline', async () => {
    const started = performance.now();
    const err = await ZkSession.connect(server.secureConnectString, { tls: certs.clientTls, connectTimeoutMs: 20_000, spinDelayMs: 50 }).then(
      (s) => {
        void s.close();
        assert.fail('connected');
      },
      (e: unknown) => e,
    );
    assert.ok(err instanceof TlsError, `a TlsError, got ${String(err)}`);
    assert.equal((err.cause as NodeJS.ErrnoException).code, 'CERT_HAS_EXPIRED');
    assert.match(err.message, /has expired/);
    assert.ok(performance.now() - started < 5000, 'fast');
  });

  test('a session that skips verification (rejectUnauthorized: false) still connects: the server itself is fine', async () => {
    const session = await ZkSession.connect(server.secureConnectString, { tls: { ...certs.clientTls, rejectUnauthorized: false } });
    try {
      assert.ok(session.sessionId > 0n);
    } finally {
      await session.close();
    }
  });
});
