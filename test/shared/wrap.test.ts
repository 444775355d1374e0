// A count whose node version wraps past 2^31 - 1, without 2^31 writes: a fake session that
// keeps one node and counts its version as the server does (a Java int: 2^31 - 1, then -2^31).
// What it proves: trySet keeps working across the wrap (it compares by zxid and sends the
// negative version), a version of -1 is refused instead of becoming "any version", a read with
// an older zxid never takes the copy back whatever its version says, and data of the wrong size
// is a CorruptValueError. Also the encoding and decoding of counts at their limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BadVersionError, CorruptValueError, IllegalStateError, InvalidArgumentError, NodeExistsError, SharedCount, type ZkSession } from '../../src/index.js';
import { decodeCount, encodeCount } from '../../src/shared/codec.js';

/** The server's int version arithmetic. */
const nextVersion = (v: number): number => (v + 1) | 0;

interface Node {
  data: Buffer;
  version: number;
  mzxid: bigint;
}

/** Just what SharedBase uses of a session, over one node. */
function fakeSession(node: Node): { session: ZkSession; sent: number[]; fire: () => void; serve: (n: Node) => void; jump: (version: number) => void } {
  let zxid = node.mzxid;
  const sent: number[] = [];
  let fireWatch: (() => void) | undefined;
  let served = node;
  const stat = (n: Node) => ({ czxid: 1n, mzxid: n.mzxid, pzxid: 1n, ctime: 0, mtime: 0, version: n.version, cversion: 0, aversion: 0, ephemeralOwner: 0n, dataLength: n.data.length, numChildren: 0 });
  const fake = {
    dataLimit: 1_000_000,
    on: () => fake,
    off: () => fake,
    mkdirp: async () => '/',
    create: async () => {
      throw new NodeExistsError('NODE_EXISTS', 'exists', { zkCode: -110 });
    },
    sync: async () => undefined,
    getData: async () => ({ data: served.data, stat: stat(served) }),
    getDataWatch: async () => ({
      result: { data: served.data, stat: stat(served) },
      changed: new Promise<void>((resolve) => {
        fireWatch = resolve;
      }),
    }),
    setData: async (_path: string, data: Buffer, options: { version?: number }) => {
      const version = options.version ?? -1;
      sent.push(version);
      if (version !== -1 && version !== node.version) throw new BadVersionError('BAD_VERSION', 'bad version', { zkCode: -103 });
      zxid += 1n;
      node.data = Buffer.from(data);
      node.version = nextVersion(node.version);
      node.mzxid = zxid;
      return stat(node);
    },
  };
  // Someone else's writes, many of them: the version is now `version`.
  const jump = (version: number): void => {
    zxid += 1n;
    node.version = version;
    node.mzxid = zxid;
  };
  return { session: fake as unknown as ZkSession, sent, fire: () => fireWatch?.(), serve: (n) => (served = n), jump };
}

test('trySet across the wrap of the node version: 2^31 - 1 → -2^31 → ... → -2 works; -1 is refused', async () => {
  const node: Node = { data: encodeCount(5, '/c'), version: 2 ** 31 - 2, mzxid: 100n };
  const { session, sent, jump } = fakeSession(node);
  await using count = new SharedCount(session, '/c', 0);
  await count.start({ timeoutMs: 1000 });
  const seen: number[] = [];
  count.on('changed', (v) => seen.push(v.version));
  assert.equal(count.count, 5);
  assert.equal(await count.trySet(6, count.get()), true);
  assert.equal(count.get().version, 2 ** 31 - 1);
  assert.equal(await count.trySet(7, count.get()), true);
  assert.equal(count.get().version, -(2 ** 31), 'the version wrapped');
  assert.equal(await count.trySet(8, count.get()), true, 'a negative version is compared, not refused');
  assert.equal(count.count, 8);
  assert.deepEqual(sent, [2 ** 31 - 2, 2 ** 31 - 1, -(2 ** 31)]);
  assert.deepEqual(seen, [2 ** 31 - 1, -(2 ** 31), -(2 ** 31) + 1]);
  // Near the end of the negative range: -2 is a version like any other, -1 would mean "any".
  jump(-3);
  const atMinus3 = await count.refresh();
  assert.equal(atMinus3.version, -3);
  assert.equal(await count.trySet(9, atMinus3), true);
  assert.equal(count.get().version, -2);
  assert.equal(await count.trySet(10, count.get()), true);
  const atMinus1 = count.get();
  assert.equal(atMinus1.version, -1);
  const before = sent.length;
  await assert.rejects(count.trySet(11, atMinus1), IllegalStateError);
  assert.equal(sent.length, before, 'nothing was sent at version -1');
  assert.equal(node.data.readInt32BE(0), 10);
  // The next write moves the version to 0, and compare-and-set works again.
  await count.set(12);
  assert.equal(count.get().version, 0);
  assert.equal(await count.trySet(13, count.get()), true);
});

