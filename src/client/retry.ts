/**
 * Bounded exponential backoff with jitter for idempotent calls that fail with connection loss.
 *
 * @module
 */
import { ConnectionLossError } from '../errors.js';
import { checkInt, checkTimeout } from './validate.js';

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

/** Fills and validates a partial policy. @group Sessions */
export function resolveRetryPolicy(p: Partial<RetryPolicy> | undefined): RetryPolicy {
  const d = DEFAULT_RETRY;
  return {
    maxRetries: checkInt(p?.maxRetries, 'retry.maxRetries', 0, 1000, d.maxRetries),
    baseDelayMs: checkTimeout(p?.baseDelayMs, 'retry.baseDelayMs') ?? d.baseDelayMs,
    maxDelayMs: checkTimeout(p?.maxDelayMs, 'retry.maxDelayMs') ?? d.maxDelayMs,
    deadlineMs: checkTimeout(p?.deadlineMs, 'retry.deadlineMs') ?? d.deadlineMs,
  };
}

/**
 * The delay before retry number `attempt` (0-based): "full jitter" between half and all of
 * `min(maxDelayMs, baseDelayMs * 2^attempt)`, so retrying clients do not move in lockstep.
 * @group Sessions
 */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return ceiling / 2 + random() * (ceiling / 2);
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
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!retryable(err) || attempt >= policy.maxRetries) throw err;
      const delay = backoffDelay(policy, attempt);
      if (performance.now() - start + delay > policy.deadlineMs) throw err;
      await sleep(delay);
    }
  }
}
