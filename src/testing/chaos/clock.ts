/**
 * The clock every process of a chaos run stamps its events with.
 *
 * @module
 */

/**
 * Milliseconds on the host's monotonic clock (`process.hrtime`, CLOCK_MONOTONIC on Linux),
 * with sub-millisecond precision. Every process on one host reads the same clock, so events
 * stamped in different processes compare directly: no offset to estimate, and no jump when the
 * wall clock is set. (`performance.timeOrigin + performance.now()` would add each process's
 * error in sampling the wall clock at its start.)
 */
export function chaosNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
