/**
 * {@link boundedCall}: a recipe's call of a few session requests (a listing and its reads)
 * under the caller's `{ timeoutMs, signal }`, as every wait is.
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
 * Runs `fn` with a signal that aborts at the caller's deadline or signal, and rejects then
 * (`OperationTimeoutError` naming `what` and `path`, or the signal's reason) without waiting for
 * the reads under way, whose replies are ignored. Options are checked before anything is sent.
 * @internal
 */
export async function boundedCall<T>(options: WaitOptions, what: string, path: string, fn: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  const o = checkOptions(options, what, WAIT_OPTION_KEYS);
  const timeoutMs = checkTimeout(o.timeoutMs);
  const signal = checkSignal(o.signal);
  if (timeoutMs === undefined && signal === undefined) return fn(undefined);
  const link = linkSignals([signal], timeoutMs);
  try {
    return await raceAbort(fn(link.signal), link.signal);
  } catch (err) {
    if (link.timedOut) throw new OperationTimeoutError(`${what} on ${path} did not finish within ${timeoutMs} ms`, { path, cause: err });
    if (link.signal.aborted) throw link.signal.reason;
    throw err;
  } finally {
    link.dispose();
  }
}