test('the copy moves by zxid only: a read with a larger version but an older zxid is ignored', async () => {
  const node: Node = { data: encodeCount(1, '/c'), version: -(2 ** 31), mzxid: 500n };
  const { session, serve } = fakeSession(node);
  await using count = new SharedCount(session, '/c', 0);
  await count.start({ timeoutMs: 1000 });
  assert.equal(count.get().version, -(2 ** 31));
  // A lagging member answers with the value from before the wrap: its version is "larger".
  serve({ data: encodeCount(99, '/c'), version: 2 ** 31 - 1, mzxid: 499n });
  const after = await count.refresh();
  assert.equal(after.value, 1);
  assert.equal(after.zxid, 500n);
  // A stale previous (its zxid is older than the copy's) is refused locally, even if its version matches.
  assert.equal(await count.trySet(2, { value: 1, version: -(2 ** 31), zxid: 499n }), false);
  // Same zxid but another value: refused locally too (as Curator does).
  assert.equal(await count.trySet(2, { value: 7, version: -(2 ** 31), zxid: 500n }), false);
});

test('data of the wrong size: start rejects with CorruptValueError; later, the last good value stays and error is emitted', async () => {
  const bad: Node = { data: Buffer.from([0, 0, 1]), version: 0, mzxid: 10n };
  await assert.rejects(new SharedCount(fakeSession(bad).session, '/c', 0).start({ timeoutMs: 1000 }), CorruptValueError);
  const long: Node = { data: Buffer.from([0, 0, 0, 1, 0]), version: 0, mzxid: 10n };
  await assert.rejects(new SharedCount(fakeSession(long).session, '/c', 0).start({ timeoutMs: 1000 }), CorruptValueError);

  const node: Node = { data: encodeCount(3, '/c'), version: 0, mzxid: 10n };
  const { session, serve, fire } = fakeSession(node);
  await using count = new SharedCount(session, '/c', 0);
  await count.start({ timeoutMs: 1000 });
  const errors: Error[] = [];
  const reported = new Promise<void>((resolve) => count.on('error', (e) => (errors.push(e), resolve())));
  serve({ data: Buffer.from('not a count'), version: 1, mzxid: 11n });
  fire();
  await reported;
  assert.ok(errors[0] instanceof CorruptValueError);
  assert.equal(count.count, 3);
});

test('encodeCount / decodeCount: 4 bytes big-endian signed, the 32-bit range only', () => {
  assert.deepEqual([...encodeCount(1, '/c')], [0, 0, 0, 1]);
  assert.deepEqual([...encodeCount(-1, '/c')], [0xff, 0xff, 0xff, 0xff]);
  assert.deepEqual([...encodeCount(2 ** 31 - 1, '/c')], [0x7f, 0xff, 0xff, 0xff]);
  assert.deepEqual([...encodeCount(-(2 ** 31), '/c')], [0x80, 0, 0, 0]);
  assert.equal(decodeCount(Buffer.from([0x80, 0, 0, 0]), '/c'), -(2 ** 31));
  assert.equal(decodeCount(Buffer.from([0, 0, 1, 0]), '/c'), 256);
  for (const bad of [2 ** 31, -(2 ** 31) - 1, 1.5, Number.NaN, Infinity, '1', null, undefined, 1n]) {
    assert.throws(() => encodeCount(bad, '/c'), InvalidArgumentError, String(bad));
  }
  for (const size of [0, 1, 3, 5, 8]) assert.throws(() => decodeCount(Buffer.alloc(size), '/c'), CorruptValueError, `${size} bytes`);
});
