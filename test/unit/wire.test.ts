// The hand-written request encoder (src/client/wire.ts) against node-zookeeper-client's own jute
// encoder, byte for byte, for every request both can encode: chroot or none, the root path,
// multi-byte UTF-8, null, empty and non-empty data, one or several ACL entries; and the two
// requests the client has no encoder for (sync, removeWatches) against their jute layout. And
// the reply framing in front of the client's reply handler, over every split of a stream; the
// reply decoders against the client's own encoding of each reply; and which replies are ours.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import nzcModule from 'node-zookeeper-client';
import juteModule from 'node-zookeeper-client/lib/jute/index.js';
import { frameReplies, sendFrame, type RawConnectionManager } from '../../src/client/nzc.js';
import type { Acl, Stat } from '../../src/client/types.js';
import { batchWatches, multiSize, requestSize, setWatchesSize, watchSize, type WatchSet } from '../../src/client/encoding.js';
import { childrenAndStat, createdNode, createdPath, createFrame, dataAndStat, deleteFrame, encodeAcls, Frame, multiFrame, multiResults, nothing, OPCODE, Reader, readFrame, removeWatchesFrame, REPLY, setDataFrame, setWatchesFrame, statOnly, syncFrame, type MultiOp } from '../../src/client/wire.js';
import { WatcherTables } from '../../src/client/watcher-tables.js';

interface JuteRecord {
  setChrootPath(path: string): void;
  [field: string]: unknown;
}
interface Jute {
  Request: new (header: unknown, payload: unknown) => { toBuffer(): Buffer };
  protocol: Record<string, new () => JuteRecord>;
  data: Record<string, new () => JuteRecord>;
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

