// The hand-written request encoder (src/client/wire.ts) against node-zookeeper-client's own jute
// encoder, byte for byte, for every request both can encode: chroot or none, the root path,
// multi-byte UTF-8, null, empty and non-empty data, one or several ACL entries; and the two
// requests the client has no encoder for (sync, removeWatches) against their jute layout. And
// the reply framing in front of the client's reply handler, over every split of a stream.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import nzcModule from 'node-zookeeper-client';
import juteModule from 'node-zookeeper-client/lib/jute/index.js';
import { frameReplies, type RawConnectionManager } from '../../src/client/nzc.js';
import type { Acl } from '../../src/client/types.js';
import { createFrame, deleteFrame, encodeAcls, Frame, OPCODE, readFrame, removeWatchesFrame, setDataFrame, syncFrame } from '../../src/client/wire.js';

interface JuteRecord {
  setChrootPath(path: string): void;
  [field: string]: unknown;
}
interface Jute {
  Request: new (header: unknown, payload: unknown) => { toBuffer(): Buffer };
  protocol: Record<string, new () => JuteRecord>;
}
const jute = juteModule as unknown as Jute;
const nzc = nzcModule as unknown as { ACL: new (perms: number, id: unknown) => { toRecord(): unknown }; Id: new (scheme: string, id: string) => unknown };

/** The client's encoding of request `type` with payload fields `fields`, under `chroot`. */
function reference(op: number, xid: number, record: string, fields: Record<string, unknown>, chroot: string): Buffer {
  const header = new jute.protocol.RequestHeader!();
  Object.assign(header, { type: op, xid });
  const payload = new jute.protocol[record]!();
  Object.assign(payload, fields);
  if (chroot) payload.setChrootPath(chroot);
  return new jute.Request(header, payload).toBuffer();
}

/** ACL entries as the client's records (its public ACL and Id classes). */
function aclRecords(acls: readonly Acl[]): unknown[] {
  return acls.map((a) => new nzc.ACL(a.perms, new nzc.Id(a.scheme, a.id)).toRecord());
}

const CHROOTS = ['', '/app', '/ü/根'];
const PATHS = ['/', '/a', '/locks/_c_0b1f6a52-6f0e-4a43-9d1c-5b0e7f3c2a11-lock-0000000007', '/ü/日本/\u{1F600}'];
const DATA: (Buffer | undefined)[] = [undefined, Buffer.alloc(0), Buffer.from('hello'), Buffer.from([0, 255, 1, 128])];
const ACLS: Acl[][] = [
  [{ perms: 31, scheme: 'world', id: 'anyone' }],
  [
    { perms: 31, scheme: 'auth', id: '' },
    { perms: 1, scheme: 'digest', id: 'bob:Q5oX0gZ0m1Hv9cQ+0BZ2hQ9vYJ0=' },
    { perms: 17, scheme: 'ip', id: '127.0.0.1' },
  ],
];

