/**
 * Bounded exponential backoff with jitter for idempotent calls that fail with connection loss.
 *
 * @module
 */
import { ConnectionLossError, InvalidArgumentError } from '../errors.js';
import { checkDelay, checkInt, checkKeys, checkTimeout, describe, optionKeys } from './validate.js';

/** How idempotent calls are retried on {@link ConnectionLossError}. @group Sessions */
export interface RetryPolicy {
  /** Retries after the first attempt (0 = never retry). Default 8. */
  maxRetries: number;
  /** First backoff, ms; doubled per retry. Default 50. */
  baseDelayMs: number;
  /** Cap of one backoff, ms. Default 2000. */
  maxDelayMs: number;
  /** Give up once this much time has passed since the first attempt, ms. Default 30000. */
  deadlineMs: number;
}

/** The default {@link RetryPolicy}. @group Sessions */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = { maxRetries: 8, baseDelayMs: 50, maxDelayMs: 2000, deadlineMs: 30_000 };

/** The keys of a {@link RetryPolicy}. @internal */
export const RETRY_POLICY_KEYS = optionKeys<RetryPolicy>({ maxRetries: true, baseDelayMs: true, maxDelayMs: true, deadlineMs: true });
/** The keys of a `{ baseDelayMs?, maxDelayMs? }` backoff option. @internal */
export const BACKOFF_KEYS = optionKeys<Backoff>({ baseDelayMs: true, maxDelayMs: true });

/** Fills and validates a partial policy. @group Sessions */
export function resolveRetryPolicy(p: Partial<RetryPolicy> | undefined): RetryPolicy {
  if (p !== undefined && (p === null || typeof p !== 'object' || Array.isArray(p))) throw new InvalidArgumentError(`retry must be an object { maxRetries?, baseDelayMs?, maxDelayMs?, deadlineMs? }, got ${describe(p)}`);
  const d = DEFAULT_RETRY;
  const { baseDelayMs, maxDelayMs } = resolveBackoff(p, 'retry', d, RETRY_POLICY_KEYS);
  return {
    maxRetries: checkInt(p?.maxRetries, 'retry.maxRetries', 0, 1000, d.maxRetries),
    baseDelayMs,
    maxDelayMs,
    deadlineMs: checkTimeout(p?.deadlineMs, 'retry.deadlineMs') ?? d.deadlineMs,
  };
}

/** A jittered exponential backoff, resolved: the first delay and the cap, ms. @internal */
export interface Backoff {
  /** The first delay (before jitter), ms. */
  readonly baseDelayMs: number;
  /** The cap of one delay (before jitter), ms. */
  readonly maxDelayMs: number;
}

/**
 * Validates an optional `{ baseDelayMs?, maxDelayMs? }` option named `what` and fills it from
 * `defaults` (a base above the default cap raises the cap to it). Each must be an integer number
 * of ms a timer can wait, and the cap must not be below the base; a key not in `known` (by
 * default those two) is refused. @internal
 */
export function resolveBackoff(value: unknown, what: string, defaults: Backoff, known: readonly string[] = BACKOFF_KEYS): Backoff {
  if (value === undefined) return { baseDelayMs: defaults.baseDelayMs, maxDelayMs: defaults.maxDelayMs };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentError(`${what} must be an object { baseDelayMs?, maxDelayMs? }, got ${describe(value)}`);
  checkKeys(value, what, known);
  const v = value as { baseDelayMs?: unknown; maxDelayMs?: unknown };
  const baseDelayMs = checkDelay(v.baseDelayMs, `${what}.baseDelayMs`, defaults.baseDelayMs);
  const maxDelayMs = checkDelay(v.maxDelayMs, `${what}.maxDelayMs`, Math.max(defaults.maxDelayMs, baseDelayMs));
  if (maxDelayMs < baseDelayMs) throw new InvalidArgumentError(`${what}.maxDelayMs (${maxDelayMs}) must not be below ${what}.baseDelayMs (${baseDelayMs})`);
  return { baseDelayMs, maxDelayMs };
}

/**
 * The delay before retry number `attempt` (0-based): "equal jitter", between half and all of
 * `min(maxDelayMs, baseDelayMs * 2^attempt)`, so retrying clients do not move in lockstep.
 * Throws {@link InvalidArgumentError} for a policy without numeric delays or a negative or
 * fractional `attempt`.
 * @group Sessions
 */
export function backoffDelay(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, attempt: number, random: () => number = Math.random): number {
  if (policy === null || typeof policy !== 'object' || !isDelay(policy.baseDelayMs) || !isDelay(policy.maxDelayMs)) {
    throw new InvalidArgumentError(`backoffDelay: policy must have baseDelayMs and maxDelayMs (numbers >= 0), got ${describe(policy)}`);
  }
  if (!Number.isInteger(attempt) || attempt < 0) throw new InvalidArgumentError(`backoffDelay: attempt must be an integer >= 0, got ${describe(attempt)}`);
  // Past 2^40 the product overflows nothing but means nothing either: the cap applies.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt, 40));
  return ceiling / 2 + random() * (ceiling / 2);
}

function isDelay(x: unknown): x is number {
  return typeof x === 'number' && x >= 0 && Number.isFinite(x);
}

/**
 * Runs `fn`, retrying within the policy's bounds while `retryable` says an error is worth
 * another attempt (by default: {@link ConnectionLossError}). `fn` gets the attempt number (0 for
 * the first). Other errors, and the last retryable one, are thrown.
 * @group Sessions
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  fn: (attempt: number) => Promise<T>,
  sleep: (ms: number) => Promise<void>,
  retryable: (err: unknown) => boolean = (err) => err instanceof ConnectionLossError,
): Promise<T> {
  const start = performance.now();
  try {
    return await fn(0);
  } catch (err) {
    return retryAfter(policy, err, fn, sleep, retryable, start);
  }
}

/**
 * The rest of {@link withRetry} once its first attempt, begun at `start` (`performance.now()`),
 * failed with `err`: for a caller that sends the first attempt itself, with no retry loop around
 * it (on every request's path, a reply then reaches the caller without the loop's promises).
 *
 * @internal
 */
export async function retryAfter<T>(
  policy: RetryPolicy,
  err: unknown,
  fn: (attempt: number) => Promise<T>,
  sleep: (ms: number) => Promise<void>,
  retryable: (err: unknown) => boolean,
  start: number,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    if (!retryable(err) || attempt >= policy.maxRetries) throw err;
    const delay = backoffDelay(policy, attempt);
    if (performance.now() - start + delay > policy.deadlineMs) throw err;
    await sleep(delay);
    try {
      return await fn(attempt + 1);
    } catch (next) {
      err = next;
    }
  }
}
