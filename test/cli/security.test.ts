// `zkr` on a secured ZooKeeper, as a user runs it (the built bin, spawned), against one real
// server with a secureClientPort and a JAAS digest login: a lock held and released over TLS; a
// CA that did not sign the server's certificate, and a plain zkr at the TLS port, exit 78 with
// one line naming what to check; SASL alice works on a path only alice may use, a wrong
// password exits 77 without printing it; `--acl creator` makes nodes another identity cannot
// delete; nothing left in ZooKeeper after any of it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestAuth, digestId, NoAuthError, Perms, saslAcl, type ZkSession } from '../../src/index.js';
import { TestingServer, waitFor, type TestCertificates } from '../../src/testing/index.js';
import { SessionPool, uniquePath } from '../helpers.js';
import { endHold, holdUntilStdin, zkr, type ZkrRun } from './run-zkr.js';

let server: TestingServer;
let certs: TestCertificates;
let observer: ZkSession;
const pool = new SessionPool();
const tmp = mkdtempSync(join(tmpdir(), 'zkr-security-'));
const runs = new Set<ZkrRun>();
const alice = { mechanism: 'DIGEST-MD5' as const, username: 'alice', password: 'alice-secret' };

before(async () => {
  server = await TestingServer.start({ tls: true, sasl: { users: { alice: alice.password } } });
  certs = server.certificates as TestCertificates;
  observer = await pool.connect(server.connectString, { sasl: alice, auth: [digestAuth('ops', 'ops-secret')] });
});
after(async () => {
  await Promise.all([...runs].map((r) => r.stop()));
  await pool.closeAll();
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The client side of TLS, as zkr options: the test CA, the test client certificate. */
const tlsArgs = (): string[] => ['--tls-ca', certs.ca.cert, '--tls-cert', certs.client.cert, '--tls-key', certs.client.key];

/** A holder whose child prints "held NODE", then runs until its stdin closes. */
function holder(args: readonly string[], env: NodeJS.ProcessEnv = {}): ZkrRun {
  return holdUntilStdin(args, env, runs);
}
const endHolder = endHold;
async function gone(path: string): Promise<void> {
  await waitFor(async () => (await observer.exists(path)) === null, { timeoutMs: 10_000, message: `${path} removed` });
}

describe('zkr over TLS', () => {
  it('holds a lock over TLS and releases it; nothing left', async () => {
    const base = uniquePath('zkr-tls');
    const r = holder(['lock', `${base}/job`, '--connect', server.secureConnectString, ...tlsArgs(), '-v']);
    const [, node] = await r.waitFor(/held (\S+)/, 20_000, 'stdout');
    assert.ok(await observer.exists(node as string), 'the lock node exists while held');
    assert.match(r.stderr, /connecting to \S+ over TLS/);
    assert.equal(await endHolder(r), 0);
    await gone(base);
  });

  it('a CA that did not sign the server exits 78 at once with one line naming what to check', async () => {
    const base = uniquePath('zkr-tls-ca');
    const started = performance.now();
    const res = await zkr(['lock', `${base}/job`, '--connect', server.secureConnectString, '--tls-ca', certs.otherCa.cert, '--tls-cert', certs.client.cert, '--tls-key', certs.client.key, '--', 'echo', 'ran']);
    assert.equal(res.code, 78, res.stderr);
    assert.ok(performance.now() - started < 10_000, 'well before the connect timeout');
    assert.equal(res.stdout, '');
    const lines = res.stderr.trim().split('\n');
    assert.equal(lines.length, 1, res.stderr);
    assert.match(lines[0] as string, /^zkr: TLS with 127\.0\.0\.1:\d+ failed: .*does not chain to the CA.*check --tls-ca/);
    assert.equal(await observer.exists(base), null);
  });

  it('without --tls-* at a TLS port: 78, pointing at --tls-ca and the secureClientPort', async () => {
    const res = await zkr(['inspect', '/zookeeper', '--connect', server.secureConnectString]);
    assert.equal(res.code, 78, res.stderr);
    assert.match(res.stderr, /secureClientPort/);
    assert.match(res.stderr, /--tls-ca/);
  });

  it('an unreadable --tls-ca file is a usage error (64), before connecting', async () => {
    const res = await zkr(['inspect', '/zookeeper', '--connect', server.secureConnectString, '--tls-ca', join(tmp, 'missing.pem')]);
    assert.equal(res.code, 64, res.stderr);
    assert.match(res.stderr, /missing\.pem/);
  });
});

describe('zkr with SASL', () => {
  it("alice (password from ZK_SASL_PASSWORD, over TLS) works on a path only alice may use; a wrong password from the file exits 77 and is never printed", async () => {
    const base = uniquePath('zkr-sasl');
    await observer.mkdirp(base.slice(0, base.lastIndexOf('/')));
    await observer.create(base, { acl: [saslAcl('alice')] });
    const ok = await zkr(['lock', `${base}/job`, '--connect', server.secureConnectString, ...tlsArgs(), '--sasl-user', 'alice', '--acl', 'creator', '-v', '--', 'echo', 'ran'], { ZK_SASL_PASSWORD: alice.password });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, 'ran\n');
    assert.match(ok.stderr, /with sasl:alice/);
    assert.ok(!ok.stderr.includes(alice.password));

    const file = join(tmp, 'wrong-password');
    writeFileSync(file, 'not-alices-password\nsecond line ignored\n', { mode: 0o600 });
    const wrong = await zkr(['lock', `${base}/job`, '--connect', server.connectString, '--sasl-user', 'alice', '--sasl-password-file', file, '--', 'echo', 'ran']);
    assert.equal(wrong.code, 77, wrong.stderr);
    assert.equal(wrong.stdout, '');
    assert.match(wrong.stderr, /^zkr: ZooKeeper at \S+ refused SASL user "alice": check --sasl-user and the password/);
    assert.ok(!wrong.stderr.includes('not-alices-password'));

    // Without SASL the path is refused (no permission under its ACL).
    const anonymous = await zkr(['lock', `${base}/job`, '--connect', server.connectString, '--', 'echo', 'ran']);
    assert.equal(anonymous.code, 77, anonymous.stderr);
    assert.deepEqual((await observer.getChildren(base)).children, []);
    await observer.delete(base);
  });
});

describe('zkr --acl creator', () => {
  it('with --auth digest: the nodes zkr creates are its identity\'s only; another identity cannot delete them', async () => {
    const base = uniquePath('zkr-acl');
    // The parent is open: zkr creates the base and everything under it.
    await observer.mkdirp(base.slice(0, base.lastIndexOf('/')));
    const r = holder(['lock', `${base}/job`, '--connect', server.connectString, '--auth', 'digest:ops:ops-secret', '--acl', 'creator']);
    const [, node] = await r.waitFor(/held (\S+)/, 20_000, 'stdout');
    const ours = [{ perms: Perms.ALL, scheme: 'digest', id: digestId('ops', 'ops-secret') }];
    for (const path of [base, `${base}/job`, node as string]) {
      const { acl } = await observer.getAcl(path);
      assert.deepEqual(acl.map((a) => ({ perms: a.perms, scheme: a.scheme, id: a.id })), ours, path);
    }
    const other = await pool.connect(server.connectString, { auth: [digestAuth('intruder', 'x')] });
    await assert.rejects(other.delete(node as string), NoAuthError);
    await assert.rejects(other.getChildren(`${base}/job`), NoAuthError);
    assert.equal(await endHolder(r), 0);
    await gone(base);
  });
});
