/**
 * Conversion of the client's raw Stat (8-byte buffers for longs) to {@link Stat}.
 *
 * @internal
 * @module
 */
import type { RawStat } from './nzc.js';
import type { Stat } from './types.js';

/** Converts a raw jute Stat to a {@link Stat}. */
export function toStat(s: RawStat): Stat {
  return {
    czxid: s.czxid.readBigInt64BE(0),
    mzxid: s.mzxid.readBigInt64BE(0),
    pzxid: s.pzxid.readBigInt64BE(0),
    ctime: Number(s.ctime.readBigInt64BE(0)),
    mtime: Number(s.mtime.readBigInt64BE(0)),
    version: s.version,
    cversion: s.cversion,
    aversion: s.aversion,
    ephemeralOwner: s.ephemeralOwner.readBigUInt64BE(0),
    dataLength: s.dataLength,
    numChildren: s.numChildren,
  };
}
