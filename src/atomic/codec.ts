/**
 * How an {@link AtomicNumber} stores its value: Curator's `DistributedAtomicLong` encoding, 8
 * bytes, big-endian, signed (two's complement).
 *
 * @internal
 * @module
 */
import { CorruptValueError, InvalidArgumentError } from '../errors.js';
import { describe } from '../client/validate.js';

/** The smallest signed 64-bit value. */
export const MIN_LONG = -(2n ** 63n);
/** The largest signed 64-bit value. */
export const MAX_LONG = 2n ** 63n - 1n;

/**
 * A caller's value as a bigint: a bigint in the signed 64-bit range, or a safe integer number
 * (beyond 2^53 a number is no longer exact, so it is refused rather than rounded).
 */
export function toLong(value: unknown, what: string, path: string): bigint {
  if (typeof value === 'bigint') {
    if (value < MIN_LONG || value > MAX_LONG) throw new InvalidArgumentError(`${what} for ${path}: ${value} is outside the signed 64-bit range ${MIN_LONG}..${MAX_LONG}`, { path });
    return value;
  }
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw new InvalidArgumentError(`${what} for ${path}: must be a bigint in the signed 64-bit range or a safe integer number, got ${describe(value)}`, { path });
}

/** Encodes a value (already in range) as 8 bytes, big-endian. */
export function encodeLong(value: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(value);
  return b;
}

/**
 * Decodes a node's data. Empty data reads as 0, as Curator reads it (a node created without
 * data, e.g. by a tool or a parent-creating call); any size but 0 or 8 is corrupt. Curator reads
 * the first 8 bytes of a longer value; it is refused here, since it is not one this recipe or
 * Curator's wrote.
 */
export function decodeLong(data: Buffer, path: string): bigint {
  if (data.length === 0) return 0n;
  if (data.length !== 8) throw new CorruptValueError(`atomic number at ${path}: the node holds ${data.length} bytes, an atomic number is 8 (big-endian, signed) or none`, { path });
  return data.readBigInt64BE(0);
}
