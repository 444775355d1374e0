/**
 * What the recipes share to publish on the channels: a trace that costs nothing unsubscribed,
 * and how an error maps to an outcome.
 *
 * @module
 */
import type { TracingChannel } from 'node:diagnostics_channel';
import { ClosedError, LockTimeoutError, OperationTimeoutError, ZkRecipesError } from '../errors.js';
import { traced } from './channels.js';

/**
 * Runs `fn` as a trace on `ch` with the context `build` makes, or plainly (given no context)
 * while nobody subscribes: then nothing is built.
 */
export function traceWith<C extends object, T>(ch: TracingChannel<C, C>, build: () => C, fn: (ctx: C | undefined) => Promise<T>): Promise<T> {
  if (!traced(ch)) return fn(undefined);
  const ctx = build();
  return ch.tracePromise(() => fn(ctx), ctx);
}

/** The stable code of an error of ours (a ZooKeeper reply's, e.g. `CONNECTION_LOSS`). */
export function codeOf(err: unknown): string | undefined {
  return err instanceof ZkRecipesError ? err.code : undefined;
}

/** How a wait that rejected with `err` ended: timed out, given up (signal or close), or failed. */
export function failureOutcome(err: unknown, signal: AbortSignal | undefined): 'timeout' | 'aborted' | 'error' {
  if (err instanceof LockTimeoutError || err instanceof OperationTimeoutError) return 'timeout';
  if ((signal?.aborted && err === signal.reason) || err instanceof ClosedError) return 'aborted';
  return 'error';
}
