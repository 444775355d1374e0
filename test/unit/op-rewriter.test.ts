// The proxy's op-code rewriter sees the stream in any chunking: every request's op code is
// rewritten exactly once, the handshake and the bodies pass untouched.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OpRewriter } from '../../src/testing/frames.js';

/** A frame: length, then `body` (for a request: xid, op code, payload). */
function frame(body: Buffer): Buffer {
  const b = Buffer.alloc(4 + body.length);
  b.writeInt32BE(body.length, 0);
  body.copy(b, 4);
  return b;
}

function request(xid: number, op: number, payload: string): Buffer {
  const head = Buffer.alloc(8);
  head.writeInt32BE(xid, 0);
  head.writeInt32BE(op, 4);
  return frame(Buffer.concat([head, Buffer.from(payload)]));
}

const handshake = frame(Buffer.alloc(44, 7));
const requests = [request(1, 106, '/a'), request(2, 4, '/bb'), request(3, 106, ''), request(4, 11, '')];
const stream = Buffer.concat([handshake, ...requests]);
const expected = Buffer.concat([handshake, request(1, 9999, '/a'), request(2, 4, '/bb'), request(3, 9999, ''), request(4, 11, '')]);
const rewrite = (op: number): number | undefined => (op === 106 ? 9999 : undefined);

test('every split into two chunks and into single bytes gives the same rewritten stream', () => {
  for (let cut = 0; cut <= stream.length; cut++) {
    const r = new OpRewriter();
    const out = Buffer.concat([r.feed(Buffer.from(stream.subarray(0, cut)), rewrite), r.feed(Buffer.from(stream.subarray(cut)), rewrite)]);
    assert.deepEqual(out, expected, `cut at ${cut}`);
  }
  const r = new OpRewriter();
  const bytes = Buffer.concat([...stream].map((b) => r.feed(Buffer.from([b]), rewrite)));
  assert.deepEqual(bytes, expected, 'byte by byte');
});

test('nothing to rewrite: the chunk is forwarded as it came', () => {
  const r = new OpRewriter();
  const chunk = Buffer.from(stream);
  assert.equal(r.feed(chunk, () => undefined), chunk);
});

test('without a rewrite nothing is held: a stream that is not ZooKeeper passes byte for byte', () => {
  const r = new OpRewriter();
  for (const piece of ['x', 'hello\n', 'ab']) assert.equal(r.feed(Buffer.from(piece)).toString(), piece);
  const z = new OpRewriter();
  const bytes = Buffer.concat([...stream].map((b) => z.feed(Buffer.from([b]))));
  assert.deepEqual(bytes, stream);
});

test('a rewrite asked in the middle of the stream applies from the next frame whose op code is not out yet', () => {
  const r = new OpRewriter();
  const cut = handshake.length + 9; // inside the first request's op code
  const first = r.feed(Buffer.from(stream.subarray(0, cut)));
  const rest = r.feed(Buffer.from(stream.subarray(cut)), rewrite);
  assert.deepEqual(Buffer.concat([first, rest]), Buffer.concat([handshake, requests[0] as Buffer, request(2, 4, '/bb'), request(3, 9999, ''), request(4, 11, '')]));
});
