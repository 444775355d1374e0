/**
 * Requests encoded by hand, each into the one buffer that goes to the socket. The client's own
 * encoder walks a generic record specification (a regular expression per field, a buffer
 * per record, then a copy), which is most of a pipelined request's client CPU.
 *
 * @internal
 * @module
 */
import { serverPath, type WatchSet } from './encoding.js';
import type { Acl, Stat } from './types.js';

/** Wire op codes of the requests encoded here. */
export const OPCODE = { CREATE: 1, DELETE: 2, EXISTS: 3, GET_DATA: 4, SET_DATA: 5, SYNC: 9, GET_CHILDREN2: 12, CHECK: 13, MULTI: 14, CREATE2: 15, REMOVE_WATCHES: 18, SET_WATCHES: 101, SET_WATCHES2: 105, ADD_WATCH: 106, CREATE_CONTAINER: 19, CREATE_TTL: 21 } as const;

const LENGTH = 4; // the frame's length prefix
const HEADER = 8; // xid, op code

/** A request frame: length, xid (filled in when sent), op code, body. */
export class Frame {
  private readonly buffer: Buffer;
  private offset = LENGTH + HEADER;

  /** A frame of `op` with a body of `bodyBytes`. */
  constructor(op: number, bodyBytes: number) {
    this.buffer = Buffer.allocUnsafe(LENGTH + HEADER + bodyBytes);
    this.buffer.writeInt32BE(HEADER + bodyBytes, 0);
    this.buffer.writeInt32BE(op, LENGTH + 4);
  }

  int(n: number): this {
    this.offset = this.buffer.writeInt32BE(n, this.offset);
    return this;
  }

  bool(b: boolean): this {
    this.offset = this.buffer.writeUInt8(b ? 1 : 0, this.offset);
    return this;
  }

  /** A ustring of `bytes` bytes (its precomputed UTF-8 length). */
  str(s: string, bytes: number): this {
    this.offset = this.buffer.writeInt32BE(bytes, this.offset);
    this.offset += this.buffer.write(s, this.offset, bytes, 'utf8');
    return this;
  }

  /** A byte buffer; undefined is written as ZooKeeper's null (-1). */
  bytes(b: Uint8Array | undefined): this {
    if (b === undefined) return this.int(-1);
    this.int(b.length);
    this.buffer.set(b, this.offset);
    this.offset += b.length;
    return this;
  }

  /** Pre-encoded bytes, as they are. */
  raw(b: Uint8Array): this {
    this.buffer.set(b, this.offset);
    this.offset += b.length;
    return this;
  }

  /** The whole frame with `xid` in it; the body must be complete. */
  seal(xid: number): Buffer {
    if (this.offset !== this.buffer.length) throw new Error(`frame body is ${this.offset - LENGTH - HEADER} bytes, declared ${this.buffer.length - LENGTH - HEADER}`);
    this.buffer.writeInt32BE(xid, LENGTH);
    return this.buffer;
  }
}

/** A frame of `op` whose body is the path as the server sees it (chroot first), then `rest` bytes. */
function withPath(op: number, chroot: string, path: string, rest: number): Frame {
  const full = serverPath(chroot, path);
  const bytes = Buffer.byteLength(full);
  return new Frame(op, 4 + bytes + rest).str(full, bytes);
}

/** An encoded ACL vector. */
export function encodeAcls(acls: readonly Acl[]): Buffer {
  let size = 4;
  for (const a of acls) size += 4 + 4 + Buffer.byteLength(a.scheme) + 4 + Buffer.byteLength(a.id);
  const b = Buffer.allocUnsafe(size);
  let o = b.writeInt32BE(acls.length, 0);
  for (const a of acls) {
    o = b.writeInt32BE(a.perms, o);
    o = b.writeInt32BE(Buffer.byteLength(a.scheme), o);
    o += b.write(a.scheme, o, 'utf8');
    o = b.writeInt32BE(Buffer.byteLength(a.id), o);
    o += b.write(a.id, o, 'utf8');
  }
  return b;
}

