/**
 * Encoded sizes of requests, so one the server cannot accept is refused before it is sent: a
 * packet over the server's `jute.maxbuffer` makes it drop the connection, and re-sending it
 * would flap the connection of every recipe on the session forever.
 *
 * @internal
 * @module
 */
import type { Acl, Op } from './types.js';

/** ZooKeeper's default `jute.maxbuffer`: the largest request body (after the length) it reads. */
export const DEFAULT_MAX_PACKET_BYTES = 0xfffff;

const HEADER = 8; // xid, opcode
const INT = 4;
const MULTI_HEADER = 9; // type, done flag, error code

function str(s: string, chroot: number): number {
  return INT + chroot + Buffer.byteLength(s);
}

function bytes(b: Uint8Array | undefined): number {
  return INT + (b?.length ?? 0);
}

function acls(list: readonly Acl[] | undefined): number {
  return INT + (list ?? []).reduce((n, a) => n + INT + str(a.scheme, 0) + str(a.id, 0), 0);
}

/** Encoded size of one transaction op (also a create's or setData's body on its own). */
function opSize(op: Op & { data?: Uint8Array }, chroot: number): number {
  switch (op.type) {
    case 'create':
      return str(op.path, chroot) + bytes(op.data) + acls(op.acl) + INT;
    case 'setData':
      return str(op.path, chroot) + bytes(op.data) + INT;
    default:
      return str(op.path, chroot) + INT;
  }
}

/** Size of a request body as the server counts it against `jute.maxbuffer`. */
export function requestSize(op: Op & { data?: Uint8Array }, chroot: number): number {
  return HEADER + opSize(op, chroot);
}

/** Size of a multi request as the server counts it against `jute.maxbuffer`. */
export function multiSize(ops: readonly (Op & { data?: Uint8Array })[], chroot: number): number {
  return HEADER + ops.reduce((n, op) => n + MULTI_HEADER + opSize(op, chroot), 0) + MULTI_HEADER;
}
