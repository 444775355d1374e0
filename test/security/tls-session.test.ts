// TLS and the session machinery (issue 28): a connection dropped under TLS comes back to the
// same session with its watches; a silent partition under TLS is SUSPENDED then LOST on the loss
// clock's usual schedule; and nothing of a request crosses the wire in clear (checked against
// the same request over plain TCP, which does show). One TLS server for the file.
import assert from 'node:assert/strict';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import { ChaosProxy, LOOPBACK, TestingServer, withTimeout, type TestCertificates } from '../../src/testing/index.js';
import { nextState, recordStates, SessionPool, uniquePath } from '../helpers.js';

let server: TestingServer;
let certs: TestCertificates;
let observer: ZkSession;
const pool = new SessionPool();
const proxies: ChaosProxy[] = [];
const relays: Server[] = [];

before(async () => {
  server = await TestingServer.start({ tls: true });
  certs = server.certificates as TestCertificates;
  observer = await pool.connect(server.secureConnectString, { tls: certs.clientTls, sessionTimeoutMs: 30_000 });
  await observer.mkdirp('/test');
});
after(async () => {
  await pool.closeAll();
  await Promise.all(proxies.map((p) => p.close()));
  for (const r of relays) r.close();
  await server?.close();
});

async function proxyTo(port: number): Promise<ChaosProxy> {
  const proxy = await ChaosProxy.start({ targetPort: port });
  proxies.push(proxy);
  return proxy;
}

/** A TCP relay to `port` on 127.0.0.1 that keeps every byte it forwards, both ways. */
async function recordingRelay(port: number): Promise<{ connectString: string; bytes(): Buffer }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    const upstream = tcpConnect({ host: LOOPBACK, port });
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        to.write(chunk);
      });
      from.on('close', () => to.destroy());
      from.on('error', () => to.destroy());
    }
  });
  relay.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  await new Promise<void>((resolve) => relay.listen(0, LOOPBACK, resolve));
  relays.push(relay);
  const address = relay.address();
  assert.ok(address !== null && typeof address === 'object');
  return { connectString: `${LOOPBACK}:${address.port}`, bytes: () => Buffer.concat(chunks) };
}

describe('TLS: sessions', () => {
  test('a connection dropped under TLS reconnects to the same session, and a watch set before fires after', async () => {
    const proxy = await proxyTo(server.securePort as number);
    const session = await pool.connect(proxy.connectString, { tls: certs.clientTls, sessionTimeoutMs: 4000 });
    const path = await observer.create(`${uniquePath('tls-rewatch')}`, { data: 'a' });
    const id = session.sessionId;
    const { changed } = await session.getDataWatch(path);
    const back = nextState(session, 'RECONNECTED', 8000);
    proxy.dropAll();
    await back;
    assert.equal(session.sessionId, id, 'the same session');
    assert.equal(session.generation, 1, 'no new session');
    await observer.setData(path, 'b');
    const event = await withTimeout(changed, 5000, 'the watch set before the drop');
    assert.equal(event.type, 'NODE_DATA_CHANGED');
    await observer.delete(path);
  });

  test('a silent partition under TLS: SUSPENDED, then LOST on the loss clock schedule, then a new session', async () => {
    const T = 2000;
    const proxy = await proxyTo(server.securePort as number);
    const session = await pool.connect(proxy.connectString, { tls: certs.clientTls, sessionTimeoutMs: T });
    assert.equal(session.timeoutMs, T);
    const states = recordStates(session);
    const lost = nextState(session, 'LOST', 3 * T);
    const cutAt = performance.now();
    proxy.blackhole();
    await lost;
    const lostAfter = performance.now() - cutAt;
    assert.deepEqual(states.slice(0, 2), ['SUSPENDED', 'LOST']);
    // LOST at 0.95 T after the last answered heartbeat (at most T/6 and a tick before the cut).
    assert.ok(lostAfter >= 0.6 * T && lostAfter <= 1.3 * T, `LOST ${lostAfter.toFixed(0)} ms after the cut (T = ${T})`);
    const renewed = nextState(session, 'CONNECTED', 4 * T);
    proxy.pass();
    await renewed;
    assert.equal(session.generation, 2);
  });

  test('nothing is sent in clear: a node path and data cross a TLS connection encrypted, and a plain one in clear', async () => {
    const secret = `zk-recipes-secret-${Date.now().toString(36)}`;
    const seen = async (port: number, tls: boolean): Promise<{ path: boolean; data: boolean }> => {
      const relay = await recordingRelay(port);
      const session = await pool.connect(relay.connectString, tls ? { tls: certs.clientTls } : {});
      const path = `${uniquePath('clear')}-${secret}-${tls ? 'tls' : 'plain'}`;
      await session.create(path, { data: `${secret}-data` });
      assert.equal((await session.getData(path)).data.toString(), `${secret}-data`);
      await session.delete(path);
      await session.close();
      const bytes = relay.bytes().toString('latin1');
      return { path: bytes.includes(path), data: bytes.includes(`${secret}-data`) };
    };
    assert.deepEqual(await seen(server.port, false), { path: true, data: true }, 'over plain TCP both show (the check sees what it looks for)');
    assert.deepEqual(await seen(server.securePort as number, true), { path: false, data: false }, 'over TLS neither shows');
  });
});
