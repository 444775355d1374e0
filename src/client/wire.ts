/**
 * Requests encoded by hand, each into the one buffer that goes to the socket. The client's own
 * encoder walks a generic record specification (a regular expression per field, a buffer
 * per record, then a copy), which is most of a pipelined request's client CPU.
 *
 * @internal
 * @module
 */
import type { Acl } from './types.js';

/** Wire op codes of the requests encoded here. */
export const OPCODE = { CREATE: 1, DELETE: 2, EXISTS: 3, GET_DATA: 4, SET_DATA: 5, SYNC: 9, GET_CHILDREN2: 12, CREATE2: 15, REMOVE_WATCHES: 18 } as const;

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

/** UTF-8 length of a path as the server sees it (chroot prefixed). */
function pathBytes(chroot: string, path: string): number {
  return Buffer.byteLength(chroot) + (chroot && path === '/' ? 0 : Buffer.byteLength(path));
}

/** The path as the server sees it. */
function serverPath(chroot: string, path: string): string {
  if (!chroot) return path;
  return path === '/' ? chroot : chroot + path;
}

/** An encoded ACL vector; the open one is encoded once. */
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

/** create (1) or create2 (15): path, data, ACL vector, flags. */
export function createFrame(op: typeof OPCODE.CREATE | typeof OPCODE.CREATE2, chroot: string, path: string, data: Uint8Array | undefined, acls: Uint8Array, flags: number): Frame {
  const full = serverPath(chroot, path);
  const pb = pathBytes(chroot, path);
  return new Frame(op, 4 + pb + 4 + (data?.length ?? 0) + acls.length + 4).str(full, pb).bytes(data).raw(acls).int(flags);
}

/** delete (2): path, version. */
export function deleteFrame(chroot: string, path: string, version: number): Frame {
  const pb = pathBytes(chroot, path);
  return new Frame(OPCODE.DELETE, 4 + pb + 4).str(serverPath(chroot, path), pb).int(version);
}

/** A path and a flag: exists (3), getData (4) and getChildren2 (12); the flag sets a watch. */
export function readFrame(op: typeof OPCODE.EXISTS | typeof OPCODE.GET_DATA | typeof OPCODE.GET_CHILDREN2, chroot: string, path: string, watch: boolean): Frame {
  const pb = pathBytes(chroot, path);
  return new Frame(op, 4 + pb + 1).str(serverPath(chroot, path), pb).bool(watch);
}

/** setData (5): path, data, version. */
export function setDataFrame(chroot: string, path: string, data: Uint8Array | undefined, version: number): Frame {
  const pb = pathBytes(chroot, path);
  return new Frame(OPCODE.SET_DATA, 4 + pb + 4 + (data?.length ?? 0) + 4).str(serverPath(chroot, path), pb).bytes(data).int(version);
}

/** sync (9): the path alone. */
export function syncFrame(chroot: string, path: string): Frame {
  const pb = pathBytes(chroot, path);
  return new Frame(OPCODE.SYNC, 4 + pb).str(serverPath(chroot, path), pb);
}

/** removeWatches (18): path, watcher type (1 children, 2 data). */
export function removeWatchesFrame(chroot: string, path: string, type: 1 | 2): Frame {
  const pb = pathBytes(chroot, path);
  return new Frame(OPCODE.REMOVE_WATCHES, 4 + pb + 4).str(serverPath(chroot, path), pb).int(type);
}