/** The create requests: create (1), create2 (15) and createContainer (19) share one body. */
export type CreateOpcode = typeof OPCODE.CREATE | typeof OPCODE.CREATE2 | typeof OPCODE.CREATE_CONTAINER;

/** create (1), create2 (15) or createContainer (19): path, data, ACL vector, flags. */
export function createFrame(op: CreateOpcode, chroot: string, path: string, data: Uint8Array | undefined, acls: Uint8Array, flags: number): Frame {
  return withPath(op, chroot, path, 4 + (data?.length ?? 0) + acls.length + 4).bytes(data).raw(acls).int(flags);
}

/** createTTL (21): path, data, ACL vector, flags, then the time to live (a long, ms). */
export function createTtlFrame(chroot: string, path: string, data: Uint8Array | undefined, acls: Uint8Array, flags: number, ttlMs: number): Frame {
  const frame = withPath(OPCODE.CREATE_TTL, chroot, path, 4 + (data?.length ?? 0) + acls.length + 4 + 8).bytes(data).raw(acls).int(flags);
  const ttl = Buffer.alloc(8);
  ttl.writeBigInt64BE(BigInt(ttlMs));
  return frame.raw(ttl);
}

/** delete (2): path, version. */
export function deleteFrame(chroot: string, path: string, version: number): Frame {
  return withPath(OPCODE.DELETE, chroot, path, 4).int(version);
}

/** A path and a flag: exists (3), getData (4) and getChildren2 (12); the flag sets a watch. */
export function readFrame(op: typeof OPCODE.EXISTS | typeof OPCODE.GET_DATA | typeof OPCODE.GET_CHILDREN2, chroot: string, path: string, watch: boolean): Frame {
  return withPath(op, chroot, path, 1).bool(watch);
}

/** setData (5): path, data, version. */
export function setDataFrame(chroot: string, path: string, data: Uint8Array | undefined, version: number): Frame {
  return withPath(OPCODE.SET_DATA, chroot, path, 4 + (data?.length ?? 0) + 4).bytes(data).int(version);
}

/** sync (9): the path alone. */
export function syncFrame(chroot: string, path: string): Frame {
  return withPath(OPCODE.SYNC, chroot, path, 0);
}

/**
 * Watcher types of removeWatches (18): 1 children, 2 data, 3 any (every watch of the session on
 * the path, persistent ones included); 4 persistent and 5 persistent recursive from 3.9 on.
 */
export type RemoveWatchesType = 1 | 2 | 3 | 4 | 5;

/** removeWatches (18): path, watcher type. */
export function removeWatchesFrame(chroot: string, path: string, type: RemoveWatchesType): Frame {
  return withPath(OPCODE.REMOVE_WATCHES, chroot, path, 4).int(type);
}

/** addWatch (106, ZooKeeper 3.6+): path, mode (0 persistent, 1 persistent recursive). */
export function addWatchFrame(chroot: string, path: string, recursive: boolean): Frame {
  return withPath(OPCODE.ADD_WATCH, chroot, path, 4).int(recursive ? 1 : 0);
}

/**
 * setWatches (101): the last zxid seen (8 bytes, as the client keeps it), then the data,
 * existence and child watch paths, each with the chroot in front; setWatches2 (105, 3.6+) adds
 * the persistent and persistent recursive paths. One batch of the watches to re-register after
 * a reconnect (see `batchWatches` in encoding.ts): setWatches2 when `set` has persistent lists.
 */