describe('wire frames', () => {
  test('create and create2 encode as the client encodes a CreateRequest', () => {
    let xid = 1;
    for (const chroot of CHROOTS)
      for (const path of PATHS)
        for (const data of DATA)
          for (const acls of ACLS)
            for (const flags of [0, 1, 2, 3])
              for (const op of [OPCODE.CREATE, OPCODE.CREATE2] as const) {
                xid += 1;
                const ours = createFrame(op, chroot, path, data, encodeAcls(acls), flags).seal(xid);
                const theirs = reference(op, xid, 'CreateRequest', { path, data, acl: aclRecords(acls), flags }, chroot);
                assert.deepEqual(ours, theirs, `create ${op} ${chroot}${path} data=${data?.toString('hex')} acls=${acls.length} flags=${flags}`);
              }
  });

  test('delete, exists, getData, getChildren2 and setData encode as the client encodes them', () => {
    let xid = 100;
    for (const chroot of CHROOTS)
      for (const path of PATHS) {
        for (const version of [-1, 0, 7, 2 ** 31 - 1]) {
          xid += 1;
          assert.deepEqual(deleteFrame(chroot, path, version).seal(xid), reference(OPCODE.DELETE, xid, 'DeleteRequest', { path, version }, chroot));
          for (const data of DATA) {
            assert.deepEqual(setDataFrame(chroot, path, data, version).seal(xid), reference(OPCODE.SET_DATA, xid, 'SetDataRequest', { path, data, version }, chroot));
          }
        }
        for (const watch of [false, true]) {
          xid += 1;
          assert.deepEqual(readFrame(OPCODE.EXISTS, chroot, path, watch).seal(xid), reference(OPCODE.EXISTS, xid, 'ExistsRequest', { path, watch }, chroot));
          assert.deepEqual(readFrame(OPCODE.GET_DATA, chroot, path, watch).seal(xid), reference(OPCODE.GET_DATA, xid, 'GetDataRequest', { path, watch }, chroot));
          assert.deepEqual(readFrame(OPCODE.GET_CHILDREN2, chroot, path, watch).seal(xid), reference(OPCODE.GET_CHILDREN2, xid, 'GetChildren2Request', { path, watch }, chroot));
        }
      }
  });

  test('sync and removeWatches: length, xid, op code, the server-side path, and the watcher type', () => {
    const expected = (op: number, xid: number, path: string, type?: number): Buffer => {
      const p = Buffer.from(path, 'utf8');
      const body = Buffer.alloc(4 + p.length + (type === undefined ? 0 : 4));
      body.writeInt32BE(p.length, 0);
      p.copy(body, 4);
      if (type !== undefined) body.writeInt32BE(type, 4 + p.length);
      const head = Buffer.alloc(12);
      head.writeInt32BE(8 + body.length, 0);
      head.writeInt32BE(xid, 4);
      head.writeInt32BE(op, 8);
      return Buffer.concat([head, body]);
    };
    assert.deepEqual(syncFrame('', '/a/b').seal(5), expected(9, 5, '/a/b'));
    assert.deepEqual(syncFrame('/app', '/').seal(6), expected(9, 6, '/app'));
    assert.deepEqual(syncFrame('/app', '/ü').seal(7), expected(9, 7, '/app/ü'));
    assert.deepEqual(removeWatchesFrame('', '/w', 1).seal(8), expected(18, 8, '/w', 1));
    assert.deepEqual(removeWatchesFrame('/app', '/', 2).seal(9), expected(18, 9, '/app', 2));
  });

  test('a frame sealed again (a re-send) carries the new xid', () => {
    const frame = deleteFrame('', '/a', -1);
    assert.equal(frame.seal(1).readInt32BE(4), 1);
    assert.equal(frame.seal(2).readInt32BE(4), 2);
  });

  test('a frame whose body does not fill its declared size is refused, not sent short', () => {
    assert.throws(() => new Frame(OPCODE.SYNC, 10).int(1).seal(1), /frame body is 4 bytes, declared 10/);
  });
});

describe('reply framing', () => {
  /** A reply frame: length prefix, then `body`. */
  const frame = (body: string): Buffer => {
    const b = Buffer.from(body, 'utf8');
    const f = Buffer.alloc(4 + b.length);
    f.writeInt32BE(b.length, 0);
    b.copy(f, 4);
    return f;
  };

  /** A connection manager stand-in: the fields frameReplies reads and writes. */
  function manager(onFrame: (f: Buffer) => void): RawConnectionManager & { feed(chunk: Buffer): void } {
    const socket = { destroyed: false, destroy(): void { this.destroyed = true; } };
    const cm = { socket, pendingBuffer: null as Buffer | null } as unknown as RawConnectionManager & { feed(chunk: Buffer): void };
    const handle = frameReplies(function (this: RawConnectionManager, chunk: Buffer) {
      assert.equal(this.pendingBuffer, null, 'the handler never sees a pending remainder');
      onFrame(Buffer.from(chunk));
    });
    cm.feed = (chunk) => handle.call(cm, chunk);
    return cm;
  }

  test('every split of a stream of frames reaches the handler as the same whole frames, in order', () => {
    const frames = [frame('a'), frame(''), frame('longer reply body'), frame('ü日本')];
    const stream = Buffer.concat(frames);
    for (let i = 0; i <= stream.length; i++)
      for (let j = i; j <= stream.length; j++) {
        const seen: Buffer[] = [];
        const cm = manager((f) => seen.push(f));
        for (const chunk of [stream.subarray(0, i), stream.subarray(i, j), stream.subarray(j)]) if (chunk.length) cm.feed(chunk);
        assert.deepEqual(seen, frames, `split at ${i} and ${j}`);
        assert.equal(cm.pendingBuffer, null);
      }
  });

  test('an incomplete frame waits in pendingBuffer (which a new handshake clears)', () => {
    const seen: Buffer[] = [];
    const cm = manager((f) => seen.push(f));
    const f = frame('partial');
    cm.feed(Buffer.concat([frame('x'), f.subarray(0, 6)]));
    assert.deepEqual(seen, [frame('x')]);
    assert.deepEqual(cm.pendingBuffer, f.subarray(0, 6));
  });

  test('once the handler drops the connection, the rest of the chunk is not handled', () => {
    const seen: Buffer[] = [];
    const cm = manager((f) => {
      seen.push(f);
      cm.socket?.destroy();
    });
    cm.feed(Buffer.concat([frame('bad xid'), frame('next')]));
    assert.deepEqual(seen, [frame('bad xid')]);
  });

  test('a negative frame length drops the connection', () => {
    const cm = manager(() => assert.fail('no frame'));
    const bad = Buffer.alloc(8);
    bad.writeInt32BE(-4, 0);
    cm.feed(bad);
    assert.equal(cm.socket?.destroyed, true);
  });
});
