// TLS on a 3-member ensemble (issue 28): the member a TLS session is on is killed, the session
// moves to another member over TLS and keeps its id and its watches; and a TLS refusal after
// the session had connected (a server whose certificate has expired, as after a bad rotation)
// is reported once per streak as an `error` event while the session retries with its backoff,
// then reconnects to a good member with the same session.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TlsError } from '../../src/index.js';
import { TestingServer, waitFor, withTimeout, type TestCertificates } from '../../src/testing/index.js';
import { ClusterFixture, nextState, uniquePath } from '../helpers.js';

const fx = new ClusterFixture({ tls: true });
const certs = (): TestCertificates => fx.cluster.certificates as TestCertificates;

describe('TLS on an ensemble', () => {
  test('the member a TLS session is on is killed: it moves over TLS, same session, watches kept', async () => {
    const leader = await fx.cluster.waitForQuorum();
    const [first, second] = fx.cluster.members.filter((m) => m.id !== leader && m.running);
    assert.ok(first?.securePort && second?.securePort);
    const viaFirst = await fx.proxyTo(first.securePort);
    const viaSecond = await fx.proxyTo(second.securePort);
    viaSecond.reject(true);
    const s = await fx.pool.connect(`${viaFirst.connectString},${viaSecond.connectString}`, { tls: certs().clientTls, sessionTimeoutMs: 6000 });
    const observer = await fx.pool.connect(fx.cluster.secureConnectString, { tls: certs().clientTls, sessionTimeoutMs: 20_000 });
    const path = uniquePath('tls-move');
    await observer.mkdirp(path);
    const watched = await s.getDataWatch(path);
    const id = s.sessionId;
    await fx.cluster.kill(first.id);
    viaFirst.reject(true);
    viaSecond.reject(false);
    await waitFor(() => s.state === 'RECONNECTED' || s.state === 'CONNECTED', { timeoutMs: 20_000, message: 'moved to the second member' });
    assert.equal(s.sessionId, id, 'the same session');
    await observer.setData(path, 'changed');
    assert.equal((await withTimeout(watched.changed, 10_000, 'the watch fires')).type, 'NODE_DATA_CHANGED');
    assert.equal((await s.getData(path)).data.toString(), 'changed');
    await observer.deleteRecursive(path);
    await fx.cluster.restart(first.id);
  });

  test('refused by TLS after it connected: reported once per streak, retried with backoff, back on a good member with the same session', async () => {
    await using expired = await TestingServer.start({ tls: certs().expiredServerTls });
    const leader = await fx.cluster.waitForQuorum();
    const good = fx.cluster.members.find((m) => m.id !== leader && m.running);
    assert.ok(good?.securePort && expired.securePort);
    const viaGood = await fx.proxyTo(good.securePort);
    const viaExpired = await fx.proxyTo(expired.securePort);
    viaExpired.reject(true);
    const s = await fx.pool.connect(`${viaGood.connectString},${viaExpired.connectString}`, { tls: certs().clientTls, sessionTimeoutMs: 8000 });
    const errors: Error[] = [];
    s.on('error', (e) => errors.push(e));
    const id = s.sessionId;
    const suspended = nextState(s, 'SUSPENDED', 5000);
    // Only the server with the expired certificate is reachable now.
    viaGood.reject(true);
    viaGood.dropAll();
    viaExpired.reject(false);
    await suspended;
    await waitFor(() => errors.some((e) => e instanceof TlsError), { timeoutMs: 5000, message: 'the refusal is reported' });
    const tlsErrors = (): TlsError[] => errors.filter((e): e is TlsError => e instanceof TlsError);
    assert.match(String((tlsErrors()[0]?.cause as NodeJS.ErrnoException | undefined)?.code), /CERT_HAS_EXPIRED/);
    // Refused again and again (each handshake brings the server's certificate: bytes to us),
    // still SUSPENDED, and reported once for the whole streak.
    const firstAttempt = viaExpired.bytes.toClient;
    assert.ok(firstAttempt > 0);
    await waitFor(() => viaExpired.bytes.toClient >= 3 * firstAttempt, { timeoutMs: 6000, message: 'at least three refused handshakes' });
    assert.equal(s.state, 'SUSPENDED');
    assert.equal(tlsErrors().length, 1, 'one report for the streak');
    const reconnected = nextState(s, 'RECONNECTED', 10_000);
    viaExpired.reject(true);
    viaGood.reject(false);
    await reconnected;
    assert.equal(s.sessionId, id, 'the same session, back on a good member');
  });
});