  test('multi encodes as the client encodes a MultiTransactionRecord: a header and a request per op, then the closing header', () => {
    let xid = 500;
    for (const chroot of CHROOTS)
      for (const path of PATHS)
        for (const data of DATA) {
          xid += 1;
          const ops: MultiOp[] = [
            { type: 'create', path, data, acls: encodeAcls(ACLS[1] ?? []), flags: 2 },
            { type: 'setData', path, data, version: 0 },
            { type: 'check', path, version: 7 },
            { type: 'delete', path, version: -1 },
          ];
          const records: [string, Record<string, unknown>][] = [
            ['MultiHeader', { type: 1, done: false, err: -1 }],
            ['CreateRequest', { path, data, acl: aclRecords(ACLS[1] ?? []), flags: 2 }],
            ['MultiHeader', { type: 5, done: false, err: -1 }],
            ['SetDataRequest', { path, data, version: 0 }],
            ['MultiHeader', { type: 13, done: false, err: -1 }],
            ['CheckVersionRequest', { path, version: 7 }],
            ['MultiHeader', { type: 2, done: false, err: -1 }],
            ['DeleteRequest', { path, version: -1 }],
            ['MultiHeader', { type: -1, done: true, err: -1 }],
          ];
          const bodies = records.map(([record, fields]) => {
            const r = new jute.protocol[record]!() as JuteRecord & { byteLength(): number; serialize(b: Buffer, o: number): number };
            Object.assign(r, fields);
            if (chroot && 'path' in fields) r.setChrootPath(chroot);
            const b = Buffer.alloc(r.byteLength());
            r.serialize(b, 0);
            return b;
          });
          const head = Buffer.alloc(12);
          const body = Buffer.concat(bodies);
          head.writeInt32BE(8 + body.length, 0);
          head.writeInt32BE(xid, 4);
          head.writeInt32BE(OPCODE.MULTI, 8);
          assert.deepEqual(multiFrame(chroot, ops).seal(xid), Buffer.concat([head, body]), `multi ${chroot}${path} data=${data?.toString('hex')}`);
        }
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

describe('request sizes (issue 22: bytes, not UTF-16 units, for every request kind)', () => {
  // What the server counts against jute.maxbuffer: the frame after its 4-byte length prefix.
  const counted = (frame: Frame): number => frame.seal(1).length - 4;

  test('every kind the session sends: its size is its encoded frame, under any chroot (multi-byte ones too)', () => {
    for (const chroot of [...CHROOTS, '/日本語のルート']) {
      for (const path of PATHS) {
        for (const data of DATA) {
          for (const acl of ACLS) {
            const acls = encodeAcls(acl);
            assert.equal(requestSize({ type: 'create', path, data, acl }, chroot), counted(createFrame(OPCODE.CREATE, chroot, path, data, acls, 0)), `create ${chroot}${path}`);
          }
          assert.equal(requestSize({ type: 'setData', path, data }, chroot), counted(setDataFrame(chroot, path, data, -1)), `setData ${chroot}${path}`);
        }
        assert.equal(requestSize({ type: 'delete', path }, chroot), counted(deleteFrame(chroot, path, -1)));
        assert.equal(requestSize({ type: 'sync', path }, chroot), counted(syncFrame(chroot, path)));
        assert.equal(requestSize({ type: 'removeWatches', path }, chroot), counted(removeWatchesFrame(chroot, path, 2)));
        for (const [type, op] of [['exists', OPCODE.EXISTS], ['getData', OPCODE.GET_DATA], ['getChildren', OPCODE.GET_CHILDREN2]] as const) {
          assert.equal(requestSize({ type, path }, chroot), counted(readFrame(op, chroot, path, true)), `${type} ${chroot}${path}`);
        }
        const set: WatchSet = { data: [path], exist: [], child: [] };
        assert.equal(watchSize(path, chroot), counted(setWatchesFrame(chroot, Buffer.alloc(8), set)));
      }
    }
  });

  test('a transaction: its size is what the client encodes for it, chroot and multi-byte ids included', () => {
    const chroot = '/ü/根';
    const ops = [
      { type: 'create' as const, path: '/ü/a', data: Buffer.from('日本'), acl: ACLS[1] },
      { type: 'setData' as const, path: '/', data: Buffer.from('x') },
      { type: 'delete' as const, path: '/\u{1F600}' },
      { type: 'check' as const, path: '/c' },
    ];
    const records = [
      ['MultiHeader', { type: 1, done: false, err: -1 }],
      ['CreateRequest', { path: '/ü/a', data: ops[0]?.data, acl: aclRecords(ACLS[1] ?? []), flags: 0 }],
      ['MultiHeader', { type: 5, done: false, err: -1 }],
      ['SetDataRequest', { path: '/', data: ops[1]?.data, version: -1 }],
      ['MultiHeader', { type: 2, done: false, err: -1 }],
      ['DeleteRequest', { path: '/\u{1F600}', version: -1 }],
      ['MultiHeader', { type: 13, done: false, err: -1 }],
      ['CheckVersionRequest', { path: '/c', version: -1 }],
      ['MultiHeader', { type: -1, done: true, err: -1 }],
    ] as const;
    let body = 8; // xid, op code
    for (const [record, fields] of records) {
      const r = new jute.protocol[record]!();
      Object.assign(r, fields);
      r.setChrootPath(chroot);
      body += (r as unknown as { byteLength(): number }).byteLength();
    }
    assert.equal(multiSize(ops, chroot), body);
  });

  test('SetWatches encodes as the client encodes it (relative zxid, three path vectors, chroot in front)', () => {
    for (const chroot of CHROOTS) {
      const set: WatchSet = { data: ['/a', '/ü/日本'], exist: ['/'], child: ['/c', '/\u{1F600}'] };
      const zxid = Buffer.from('0000000100000007', 'hex');
      const theirs = reference(101, 9, 'SetWatches', { relativeZxid: zxid, dataWatches: set.data, existWatches: set.exist, childWatches: set.child }, chroot);
      assert.deepEqual(setWatchesFrame(chroot, zxid, set).seal(9), theirs, `chroot ${chroot}`);
      assert.equal(setWatchesSize(set, chroot), theirs.length - 4);
    }
  });

  test('watches are re-registered in packets within the limit, every watch exactly once, in kind order', () => {
    const chroot = '/根';
    const long = (i: number): string => `/w/${'ü'.repeat(400)}-${i}`;
    const set: WatchSet = {
      data: Array.from({ length: 300 }, (_, i) => long(i)),
      exist: Array.from({ length: 50 }, (_, i) => long(1000 + i)),
      child: Array.from({ length: 120 }, (_, i) => long(2000 + i)),
    };
    const limit = 128 * 1024;
    const batches = batchWatches(set, chroot, limit);
    assert.ok(batches.length > 1, `${batches.length} batches`);
    for (const b of batches) {
      const size = setWatchesSize(b, chroot);
      assert.ok(size <= limit, `a batch of ${size} bytes`);
      assert.equal(size, setWatchesFrame(chroot, Buffer.alloc(8), b).seal(1).length - 4);
    }
    // Each batch but the last is full: the next watch would not have fitted.
    for (const [i, b] of batches.slice(0, -1).entries()) {
      const next = batches[i + 1];
      const first = next?.data[0] ?? next?.exist[0] ?? next?.child[0] ?? '';
      assert.ok(setWatchesSize(b, chroot) + 4 + Buffer.byteLength(chroot + first) > limit);
    }
    for (const kind of ['data', 'exist', 'child'] as const) assert.deepEqual(batches.flatMap((b) => b[kind]), set[kind]);
    // A watch bigger than the target goes alone (it passed the packet limit when it was set).
    const huge = `/${'x'.repeat(200_000)}`;
    assert.deepEqual(batchWatches({ data: ['/a', huge, '/b'], exist: [], child: [] }, '', limit), [
      { data: ['/a'], exist: [], child: [] },
      { data: [huge], exist: [], child: [] },
      { data: ['/b'], exist: [], child: [] },
    ]);
    assert.deepEqual(batchWatches({ data: [], exist: [], child: [] }, '', limit), []);
  });
});

/**
 * A connection manager stand-in with the fields frameReplies reads and writes, whose reply
 * handler (the client's, for frames that are not ours) passes each frame to `onFrame`.
 */
function manager(onFrame: (f: Buffer) => void): RawConnectionManager & { feed(chunk: Buffer): void } {
  const socket = { destroyed: false, destroy(): void { this.destroyed = true; } };
  let xid = 0;
  const cm = {
    socket,
    state: 2, // connected
    pendingBuffer: null as Buffer | null,
    pendingQueue: [] as RawConnectionManager['pendingQueue'],
    zxid: Buffer.alloc(8),
    chrootPath: undefined,
    // Sends at once: assigns the xid and files the request as pending, as the client does.
    queue(request: RawConnectionManager['pendingQueue'][number]['request'], callback: (err: unknown, value?: unknown) => void) {
      if (request.header) request.header.xid = ++xid;
      request.toBuffer();
      cm.pendingQueue.push({ request, callback });
    },
  } as unknown as RawConnectionManager & { feed(chunk: Buffer): void };
  const handle = frameReplies(function (this: RawConnectionManager, chunk: Buffer) {
    assert.equal(this.pendingBuffer, null, 'the handler never sees a pending remainder');
    onFrame(Buffer.from(chunk));
  });
  cm.feed = (chunk) => handle.call(cm, chunk);
  return cm;
}

describe('reply framing', () => {
  /** A reply frame: length prefix, then `body`. */
  const frame = (body: string): Buffer => {
    const b = Buffer.from(body, 'utf8');
    const f = Buffer.alloc(4 + b.length);
    f.writeInt32BE(b.length, 0);
    b.copy(f, 4);
    return f;
  };

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

  test('a notification is decoded once, by us: our tables fire their watchers (chroot taken off), then the hook hears it; the client never sees it', () => {
    const notification = (type: number, path: string): Buffer => {
      const p = Buffer.from(path, 'utf8');
      const f = Buffer.alloc(REPLY.BODY + 12 + p.length);
      f.writeInt32BE(f.length - 4, 0);
      f.writeInt32BE(-1, REPLY.XID);
      f.writeBigInt64BE(42n, REPLY.ZXID);
      f.writeInt32BE(type, REPLY.BODY);
      f.writeInt32BE(3, REPLY.BODY + 4); // SyncConnected
      f.writeInt32BE(p.length, REPLY.BODY + 8);
      p.copy(f, REPLY.BODY + 12);
      return f;
    };
    const tables = new WatcherTables();
    const fired: string[] = [];
    tables.registerDataWatcher('/a', (e) => fired.push(`data ${e.name} ${e.path}`));
    tables.registerChildWatcher('/a', (e) => fired.push(`child ${e.name} ${e.path}`));
    const heard: string[] = [];
    const handled: Buffer[] = [];
    const cm = { socket: { destroyed: false }, state: 2, pendingBuffer: null, pendingQueue: [], chrootPath: '/root', watcherManager: tables } as unknown as RawConnectionManager;
    const handle = frameReplies(
      (f) => handled.push(f),
      (type, path, zxid) => heard.push(`${type} ${path} ${zxid}`),
    );
    // NodeDeleted fires data and child watchers; an unknown type (99) is dropped, not thrown.
    handle.call(cm, Buffer.concat([notification(2, '/root/a'), notification(99, '/root/a'), notification(2, '/root/a')]));
    assert.deepEqual(fired, ['data NODE_DELETED /a', 'child NODE_DELETED /a']);
    assert.deepEqual(heard, ['2 /root/a 42', '99 /root/a 42', '2 /root/a 42']);
    assert.deepEqual(handled, []);
  });
});

describe('reply decoding', () => {
  /** A random jute Stat as the client's record (longs as 8-byte buffers) and as ours. */
  function stats(seed: number): { raw: JuteRecord; expected: Stat } {
    const long = (v: bigint): Buffer => {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(v);
      return b;
    };
    const expected: Stat = {
      czxid: 0x100000001n * BigInt(seed),
      mzxid: 0x100000002n * BigInt(seed),
      ctime: 1_700_000_000_000 + seed,
      mtime: 1_700_000_000_500 + seed,
      version: seed,
      cversion: seed === 0 ? 0 : -seed,
      aversion: 2 ** 31 - 1 - seed,
      ephemeralOwner: 0xfedcba9876543210n - BigInt(seed),
      dataLength: 10 * seed,
      numChildren: seed % 7,
      pzxid: 0x7fffffffffffffffn - BigInt(seed),
    };
    const raw = new jute.data.Stat!();
    Object.assign(raw, {
      czxid: long(expected.czxid),
      mzxid: long(expected.mzxid),
      ctime: long(BigInt(expected.ctime)),
      mtime: long(BigInt(expected.mtime)),
      version: expected.version,
      cversion: expected.cversion,
      aversion: expected.aversion,
      ephemeralOwner: Buffer.from(expected.ephemeralOwner.toString(16).padStart(16, '0'), 'hex'),
      dataLength: expected.dataLength,
      numChildren: expected.numChildren,
      pzxid: long(expected.pzxid),
    });
    return { raw, expected };
  }

  /** A reply body as the server would send it, encoded by the client's own records. */
  function body(record: string, fields: Record<string, unknown>): Buffer {
    const r = new jute.protocol[record]!() as JuteRecord & { byteLength(): number; serialize(b: Buffer, o: number): number };
    Object.assign(r, fields);
    const b = Buffer.alloc(r.byteLength());
    r.serialize(b, 0);
    return b;
  }

  /** A whole reply frame: length, xid, zxid, error, body. */
  function reply(xid: number, err: number, b: Buffer = Buffer.alloc(0), zxid = 0x1234n): Buffer {
    const head = Buffer.alloc(20);
    head.writeInt32BE(16 + b.length, 0);
    head.writeInt32BE(xid, 4);
    head.writeBigInt64BE(zxid, 8);
    head.writeInt32BE(err, 16);
    return Buffer.concat([head, b]);
  }

  test('every decoder reads what the client encodes: Stat fields, data, children, paths with and without chroot', () => {
    for (const seed of [0, 1, 99, 12345]) {
      const { raw, expected } = stats(seed);
      assert.deepEqual(statOnly(new Reader(body('ExistsResponse', { stat: raw }), 0)), expected);
      assert.deepEqual(statOnly(new Reader(body('SetDataResponse', { stat: raw }), 0)), expected);
      for (const data of [undefined, Buffer.alloc(0), Buffer.from('dätä')]) {
        assert.deepEqual(dataAndStat(new Reader(body('GetDataResponse', { data, stat: raw }), 0)), { data: data ?? Buffer.alloc(0), stat: expected });
      }
      for (const children of [[], ['a'], ['_c_x-lock-0000000001', 'ü', '']]) {
        assert.deepEqual(childrenAndStat(new Reader(body('GetChildren2Response', { children, stat: raw }), 0)), { children, stat: expected });
      }
      // create2's reply: the path, then the Stat (the layout of a getData reply).
      const created = body('GetDataResponse', { data: Buffer.from('/app/n-0000000003'), stat: raw });
      assert.deepEqual(createdNode('/app')(new Reader(created, 0)), { path: '/n-0000000003', stat: expected });
      assert.deepEqual(createdNode('')(new Reader(created, 0)), { path: '/app/n-0000000003', stat: expected });
    }
    assert.equal(createdPath('/app')(new Reader(body('CreateResponse', { path: '/app' }), 0)), '/');
    assert.equal(createdPath('/app')(new Reader(body('CreateResponse', { path: '/app/x' }), 0)), '/x');
    assert.equal(createdPath('')(new Reader(body('CreateResponse', { path: '/x' }), 0)), '/x');
  });

  test('a multi reply: created paths (without the chroot), Stats, deletes and checks; a failed one carries its per-op error codes', () => {
    const { raw, expected } = stats(9);
    const header = (type: number, done: boolean, err: number): Buffer => body('MultiHeader', { type, done, err });
    const ok = Buffer.concat([
      header(1, false, 0),
      body('CreateResponse', { path: '/app/lock-0000000001' }),
      header(5, false, 0),
      body('SetDataResponse', { stat: raw }),
      header(2, false, 0),
      header(13, false, 0),
      header(-1, true, -1),
    ]);
    assert.deepEqual(multiResults('/app')(new Reader(ok, 0)), [{ type: 1, path: '/lock-0000000001' }, { type: 5, stat: expected }, { type: 2 }, { type: 13 }]);
    const failed = Buffer.concat([header(-1, false, 0), body('ErrorResponse', { err: 0 }), header(-1, false, -101), body('ErrorResponse', { err: -101 }), header(-1, false, -2), body('ErrorResponse', { err: -2 }), header(-1, true, -1)]);
    assert.deepEqual(multiResults('')(new Reader(failed, 0)), [{ type: -1, err: 0 }, { type: -1, err: -101 }, { type: -1, err: -2 }]);
    for (let n = 0; n < ok.length; n++) assert.throws(() => multiResults('')(new Reader(ok.subarray(0, n), 0)), RangeError, `cut at ${n}`);
  });

  test('a truncated body is refused, not read past its end', () => {
    const { raw } = stats(3);
    const full = body('GetChildren2Response', { children: ['abc', 'def'], stat: raw });
    for (let n = 0; n < full.length; n++) assert.throws(() => childrenAndStat(new Reader(full.subarray(0, n), 0)), RangeError, `cut at ${n}`);
  });

  /** A stand-in connection manager recording the frames the client's handler got. */
  function wired(): { cm: RawConnectionManager & { feed(chunk: Buffer): void }; theirs: Buffer[]; client: Parameters<typeof sendFrame>[0] } {
    const theirs: Buffer[] = [];
    const cm = manager((f) => theirs.push(f));
    return { cm, theirs, client: { connectionManager: cm } as unknown as Parameters<typeof sendFrame>[0] };
  }

  test('a reply to a frame of ours: decoded, the pending request taken, the zxid kept; other frames go to the client', () => {
    const { cm, theirs, client } = wired();
    const got: unknown[] = [];
    const { raw, expected } = stats(5);
    sendFrame(client, OPCODE.EXISTS, readFrame(OPCODE.EXISTS, '', '/a', false), statOnly, (err, v) => got.push(err ?? v));
    sendFrame(client, OPCODE.DELETE, deleteFrame('', '/a', -1), nothing, (err, v) => got.push(err ?? v ?? 'deleted'));
    sendFrame(client, OPCODE.EXISTS, readFrame(OPCODE.EXISTS, '', '/b', false), statOnly, (err) => got.push((err as { code?: number } | null)?.code));
    const notification = reply(-1, 0, Buffer.from('watch event body'));
    // One chunk: a notification, then the three replies (the last one an error), then half a frame.
    const later = reply(4, 0);
    cm.feed(Buffer.concat([notification, reply(1, 0, body('ExistsResponse', { stat: raw }), 77n), reply(2, 0), reply(3, -101), later.subarray(0, 9)]));
    assert.deepEqual(got, [expected, 'deleted', -101]);
    assert.deepEqual(theirs, [notification], 'the client handles the notification');
    assert.equal(cm.pendingQueue.length, 0);
    assert.equal(cm.zxid.readBigInt64BE(0), 0x1234n, 'the zxid of the last reply');
    assert.deepEqual(cm.pendingBuffer, later.subarray(0, 9));
  });

  test('a failed multi: its error and its per-op results reach the caller, and the connection stays', () => {
    const { cm, client } = wired();
    const got: unknown[] = [];
    sendFrame(client, OPCODE.MULTI, multiFrame('', [{ type: 'delete', path: '/a', version: -1 }]), multiResults(''), (err, v) => got.push((err as { code?: number } | null)?.code, v), true);
    const failed = Buffer.concat([body('MultiHeader', { type: -1, done: false, err: -101 }), body('ErrorResponse', { err: -101 }), body('MultiHeader', { type: -1, done: true, err: -1 })]);
    cm.feed(reply(1, -101, failed));
    assert.deepEqual(got, [-101, [{ type: -1, err: -101 }]]);
    assert.notEqual(cm.socket?.destroyed, true);
  });

  test('a reply out of order goes to the client (which drops the connection); a body that does not decode fails its request and drops it', () => {
    const { cm, theirs, client } = wired();
    const got: unknown[] = [];
    sendFrame(client, OPCODE.EXISTS, readFrame(OPCODE.EXISTS, '', '/a', false), statOnly, (err, v) => got.push(err ? (err as { code?: number }).code : v));
    const wrong = reply(9, 0);
    cm.feed(wrong);
    assert.deepEqual(theirs, [wrong]);
    assert.equal(cm.pendingQueue.length, 1, 'left for the client, which compares the xid itself');
    cm.feed(reply(1, 0, Buffer.alloc(10)));
    assert.deepEqual(got, [-4]);
    assert.equal(cm.socket?.destroyed, true);
  });
});
