/**
 * How {@link SharedValue} and {@link SharedCount} store their value in the node's data: bytes
 * as they are; a count as Curator's `SharedCount` does, 4 bytes, big-endian, signed.
 *
 * @internal
 * @module
 */
import { CorruptValueError, InvalidArgumentError } from '../errors.js';

/** How a value is stored. @internal */
export interface Codec<T> {
  /** Checks and encodes a caller's value (InvalidArgumentError on a bad one). */
  encode(value: unknown, path: string): Buffer;
  /** Decodes a node's data (CorruptValueError on data of the wrong size). */
  decode(data: Buffer, path: string): T;
  equals(a: T, b: T): boolean;
}

/** Raw bytes (a string as UTF-8). */
export const BYTES: Codec<Buffer> = {
  encode(value, path) {
    if (typeof value === 'string') return Buffer.from(value, 'utf8');
    if (value instanceof Uint8Array) return Buffer.from(value);
    throw new InvalidArgumentError(`shared value at ${path}: a value must be a Uint8Array or a string, got ${value === null ? 'null' : typeof value}`, { path });
  },
  decode: (data) => Buffer.from(data),
  equals: (a, b) => a.equals(b),
};

/**
 * Encodes a count as Curator's `SharedCount` does: 4 bytes, big-endian, signed.
 * @internal
 */
export function encodeCount(value: unknown, path: string): Buffer {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -(2 ** 31) || value > 2 ** 31 - 1) {
    throw new InvalidArgumentError(`shared count at ${path}: a count must be an integer from -2147483648 to 2147483647, got ${String(value)}`, { path });
  }
  const b = Buffer.alloc(4);
  b.writeInt32BE(value);
  return b;
}

/**
 * Decodes a count: exactly 4 bytes, big-endian, signed. Any other size is corrupt (Curator
 * would read the first 4 of a longer node; such data was not written by a count).
 * @internal
 */
export function decodeCount(data: Buffer, path: string): number {
  if (data.length !== 4) throw new CorruptValueError(`shared count at ${path}: the node holds ${data.length} bytes, a count is 4 (big-endian)`, { path });
  return data.readInt32BE(0);
}

/** A signed 32-bit count. */
export const COUNT: Codec<number> = { encode: encodeCount, decode: decodeCount, equals: (a, b) => a === b };