export function setWatchesFrame(chroot: string, relativeZxid: Uint8Array, set: WatchSet): Frame {
  const lists = set.persistent === undefined ? [set.data, set.exist, set.child] : [set.data, set.exist, set.child, set.persistent, set.recursive ?? []];
  const vectors = lists.map((paths) => paths.map((p) => serverPath(chroot, p)));
  const body = relativeZxid.byteLength + vectors.reduce((n, v) => v.reduce((m, p) => m + 4 + Buffer.byteLength(p), n + 4), 0);
  const frame = new Frame(set.persistent === undefined ? OPCODE.SET_WATCHES : OPCODE.SET_WATCHES2, body).raw(relativeZxid);
  for (const v of vectors) {
    frame.int(v.length);
    for (const p of v) frame.str(p, Buffer.byteLength(p));
  }
  return frame;
}

/** One op of a transaction, its data and ACL ready to encode. */
export type MultiOp =
  | { readonly type: 'create'; readonly path: string; readonly data: Uint8Array | undefined; readonly acls: Uint8Array; readonly flags: number }
  | { readonly type: 'delete' | 'check'; readonly path: string; readonly version: number }
  | { readonly type: 'setData'; readonly path: string; readonly data: Uint8Array | undefined; readonly version: number };

const MULTI_OP: Readonly<Record<MultiOp['type'], number>> = { create: OPCODE.CREATE, delete: OPCODE.DELETE, setData: OPCODE.SET_DATA, check: OPCODE.CHECK };
/** A MultiHeader: type (int), done (bool), err (int). */
const MULTI_HEADER = 9;

/**
 * multi (14): per op a MultiHeader (its op code, not done, err -1) and the op's own request
 * body, then a closing header (type -1, done).
 */
export function multiFrame(chroot: string, ops: readonly MultiOp[]): Frame {
  const paths = ops.map((op) => serverPath(chroot, op.path));
  const lengths = paths.map((p) => Buffer.byteLength(p));
  let body = MULTI_HEADER;
  ops.forEach((op, i) => {
    body += MULTI_HEADER + 4 + (lengths[i] as number);
    if (op.type === 'create') body += 4 + (op.data?.length ?? 0) + op.acls.length + 4;
    else if (op.type === 'setData') body += 4 + (op.data?.length ?? 0) + 4;
    else body += 4;
  });
  const frame = new Frame(OPCODE.MULTI, body);
  ops.forEach((op, i) => {
    frame.int(MULTI_OP[op.type]).bool(false).int(-1).str(paths[i] as string, lengths[i] as number);
    if (op.type === 'create') frame.bytes(op.data).raw(op.acls).int(op.flags);
    else if (op.type === 'setData') frame.bytes(op.data).int(op.version);
    else frame.int(op.version);
  });
  return frame.int(-1).bool(true).int(-1);
}

// ---- replies ------------------------------------------------------------------------------

/** Reply frame layout: length, xid, zxid, error code, then the body. */
export const REPLY = { XID: 4, ZXID: 8, ERR: 16, BODY: 20 } as const;

/** Bytes of a jute Stat. */
const STAT_BYTES = 68;

/** Reads a reply body; each read checks that the frame holds what it reads. */
export class Reader {
  constructor(
    private readonly frame: Buffer,
    private offset: number,
  ) {}

  private need(n: number): void {
    if (this.offset + n > this.frame.length) throw new RangeError(`reply frame of ${this.frame.length} bytes ends before offset ${this.offset + n}`);
  }

  bool(): boolean {
    this.need(1);
    return this.frame.readUInt8(this.offset++) !== 0;
  }

