/**
 * What both barriers share: option keys, the wait's linked signal and its timeout error.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { checkOptions, checkSignal, checkTimeout, optionKeys } from '../client/validate.js';
import { ClosedError, OperationTimeoutError } from '../errors.js';
import { linkSignals, type LinkedSignal } from '../util/signals.js';

/** Options of a barrier wait (`wait`, `enter`, `leave`). @group Recipes */
export interface BarrierWaitOptions {
  /** Gives up when this aborts (rejecting with its reason); nothing is left in ZooKeeper. */
  signal?: AbortSignal;
  /** Gives up after this many ms with `OperationTimeoutError`; nothing is left in ZooKeeper. */
  timeoutMs?: number;
}

/** The keys of {@link BarrierWaitOptions}. @internal */
export const BARRIER_WAIT_OPTION_KEYS = optionKeys<BarrierWaitOptions>({ signal: true, timeoutMs: true });

/** One wait's signal: the caller's, the recipe's close and the timeout linked. @internal */
export function linkWait(options: BarrierWaitOptions | undefined, what: string, closed: AbortSignal): LinkedSignal & { timeoutMs: number | undefined } {
  const o = checkOptions(options, what, BARRIER_WAIT_OPTION_KEYS);
  const signal = checkSignal(o.signal);
  const timeoutMs = checkTimeout(o.timeoutMs);
  const link = linkSignals([signal, closed], timeoutMs);
  return Object.assign(link, { timeoutMs });
}

/** The error a wait ending on `link` rejects with: a timeout, the abort reason, or `err`. @internal */
export function waitError(err: unknown, link: LinkedSignal & { timeoutMs: number | undefined }, what: string, path: string): unknown {
  if (link.timedOut) return new OperationTimeoutError(`${what} on ${path} timed out after ${link.timeoutMs} ms`, { path });
  if (link.signal.aborted) return link.signal.reason;
  return err;
}

/** Throws `ClosedError` when the recipe or its session is closed. @internal */
export function checkOpen(closed: boolean, session: ZkSession, what: string, path: string): void {
  if (closed) throw new ClosedError(`${what} ${path} is closed`, { path });
  if (session.closed) throw new ClosedError(`the session of ${what} ${path} is closed`, { path });
}
