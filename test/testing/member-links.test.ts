// The member links' election handshake rewrite, without ZooKeeper: the pure rewrite, and a
// ChaosProxy applying it to a handshake that arrives in pieces.
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { rewriteElectionHead } from '../../src/testing/member-links.js';
import { ChaosProxy, waitFor } from '../../src/testing/index.js';

/** QuorumCnxManager's InitialMessage: protocol version, sid, length, address. */
function handshake(sid: number, address: string, version = -65536n): Buffer {
  const head = Buffer.alloc(20);
  head.writeBigInt64BE(version, 0);
  head.writeBigInt64BE(BigInt(sid), 8);
  head.writeInt32BE(Buffer.byteLength(address), 16);
  return Buffer.concat([head, Buffer.from(address)]);
}

describe('member links: election handshake rewrite', () => {
  it('replaces the advertised address, keeping version, sid and what follows', () => {
    const rest = Buffer.from([1, 2, 3, 4]);
    const out = rewriteElectionHead(Buffer.concat([handshake(2, '127.0.0.1:2888'), rest]), '127.0.0.1:12345');
    assert.deepEqual(out, Buffer.concat([handshake(2, '127.0.0.1:12345'), rest]));
    // Protocol 2 (multiAddress) lists several addresses: one is advertised instead.
    assert.deepEqual(rewriteElectionHead(handshake(3, '127.0.0.1:1|127.0.0.2:2', -65535n), 'h:9'), handshake(3, 'h:9', -65535n));
  });

  it('waits for the whole handshake, and leaves what it does not know as it is', () => {
    const full = handshake(2, '127.0.0.1:2888');
    for (let n = 0; n < full.length; n++) assert.equal(rewriteElectionHead(full.subarray(0, n), 'x:1'), undefined, `${n} bytes`);
    const old = Buffer.alloc(8);
    old.writeBigInt64BE(2n); // before ZooKeeper 3.5: the sid alone
    assert.equal(rewriteElectionHead(old, 'x:1'), old);
    const odd = handshake(2, '');
    odd.writeInt32BE(1 << 20, 16);
    assert.equal(rewriteElectionHead(odd, 'x:1'), odd);
  });

  it('a ChaosProxy with rewriteHead rewrites a handshake sent in pieces, then passes the rest', async () => {
    const received: Buffer[] = [];
    const target = createServer((socket: Socket) => socket.on('data', (chunk: Buffer) => received.push(chunk)));
    await new Promise<void>((resolve) => target.listen({ host: '127.0.0.1', port: 0 }, resolve));
    await using proxy = await ChaosProxy.start({
      targetPort: (target.address() as AddressInfo).port,
      rewriteHead: (head) => rewriteElectionHead(head, '127.0.0.1:4242'),
    });
    const client = connect({ host: '127.0.0.1', port: proxy.port });
    try {
      await new Promise((resolve) => client.once('connect', resolve));
      const full = Buffer.concat([handshake(1, '127.0.0.1:3888'), Buffer.from('notification')]);
      for (const piece of [full.subarray(0, 5), full.subarray(5, 19), full.subarray(19, 30), full.subarray(30)]) {
        client.write(piece);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const expected = Buffer.concat([handshake(1, '127.0.0.1:4242'), Buffer.from('notification')]);
      await waitFor(() => Buffer.concat(received).length >= expected.length, { timeoutMs: 5000, message: 'the rewritten handshake' });
      assert.deepEqual(Buffer.concat(received), expected);
      assert.equal(proxy.bytes.toTarget, expected.length);
    } finally {
      client.destroy();
      await new Promise((resolve) => target.close(resolve));
    }
  });
});
