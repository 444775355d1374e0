/**
 * Encoded sizes of requests, in bytes, so one the server cannot accept is refused before it is
 * sent: a packet over the server's `jute.maxbuffer` makes it drop the connection, and re-sending
 * it would flap the connection of every recipe on the session forever. Every request kind the
 * session sends has its size here, counted as the encoder writes it (UTF-8 bytes of the path
 * after the chroot, of data and of ACL schemes and ids); `test/unit/wire.test.ts` checks each
 * against the encoded frame.
 *
 * @internal
 * @module
 */
import type { Acl } from './types.js';

/** ZooKeeper's default `jute.maxbuffer`: the largest request body (after the length) it reads. */
export const DEFAULT_MAX_PACKET_BYTES = 0xfffff;

/**
 * Target size of one SetWatches packet when watches are re-registered after a reconnect: the
 * Java client's batch size (ZOOKEEPER-706), or the packet limit when that is smaller.
 */
export const SET_WATCHES_BATCH_BYTES = 128 * 1024;

const HEADER = 8; // xid, opcode
const INT = 4;
const LONG = 8;
const BOOL = 1;
const MULTI_HEADER = 9; // type, done flag, error code

/** The path as the server sees it: the chroot in front (the root is the chroot itself). */
export function serverPath(chroot: string, path: string): string {
  return !chroot ? path : path === '/' ? chroot : chroot + path;
}

/** A ustring of the path as the server sees it. */
function pathBytes(path: string, chroot: string): number {
  return INT + Buffer.byteLength(serverPath(chroot, path));
}

function str(s: string): number {
  return INT + Buffer.byteLength(s);
}

function bytes(b: Uint8Array | undefined): number {
  return INT + (b?.byteLength ?? 0);
}

function acls(list: readonly Acl[] | undefined): number {
  return INT + (list ?? []).reduce((n, a) => n + INT + str(a.scheme) + str(a.id), 0);
}

/** A request as far as its size goes: each kind the session sends. */
export type SizedRequest =
  | { type: 'create'; path: string; data?: Uint8Array | undefined; acl?: readonly Acl[] | undefined; ttl?: boolean }
  | { type: 'setData'; path: string; data?: Uint8Array | undefined }
  | { type: 'delete' | 'check' | 'removeWatches' | 'addWatch'; path: string }
  | { type: 'exists' | 'getData' | 'getChildren'; path: string }
  | { type: 'sync'; path: string };

/** Encoded size of a request's body (also a transaction op's record). */
function bodySize(req: SizedRequest, chroot: string): number {
  const path = pathBytes(req.path, chroot);
  switch (req.type) {
    case 'create':
      return path + bytes(req.data) + acls(req.acl) + INT + (req.ttl ? LONG : 0); // flags, a time to live
    case 'setData':
      return path + bytes(req.data) + INT; // version
    case 'delete':
    case 'check':
    case 'removeWatches':
    case 'addWatch':
      return path + INT; // version, the watcher type, or the watch mode
    case 'exists':
    case 'getData':
    case 'getChildren':
      return path + BOOL; // the watch flag
    case 'sync':
      return path;
  }
}

/** Size of a request as the server counts it against `jute.maxbuffer` (after the length prefix). */
export function requestSize(req: SizedRequest, chroot: string): number {
  return HEADER + bodySize(req, chroot);
}

/** Size of a multi request as the server counts it against `jute.maxbuffer`. */
export function multiSize(ops: readonly SizedRequest[], chroot: string): number {
  return HEADER + ops.reduce((n, op) => n + MULTI_HEADER + bodySize(op, chroot), 0) + MULTI_HEADER;
}

/**
 * The watch paths of one SetWatches packet (client paths, without the chroot). With persistent
 * lists (even empty) it is a SetWatches2 packet (ZooKeeper 3.6+).
 */
export interface WatchSet {
  data: string[];
  exist: string[];
  child: string[];
  persistent?: string[];
  recursive?: string[];
}

const KINDS = ['data', 'exist', 'child', 'persistent', 'recursive'] as const;

/** Size of a SetWatches request (relative zxid, then the three or five path vectors). */
export function setWatchesSize(set: WatchSet, chroot: string): number {
  const vector = (paths: readonly string[] | undefined): number => (paths ?? []).reduce((n, p) => n + pathBytes(p, chroot), INT);
  const lists = set.persistent === undefined ? [set.data, set.exist, set.child] : [set.data, set.exist, set.child, set.persistent, set.recursive];
  return HEADER + LONG + lists.reduce((n, l) => n + vector(l), 0);
}

/**
 * Size of the SetWatches packet that re-registers one watch on `path` alone: the largest request
 * a watch on that path can ever cost, so a watch-setting read is refused unless this fits.
 */
export function watchSize(path: string, chroot: string, persistent = false): number {
  return setWatchesSize(persistent ? { data: [], exist: [], child: [], persistent: [path], recursive: [] } : { data: [path], exist: [], child: [] }, chroot);
}

/**
 * Splits a watch set into SetWatches packets of at most `limit` bytes each (a single watch
 * bigger than that goes alone: every watch was checked against the packet limit when it was
 * set), data watches first, then existence, then child watches, as the Java client does, then
 * persistent and recursive ones. Where the set has persistent watches every packet is a
 * SetWatches2; they come after every one-shot watch, in that packet or a later one, because a
 * server before 3.9 keeps one watch mode per path and session: the last one set wins.
 */
export function batchWatches(set: WatchSet, chroot: string, limit: number): WatchSet[] {
  const two = (set.persistent?.length ?? 0) + (set.recursive?.length ?? 0) > 0;
  const fresh = (): WatchSet => (two ? { data: [], exist: [], child: [], persistent: [], recursive: [] } : { data: [], exist: [], child: [] });
  const batches: WatchSet[] = [];
  const empty = HEADER + LONG + (two ? 5 : 3) * INT;
  let batch = fresh();
  let size = empty;
  for (const kind of KINDS) {
    for (const path of set[kind] ?? []) {
      const cost = pathBytes(path, chroot);
      if (size + cost > limit && size > empty) {
        batches.push(batch);
        batch = fresh();
        size = empty;
      }
      (batch[kind] ??= []).push(path);
      size += cost;
    }
  }
  if (size > empty) batches.push(batch);
  return batches;
}
