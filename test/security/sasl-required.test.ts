// A server that requires SASL (`sasl.requireAuth`: ZooKeeper's sessionRequireClientSASLAuth):
// a session without SASL can do nothing and ends typed, at once; a SASL session works, and a
// wrong password is refused with the server's "requires SASL" code.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AuthFailedError, saslAcl, ZkSession } from '../../src/index.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ChaosProxy, expireSession, jaasServerConfig, TestingServer } from '../../src/testing/index.js';
import { nextState, SessionPool, uniquePath } from '../helpers.js';

const T = 6000;
let server: TestingServer;
const pool = new SessionPool();

before(async () => {
  server = await TestingServer.start({ sasl: { users: { alice: 'alice-secret' }, requireAuth: true } });
});
after(async () => {
  await pool.closeAll();
  await server?.close();
});

describe('a server that requires SASL', () => {
  test('a SASL session works', async () => {
    const a = await pool.connect(server.connectString, { sessionTimeoutMs: T, sasl: { mechanism: 'DIGEST-MD5', username: 'alice', password: 'alice-secret' } });
    const base = uniquePath('required');
    await a.mkdirp(base, { acl: [saslAcl('alice')] });
    await a.create(`${base}/x`, { data: 'ok' });
    assert.equal((await a.getData(`${base}/x`)).data.toString(), 'ok');
    await a.deleteRecursive(base);
  });

  test('a session without SASL: its first request rejects with AuthFailedError (SESSION_CLOSED_REQUIRE_SASL_AUTH) and the session closes', async () => {
    // The handshake itself is accepted: the server refuses the first request.
    const s = await pool.connect(server.connectString, { sessionTimeoutMs: T });
    const closed = nextState(s, 'CLOSED', 5000);
    const started = performance.now();
    const err = await s.exists('/').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof AuthFailedError, `AuthFailedError, got ${String(err)}`);
    assert.equal(err.code, 'SESSION_CLOSED_REQUIRE_SASL_AUTH');
    assert.equal(err.zkCode, -124);
    await closed;
    assert.ok(performance.now() - started < 3000, 'refused at once');
    await assert.rejects(s.getData('/'), /closed/);
  });

  test('an idle session without SASL ends too (its heartbeat is refused), never reconnecting', async () => {
    const s = new ZkSession(server.connectString, { sessionTimeoutMs: T });
    const closed = nextState(s, 'CLOSED', T);
    await closed;
    await assert.rejects(s.waitConnected({ timeoutMs: 100 }), (e: unknown) => e instanceof Error && (e as { cause?: unknown }).cause instanceof AuthFailedError);
  });

  test('a wrong password: connect rejects with AuthFailedError at once', async () => {
    const started = performance.now();
    const err = await ZkSession.connect(server.connectString, { sessionTimeoutMs: T, sasl: { mechanism: 'DIGEST-MD5', username: 'alice', password: 'wrong' } }).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    assert.ok(err instanceof AuthFailedError, `AuthFailedError, got ${String(err)}`);
    assert.equal(err.code, 'SESSION_CLOSED_REQUIRE_SASL_AUTH');
    assert.ok(performance.now() - started < 3000, 'refused at once');
  });

  test('expireSession expires a SASL session behind a proxy (the joiner authenticates as the victim does)', async () => {
    const proxy = await ChaosProxy.start({ targetPort: server.port });
    try {
      const alice = { mechanism: 'DIGEST-MD5', username: 'alice', password: 'alice-secret' } as const;
      const victim = await pool.connect(proxy.connectString, { sessionTimeoutMs: T, sasl: alice });
      const base = uniquePath('required-expire');
      await victim.mkdirp(base, { acl: [saslAcl('alice')] });
      const before = victim.sessionId;
      await expireSession(victim, proxy);
      assert.notEqual(victim.sessionId, before);
      await victim.waitConnected({ timeoutMs: 10_000 });
      assert.ok(await victim.exists(base), 'the renewed session authenticated again');
      await victim.deleteRecursive(base);
    } finally {
      await proxy.close();
    }
  });

  // Last: it changes the server's users.
  test('credentials that stop working on a reconnect: pending calls reject with AuthFailedError, the session closes', async () => {
    const s = await pool.connect(server.connectString, { sessionTimeoutMs: 20_000, sasl: { mechanism: 'DIGEST-MD5', username: 'alice', password: 'alice-secret' } });
    await s.exists('/');
    const errors: Error[] = [];
    s.on('error', (e) => errors.push(e));
    const closed = nextState(s, 'CLOSED', 30_000);
    // The server comes back with another password for alice (its JAAS file is read at start).
    await writeFile(join(server.workDir, 'jaas.conf'), jaasServerConfig({ alice: 'rotated' }));
    await server.stop();
    // Handled from the start: it may be refused before restart() returns.
    const pending = assert.rejects(s.exists('/'), AuthFailedError);
    await server.restart();
    await pending;
    await closed;
    assert.ok(errors.some((e) => e instanceof AuthFailedError), 'reported as an error event');
  });
});
