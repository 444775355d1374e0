/**
 * ZooKeeper wire frames as a proxy sees them: length-prefixed packets, the first of each
 * direction being the handshake (ConnectRequest / ConnectResponse, no header).
 *
 * @internal
 * @module
 */

/** Request operations a {@link ChaosProxy} can recognise, by name. @group Testing */
export type ZkOpName = 'create' | 'delete' | 'exists' | 'getData' | 'setData' | 'getChildren' | 'sync' | 'multi' | 'ping';

// create2 (15) answers like create; getChildren2 (12) like getChildren.
const OP_CODES: Record<ZkOpName, readonly number[]> = {
  create: [1, 15],
  delete: [2],
  exists: [3],
  getData: [4],
  setData: [5],
  getChildren: [8, 12],
  sync: [9],
  multi: [14],
  ping: [11],
};

/** Whether `name` is a {@link ZkOpName}. */
export function isOpName(name: unknown): name is ZkOpName {
  return typeof name === 'string' && Object.hasOwn(OP_CODES, name);
}

/** Whether wire opcode `code` is the operation `name`. */
export function opIs(code: number, name: ZkOpName): boolean {
  return OP_CODES[name].includes(code);
}

/** One complete frame, and where it starts in the chunk that completed it. */
export interface Frame {
  /** The frame's first bytes (all of it, up to the reader's `keep` limit), length prefix included. */
  readonly bytes: Buffer;
  /** Offset of the frame's first byte in the chunk that completed it (negative: it began earlier). */
  readonly start: number;
  /** Whether it is the handshake of its direction. */
  readonly handshake: boolean;
}

/**
 * Splits one direction's byte stream into frames, chunk by chunk, keeping at most `keep` bytes
 * of each (a reply's header is enough to match it; a large body is skipped, not buffered).
 */
export class FrameReader {
  #kept: Buffer[] = [];
  #keptBytes = 0;
  #size = -1; // frame length with its prefix, once the prefix is read
  #read = 0; // bytes of the current frame read so far
  #seen = 0;

  constructor(private readonly keep = Number.MAX_SAFE_INTEGER) {}

  /** Frames completed by `chunk`, in order. */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      const start = offset - this.#read;
      // Take what the prefix still needs, or the rest of the frame.
      const want = this.#size < 0 ? 4 - this.#read : this.#size - this.#read;
      const take = Math.min(want, chunk.length - offset);
      const room = Math.max(0, Math.min(take, Math.max(this.keep, 4) - this.#keptBytes));
      if (room > 0) {
        this.#kept.push(chunk.subarray(offset, offset + room));
        this.#keptBytes += room;
      }
      this.#read += take;
      offset += take;
      if (this.#size < 0 && this.#read === 4) this.#size = 4 + Math.max(0, Buffer.concat(this.#kept).readInt32BE(0));
      if (this.#size >= 0 && this.#read === this.#size) {
        frames.push({ bytes: Buffer.concat(this.#kept), start, handshake: this.#seen === 0 });
        this.#seen += 1;
        this.#kept = [];
        this.#keptBytes = 0;
        this.#size = -1;
        this.#read = 0;
      }
    }
    return frames;
  }
}

/**
 * Rewrites the op code of request frames as they stream by (`rewrite` returns the new code, or
 * undefined to keep it), holding back the few bytes of a header split across chunks so that it
 * is rewritten whole. The first frame (the handshake) has no op code and passes as it is.
 * Without `rewrite` nothing is held: the bytes pass at once and frames are only followed, so a
 * stream that is not ZooKeeper's passes untouched.
 */
export class OpRewriter {
  /** The current frame's first bytes (up to 12: length, xid, op code), as far as seen. */
  #pending: Buffer = Buffer.alloc(0);
  /** How many of `#pending` were forwarded already (while no rewrite was asked). */
  #sent = 0;
  /** Bytes of the current frame still to pass after its header. */
  #left = 0;
  #handshake = true;

  /** The bytes of `chunk` to forward now (`chunk` itself, rewritten in place, unless a header is split). */
  feed(chunk: Buffer, rewrite?: (op: number) => number | undefined): Buffer {
    if (this.#pending.length === 0 && this.#inPlace(chunk, rewrite)) return chunk;
    const out: Buffer[] = [];
    let o = 0;
    while (o < chunk.length) {
      if (this.#left > 0) {
        const n = Math.min(this.#left, chunk.length - o);
        out.push(chunk.subarray(o, o + n));
        this.#left -= n;
        o += n;
        continue;
      }
      const take = Math.min(12 - this.#pending.length, chunk.length - o);
      this.#pending = Buffer.concat([this.#pending, chunk.subarray(o, o + take)]);
      o += take;
      const size = this.#pending.length >= 4 ? 4 + Math.max(0, this.#pending.readInt32BE(0)) : Infinity;
      const whole = this.#pending.length >= Math.min(12, size) || this.#handshake && this.#pending.length >= 4;
      if (!whole) {
        if (rewrite === undefined) {
          // Nothing to rewrite: forward at once, only follow the frame.
          out.push(this.#pending.subarray(this.#sent));
          this.#sent = this.#pending.length;
        }
        continue;
      }
      if (!this.#handshake && this.#pending.length >= 12 && this.#sent <= 8 && rewrite !== undefined) {
        const to = rewrite(this.#pending.readInt32BE(8));
        if (to !== undefined) this.#pending.writeInt32BE(to, 8);
      }
      this.#handshake = false;
      out.push(this.#pending.subarray(this.#sent));
      this.#left = Math.max(0, size - this.#pending.length);
      this.#pending = Buffer.alloc(0);
      this.#sent = 0;
    }
    return out.length === 1 ? (out[0] ?? Buffer.alloc(0)) : Buffer.concat(out);
  }

  /** The common case: every frame header of `chunk` whole in it. Rewrites in place; false (untouched) otherwise. */
  #inPlace(chunk: Buffer, rewrite: ((op: number) => number | undefined) | undefined): boolean {
    let o = Math.min(this.#left, chunk.length);
    const edits: number[] = [];
    let handshake = this.#handshake;
    let left = this.#left - o;
    while (o < chunk.length) {
      if (chunk.length - o < 12) return false;
      const size = 4 + Math.max(0, chunk.readInt32BE(o));
      if (!handshake) edits.push(o + 8);
      handshake = false;
      const n = Math.min(size, chunk.length - o);
      left = size - n;
      o += n;
    }
    if (rewrite !== undefined) {
      for (const at of edits) {
        const to = rewrite(chunk.readInt32BE(at));
        if (to !== undefined) chunk.writeInt32BE(to, at);
      }
    }
    this.#handshake = handshake;
    this.#left = left;
    return true;
  }
}

/** xid and opcode of a request frame (not the handshake). */
export function requestHeader(frame: Buffer): { xid: number; op: number } | undefined {
  return frame.length >= 12 ? { xid: frame.readInt32BE(4), op: frame.readInt32BE(8) } : undefined;
}

/** xid of a reply frame (not the handshake). */
export function replyXid(frame: Buffer): number | undefined {
  return frame.length >= 8 ? frame.readInt32BE(4) : undefined;
}
