/**
 * Backoff of the queue's retries and background loops: jittered, capped, and always on a timer
 * (a loop never retries synchronously); and how a write already sent is waited for.
 *
 * @internal
 * @module
 */
import { backoffDelay, DEFAULT_RETRY } from '../client/retry.js';
import { describe } from '../client/validate.js';
import { ConnectionLossError, InvalidArgumentError } from '../errors.js';
import { delay, raceAbort } from '../util/abort.js';
import type { ZkSession } from '../client/session.js';

/** A resolved backoff: the first delay and the cap, ms. */
export interface Backoff {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** The longest delay Node's timers honour (longer ones fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Retries of one request after a connection loss: 50 ms, doubling, at most 2 s. */
export const LOSS_BACKOFF: Backoff = { baseDelayMs: 50, maxDelayMs: 2000 };

/** The delay before retry `attempt` (0-based): between half and all of `min(max, base * 2^attempt)`. */
export function backoffMs(backoff: Backoff, attempt: number): number {
  return backoffDelay({ ...DEFAULT_RETRY, ...backoff }, Math.min(attempt, 40));
}

/** Validates an optional `{ baseDelayMs, maxDelayMs }` and fills in `defaults`. */
export function checkBackoff(value: unknown, what: string, defaults: Backoff): Backoff {
  if (value === undefined) return defaults;
  if (value === null || typeof value !== 'object') throw new InvalidArgumentError(`${what} must be an object { baseDelayMs?, maxDelayMs? }, got ${describe(value)}`);
  const v = value as { baseDelayMs?: unknown; maxDelayMs?: unknown };
  const ms = (x: unknown, name: string, fallback: number): number => {
    if (x === undefined) return fallback;
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > MAX_TIMER_MS) {
      throw new InvalidArgumentError(`${what}.${name} must be an integer from 0 to ${MAX_TIMER_MS} (ms), got ${describe(x)}`);
    }
    return x;
  };
  const baseDelayMs = ms(v.baseDelayMs, 'baseDelayMs', defaults.baseDelayMs);
  const maxDelayMs = ms(v.maxDelayMs, 'maxDelayMs', Math.max(defaults.maxDelayMs, baseDelayMs));
  if (maxDelayMs < baseDelayMs) throw new InvalidArgumentError(`${what}.maxDelayMs (${maxDelayMs}) must not be below ${what}.baseDelayMs (${baseDelayMs})`);
  return { baseDelayMs, maxDelayMs };
}

/**
 * Runs `fn` until it settles with something other than a {@link ConnectionLossError}: after
 * each loss, backs off (jittered) and waits to be connected again, all bounded by `signal`
 * (rejects with its reason). For requests that are safe to send again, reads above all.
 */
export async function untilAnswered<T>(session: ZkSession, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ConnectionLossError)) throw err;
    }
    await delay(backoffMs(LOSS_BACKOFF, attempt), signal);
    await session.waitConnected({ signal });
  }
}

/**
 * How long an aborted call still waits for the answer to its write (a take's delete, a put's
 * transaction) when that write is on its way over a live connection: a round trip, normally.
 */
export const ANSWER_GRACE_MS = 1000;

/**
 * Waits for `write`, a request already sent, rejecting with `signal`'s reason when it aborts.
 * If it aborts while the session is connected, waits up to {@link ANSWER_GRACE_MS} more for
 * the answer, and resolves if the write succeeded: an abort should not turn a take the server
 * applied into a lost item, or a put into an unknown outcome, for the sake of a round trip.
 */
export async function seeThrough<T>(session: ZkSession, write: Promise<T>, signal: AbortSignal): Promise<T> {
  try {
    return await raceAbort(write, signal);
  } catch (err) {
    if (!signal.aborted || (session.state !== 'CONNECTED' && session.state !== 'RECONNECTED')) throw err;
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      write.then(
        (value) => ({ value }),
        () => undefined,
      ),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ANSWER_GRACE_MS))),
    ]).finally(() => clearTimeout(timer));
    if (late) return late.value;
    throw err;
  }
}
