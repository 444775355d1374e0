/**
 * Calls of a few session requests under the caller's `{ timeoutMs, signal }` (and a recipe's
 * close), as every wait is: {@link withinDeadline}, and {@link boundedCall} for a public call's
 * options.
 *
 * @internal
 * @module
 */
import { OperationTimeoutError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import { linkSignals } from '../util/signals.js';
import { WAIT_OPTION_KEYS, type WaitOptions } from './lifecycle.js';
import { checkOptions, checkSignal, checkTimeout } from './validate.js';

/**
 * Runs `fn` with a signal that aborts after `timeoutMs` or when any of `signals` aborts, and
 * rejects then (`OperationTimeoutError` with `message(timeoutMs)` and `path`, or the signal's
 * reason) without waiting for the reads under way, whose replies are ignored.
 * @internal
 */
export async function withinDeadline<T>(
  timeoutMs: number | undefined,
  signals: readonly (AbortSignal | undefined)[],
  message: (timeoutMs: number | undefined) => string,
  path: string,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const link = linkSignals(signals, timeoutMs);
  try {
    return await raceAbort(fn(link.signal), link.signal);
  } catch (err) {
    if (link.timedOut) throw new OperationTimeoutError(message(timeoutMs), { path, cause: err });
    if (link.signal.aborted) throw link.signal.reason;
    throw err;
  } finally {
    link.dispose();
  }
}

/**
 * {@link withinDeadline} for a public call's `options` (checked before anything is sent); with
 * neither a deadline nor a signal, `fn` runs as it is.
 * @internal
 */
export function boundedCall<T>(options: WaitOptions, what: string, path: string, fn: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  const o = checkOptions(options, what, WAIT_OPTION_KEYS);
  const timeoutMs = checkTimeout(o.timeoutMs);
  const signal = checkSignal(o.signal);
  if (timeoutMs === undefined && signal === undefined) return fn(undefined);
  return withinDeadline(timeoutMs, [signal], (ms) => `${what} on ${path} did not finish within ${ms} ms`, path, fn);
}
