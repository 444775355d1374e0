/**
 * How long a caller that gave up still waits for what it already sent.
 *
 * @internal
 * @module
 */
import { isConnectedState } from '../client/lifecycle.js';
import type { ZkSession } from '../client/session.js';

/**
 * While connected, a request is answered in one round trip: waiting that long after a deadline
 * or an abort lets the caller see its cleanup done ("nothing is left behind" when it settles), or
 * get the item its claim already took. In an outage nothing can be answered: no wait at all.
 * Bounded either way, so a silent partition costs a caller at most this much past its deadline.
 */
export const GRACE_MS = 500;

/** {@link GRACE_MS} while `session` is connected, else 0. */
export function graceFor(session: ZkSession): number {
  return isConnectedState(session.state) ? GRACE_MS : 0;
}