  int(): number {
    this.need(4);
    const v = this.frame.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  /** A ustring ('' for ZooKeeper's null). */
  str(): string {
    const n = this.int();
    if (n < 0) return '';
    this.need(n);
    const s = this.frame.toString('utf8', this.offset, this.offset + n);
    this.offset += n;
    return s;
  }

  /** A byte buffer, copied out of the frame (null for ZooKeeper's null). */
  bytes(): Buffer | null {
    const n = this.int();
    if (n < 0) return null;
    this.need(n);
    const b = Buffer.from(this.frame.subarray(this.offset, this.offset + n));
    this.offset += n;
    return b;
  }

  /** A Stat, as {@link Stat}. */
  stat(): Stat {
    this.need(STAT_BYTES);
    const f = this.frame;
    const o = this.offset;
    this.offset += STAT_BYTES;
    return {
      czxid: f.readBigInt64BE(o),
      mzxid: f.readBigInt64BE(o + 8),
      ctime: Number(f.readBigInt64BE(o + 16)),
      mtime: Number(f.readBigInt64BE(o + 24)),
      version: f.readInt32BE(o + 32),
      cversion: f.readInt32BE(o + 36),
      aversion: f.readInt32BE(o + 40),
      ephemeralOwner: f.readBigUInt64BE(o + 44),
      dataLength: f.readInt32BE(o + 52),
      numChildren: f.readInt32BE(o + 56),
      pzxid: f.readBigInt64BE(o + 60),
    };
  }

  /** A vector of ustrings ([] for ZooKeeper's null). */
  strings(): string[] {
    const n = this.int();
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.str());
    return out;
  }
}

/** A path from the server, without the chroot the client put in front. */
export function clientPath(chroot: string, serverSide: string): string {
  if (!chroot || !serverSide.startsWith(chroot)) return serverSide;
  return serverSide.length === chroot.length ? '/' : serverSide.slice(chroot.length);
}

/** Decodes the body of a successful reply. */
export type Decoder<T> = (r: Reader) => T;

/** create: the created path. */
export const createdPath = (chroot: string): Decoder<string> => (r) => clientPath(chroot, r.str());
/** create2: the created path and its Stat. */
export const createdNode = (chroot: string): Decoder<{ path: string; stat: Stat }> => (r) => ({ path: clientPath(chroot, r.str()), stat: r.stat() });
/** exists, setData: the Stat. */
export const statOnly: Decoder<Stat> = (r) => r.stat();
/** getData: data (empty for null) and Stat. */
export const dataAndStat: Decoder<{ data: Buffer; stat: Stat }> = (r) => ({ data: r.bytes() ?? Buffer.alloc(0), stat: r.stat() });
/** getChildren2: child names and the parent's Stat. */
export const childrenAndStat: Decoder<{ children: string[]; stat: Stat }> = (r) => ({ children: r.strings(), stat: r.stat() });
/** The type of each multi result: its op's code, or -1 for an error result. */
export const MULTI_RESULT_TYPES = { CREATE: OPCODE.CREATE, DELETE: OPCODE.DELETE, SET_DATA: OPCODE.SET_DATA, CHECK: OPCODE.CHECK, ERROR: -1 } as const;

/** One result of a multi reply: the op code (-1 for an error result), its error code, its path or Stat. */
export interface MultiResult {
  readonly type: number;
  readonly err?: number;
  readonly path?: string;
  readonly stat?: Stat;
}

/**
 * multi: a MultiHeader per result until the one marked done; a create's path (create2's with
 * its Stat), a setData's Stat, an error result's code. A failed transaction's reply has a body
 * too: an error result per op (0 before the failing one, -2 "rolled back" after it).
 */
export const multiResults = (chroot: string): Decoder<MultiResult[]> => (r) => {
  const out: MultiResult[] = [];
  for (;;) {
    const type = r.int();
    const done = r.bool();
    r.int();
    if (done) return out;
    if (type === OPCODE.CREATE) out.push({ type, path: clientPath(chroot, r.str()) });
    else if (type === OPCODE.CREATE2) out.push({ type: OPCODE.CREATE, path: clientPath(chroot, r.str()), stat: r.stat() });
    else if (type === OPCODE.SET_DATA) out.push({ type, stat: r.stat() });
    else if (type === MULTI_RESULT_TYPES.ERROR) out.push({ type, err: r.int() });
    else out.push({ type });
  }
};
/** delete, sync, removeWatches: nothing the caller needs. */
export const nothing: Decoder<void> = () => undefined;
