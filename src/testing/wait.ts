import { setTimeout as delay } from 'node:timers/promises';
import { InvalidArgumentError } from '../errors.js';
import { checkFunction, checkOptions, checkSignal, checkTimeout, describe, optionKeys } from './check.js';

/** Error thrown by {@link waitFor} and {@link withTimeout} when the deadline passes. @group Testing */
export class WaitTimeoutError extends Error {
  /** Stable error code. */
  readonly code = 'WAIT_TIMEOUT';

  /** Builds the error; `cause` is the predicate's last error, if any. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WaitTimeoutError';
  }
}

/** Options of {@link waitFor}. @group Testing */
export interface WaitForOptions {
  /** Deadline in milliseconds, 0 to 2^31-1 (default 10000). */
  timeoutMs?: number;
  /** Pause between two evaluations of the predicate, in milliseconds, 0 to 2^31-1 (default 25). */
  intervalMs?: number;
  /** What is awaited, for the timeout message. */
  message?: string;
  /** Stops waiting early, rejecting with the signal's reason. */
  signal?: AbortSignal;
}

/** The keys of {@link WaitForOptions}. @internal */
export const WAIT_FOR_OPTION_KEYS = optionKeys<WaitForOptions>({ timeoutMs: true, intervalMs: true, message: true, signal: true });

/**
 * Polls `predicate` until it returns a truthy value, and resolves to that value.
 * A predicate that throws counts as "not yet"; its last error becomes the timeout's cause.
 * An aborted `signal` rejects with its reason (at once if it is aborted already).
 * @throws WaitTimeoutError when `timeoutMs` passes first.
 * @throws InvalidArgumentError for a predicate that is not a function or a bad option.
 * @group Testing
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<NonNullable<T>> {
  checkFunction(predicate, 'waitFor: predicate');
  const o = checkOptions(options, 'waitFor', WAIT_FOR_OPTION_KEYS);
  const timeoutMs = checkTimeout(o.timeoutMs, 'timeoutMs') ?? 10_000;
  const intervalMs = checkTimeout(o.intervalMs, 'intervalMs') ?? 25;
  const message = o.message === undefined ? 'condition' : checkMessage(o.message);
  const signal = checkSignal(o.signal);
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    signal?.throwIfAborted();
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    const left = deadline - performance.now();
    if (left <= 0) {
      const why = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new WaitTimeoutError(
        `timed out after ${timeoutMs} ms waiting for ${message}${why}`,
        lastError === undefined ? undefined : { cause: lastError },
      );
    }
    try {
      await delay(Math.min(intervalMs, left), undefined, signal ? { signal } : undefined);
    } catch (error) {
      signal?.throwIfAborted(); // the caller's reason, not a generic AbortError
      throw error;
    }
  }
}

/**
 * Resolves like `promise`, or rejects with {@link WaitTimeoutError} after `timeoutMs` (0 to
 * 2^31-1). The timer is cleared once the promise settles.
 * @throws InvalidArgumentError for something that is not a promise, or a bad `timeoutMs` or `message`.
 * @group Testing
 */
export async function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  message = 'operation',
): Promise<T> {
  const thenable = promise as { then?: unknown } | null;
  if (thenable === null || (typeof thenable !== 'object' && typeof thenable !== 'function') || typeof thenable.then !== 'function') {
    throw new InvalidArgumentError(`withTimeout: promise must be a promise, got ${describe(promise)}`);
  }
  if (timeoutMs === undefined) throw new InvalidArgumentError('withTimeout: timeoutMs is required');
  checkTimeout(timeoutMs, 'withTimeout: timeoutMs');
  checkMessage(message);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${message}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function checkMessage(message: unknown): string {
  if (typeof message !== 'string') throw new InvalidArgumentError(`message must be a string, got ${describe(message)}`);
  return message;
}
