/**
 * How the chaos reports write times and fencing tokens for people: times in seconds from the
 * run's start (the timeline's axis), not on the monotonic clock the events are stamped with;
 * tokens in hex, as ZooKeeper writes zxids (a token is its node's `czxid`) and as the demo
 * prints them. The recorded history keeps the raw values (ms on the clock, decimal strings).
 *
 * @internal
 * @module
 */

/** `t` (ms on the chaos clock) as seconds from `startedAt`, e.g. `12.35 s`. */
export function runSeconds(t: number, startedAt: number, digits = 2): string {
  const origin = Number.isFinite(startedAt) ? startedAt : 0;
  return `${((t - origin) / 1000).toFixed(digits)} s`;
}

/** A fencing token (a bigint, or its decimal string) in hex, e.g. `0x1a2b`; `-1` (none) as `none`. */
export function hexToken(token: bigint | string): string {
  let n: bigint;
  try {
    n = typeof token === 'bigint' ? token : BigInt(token);
  } catch {
    return String(token); // not a number: shown as recorded
  }
  return n < 0n ? 'none' : `0x${n.toString(16)}`;
}

/** A duration in ms, rounded for reading: `290 ms`, `0.4 ms` under 10 ms. */
export function ms(value: number): string {
  return `${Math.abs(value) < 10 ? value.toFixed(1) : Math.round(value)} ms`;
}
