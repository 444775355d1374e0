import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  ChaosProxy,
  fourLetterWord,
  TestingServer,
  waitFor,
  WaitTimeoutError,
  withTimeout,
} from '../../src/testing/index.js';
import { freePort } from '../../src/testing/ports.js';

/** A client of the echo server that collects everything it receives. */
class EchoClient {
  received = Buffer.alloc(0);
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => (this.received = Buffer.concat([this.received, chunk])));
    socket.on('error', () => {});
    socket.on('close', () => (this.closed = true));
  }

  static async open(port: number): Promise<EchoClient> {
    const socket = connect({ host: '127.0.0.1', port, noDelay: true });
    await withTimeout(once(socket, 'connect'), 2000, 'connect');
    return new EchoClient(socket);
  }

  /** Sends `text` and resolves once it has come back (whole received text). */
  async roundTrip(text: string, timeoutMs = 2000): Promise<string> {
    const want = this.received.length + Buffer.byteLength(text);
    this.socket.write(text);
    await waitFor(() => this.received.length >= want, { timeoutMs, intervalMs: 1, message: `echo of ${text}` });
    return this.received.toString();
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('ChaosProxy', () => {
  let echo: Server;
  let proxy: ChaosProxy;
  let zk: TestingServer;
  let zkProxy: ChaosProxy;

  before(async () => {
    echo = createServer((socket) => {
      socket.on('error', () => {});
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const address = echo.address();
    assert.ok(address && typeof address === 'object');
    proxy = await ChaosProxy.start({ targetPort: address.port });
    zk = await TestingServer.start();
    zkProxy = await ChaosProxy.start({ targetHost: zk.host, targetPort: zk.port });
  });

  after(async () => {
    await proxy?.close();
    await zkProxy?.close();
    await zk?.close();
    await new Promise((resolve) => echo?.close(resolve));
  });

  it('passes bytes both ways and counts them', async () => {
    assert.equal(proxy.connectString, `127.0.0.1:${proxy.port}`);
    const before = proxy.bytes;
    const client = await EchoClient.open(proxy.port);
    try {
      assert.equal(await client.roundTrip('hello'), 'hello');
      assert.equal(proxy.connections, 1);
      assert.deepEqual(proxy.bytes, { toTarget: before.toTarget + 5, toClient: before.toClient + 5 });
    } finally {
      client.close();
    }
    await waitFor(() => proxy.connections === 0, { message: 'connection gone' });
  });

  it('passes a four-letter word to ZooKeeper', async () => {
    assert.equal(await fourLetterWord('127.0.0.1', zkProxy.port, 'ruok'), 'imok');
  });

  it('latency(ms) delays each direction and keeps order', async () => {
    const client = await EchoClient.open(proxy.port);
    try {
      proxy.latency(60);
      const start = performance.now();
      assert.equal(await client.roundTrip('slow'), 'slow');
      // Lower bound of an injected fault (two hops of 60 ms), not a speed claim.
      assert.ok(performance.now() - start >= 2 * 60 - 2, `round trip ${performance.now() - start} ms`);

      const parts = Array.from({ length: 20 }, (_, i) => `<${i}>`);
      for (const part of parts) client.socket.write(part);
      const expected = `slow${parts.join('')}`;
      await waitFor(() => client.received.toString() === expected, { timeoutMs: 3000, message: 'ordered echo' });
    } finally {
      proxy.pass();
      client.close();
    }
  });

  it('dropAll() closes open connections and still accepts new ones', async () => {
    const clients = await Promise.all([EchoClient.open(proxy.port), EchoClient.open(proxy.port)]);
    await clients[0]?.roundTrip('a');
    await waitFor(() => proxy.connections === 2, { message: 'two connections' });
    proxy.dropAll();
    assert.equal(proxy.connections, 0);
    await waitFor(() => clients.every((c) => c.closed), { message: 'clients closed' });
    const fresh = await EchoClient.open(proxy.port);
    try {
      assert.equal(await fresh.roundTrip('again'), 'again');
    } finally {
      fresh.close();
    }
    await waitFor(() => proxy.connections === 0, { message: 'connections gone' });
  });

  it('reject(true) resets new connections; reject(false) lets them through', async () => {
    proxy.reject(true);
    try {
      const socket = connect({ host: '127.0.0.1', port: proxy.port });
      let error: NodeJS.ErrnoException | undefined;
      socket.on('error', (e) => (error = e));
      await withTimeout(new Promise((resolve) => socket.on('close', resolve)), 2000, 'rejected connection to close');
      assert.equal(error?.code, 'ECONNRESET');
      assert.equal(socket.bytesRead, 0);
      assert.equal(proxy.connections, 0);
      zkProxy.reject(true);
      const reply = await fourLetterWord('127.0.0.1', zkProxy.port, 'ruok', { timeoutMs: 1000 }).catch(
        (error: unknown) => (error as NodeJS.ErrnoException).code,
      );
      assert.equal(reply, 'ECONNRESET');
    } finally {
      proxy.reject(false);
      zkProxy.reject(false);
    }
    const client = await EchoClient.open(proxy.port);
    try {
      assert.equal(await client.roundTrip('ok'), 'ok');
    } finally {
      client.close();
    }
  });

  it('blackhole() holds traffic without closing, pass() releases it', async () => {
    const client = await EchoClient.open(proxy.port);
    try {
      assert.equal(await client.roundTrip('1'), '1');
      proxy.blackhole();
      assert.equal(proxy.mode, 'blackhole');
      await assert.rejects(client.roundTrip('2', 300), WaitTimeoutError);
      assert.equal(client.closed, false);
      // New connections are accepted and held as well.
      const late = await EchoClient.open(proxy.port);
      late.socket.write('late');
      proxy.pass();
      assert.equal(await client.roundTrip('3'), '123');
      await waitFor(() => late.received.toString() === 'late', { message: 'held bytes of the late connection' });
      late.close();
    } finally {
      proxy.pass();
      client.close();
    }
  });

  it('blackhole() starves a ZooKeeper request while the server itself answers', async () => {
    zkProxy.blackhole();
    try {
      await assert.rejects(fourLetterWord('127.0.0.1', zkProxy.port, 'ruok', { timeoutMs: 500 }), WaitTimeoutError);
      assert.equal(await zk.ruok(), true);
    } finally {
      zkProxy.pass();
    }
    assert.equal(await fourLetterWord('127.0.0.1', zkProxy.port, 'ruok'), 'imok');
  });

  it('blackholeFor(ms) heals by itself', async () => {
    zkProxy.blackholeFor(200);
    assert.equal(zkProxy.mode, 'blackhole');
    const start = performance.now();
    assert.equal(await fourLetterWord('127.0.0.1', zkProxy.port, 'ruok', { timeoutMs: 5000 }), 'imok');
    assert.ok(performance.now() - start >= 200 - 2);
    assert.equal(zkProxy.mode, 'pass');
  });

  it('retryRefusedMs: a refusing target is tried again and gets what the client sent once it listens; past the window, or without it, the client is closed', async () => {
    const port = await freePort();
    await using plain = await ChaosProxy.start({ targetPort: port });
    await using patient = await ChaosProxy.start({ targetPort: port, retryRefusedMs: 20_000 });
    const held = await EchoClient.open(patient.port);
    held.socket.write('sent early');
    await waitFor(() => patient.connections === 1, { timeoutMs: 2000, message: 'the patient proxy accepted' });
    // A plain proxy closes its client when the target refuses. Its refusal comes after the
    // patient proxy's first one (tried on accept, above): so that one was refused too.
    const refused = await EchoClient.open(plain.port);
    await waitFor(() => refused.closed, { timeoutMs: 2000, message: 'the plain proxy closes its client' });
    assert.equal(held.closed, false, 'held while the target refuses');
    const late = createServer((socket) => {
      socket.on('error', () => {});
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => late.listen(port, '127.0.0.1', resolve));
    try {
      await waitFor(() => held.received.toString() === 'sent early', { timeoutMs: 5000, message: 'the early bytes echoed once the target listens' });
      assert.equal(await held.roundTrip(' and later'), 'sent early and later');
    } finally {
      held.close();
      await new Promise((resolve) => late.close(resolve));
    }
    // A target that keeps refusing past the window: the client is closed.
    await using brief = await ChaosProxy.start({ targetPort: await freePort(), retryRefusedMs: 100 });
    const gaveUp = await EchoClient.open(brief.port);
    await waitFor(() => gaveUp.closed, { timeoutMs: 5000, message: 'closed once the window is over' });
    await waitFor(() => brief.connections === 0, { timeoutMs: 2000, message: 'nothing left open' });
    await assert.rejects(async () => ChaosProxy.start({ targetPort: port, retryRefusedMs: -1 }), /retryRefusedMs/);
  });

  it('close() is idempotent and closes connections', async () => {
    const extra = await ChaosProxy.start({ targetPort: proxy.targetPort });
    const client = await EchoClient.open(extra.port);
    await client.roundTrip('x');
    await Promise.all([extra.close(), extra.close()]);
    await waitFor(() => client.closed, { message: 'client closed by proxy close' });
    await assert.rejects(EchoClient.open(extra.port));
  });
});
