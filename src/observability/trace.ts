/**
 * What the recipes share to publish on the channels: a trace that costs nothing unsubscribed,
 * and how an error maps to an outcome.
 *
 * @module
 */
import type { TracingChannel } from 'node:diagnostics_channel';
import { ClosedError, LockTimeoutError, OperationTimeoutError, ZkRecipesError } from '../errors.js';
import { traced, type AcquireContext } from './channels.js';

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

/**
 * {@link traceWith} that writes how the traced call ended into its context before the trace's
 * end: `ok` with the result, `failed` with the rejection (which is rethrown), each with the ms
 * since the trace started (measured only while someone subscribes).
 */
export function traceSettled<C extends object, T>(
  ch: TracingChannel<C, C>,
  build: () => C,
  fn: (ctx: C | undefined) => Promise<T>,
  ok: (ctx: C, result: T, ms: number) => void,
  failed: (ctx: C, err: unknown, ms: number) => void,
): Promise<T> {
  let startedAt = 0;
  const started = (): C => {
    startedAt = performance.now();
    return build();
  };
  return traceWith(ch, started, async (ctx) => {
    if (!ctx) return fn(ctx);
    let result: T;
    try {
      result = await fn(ctx);
    } catch (err) {
      failed(ctx, err, performance.now() - startedAt);
      throw err;
    }
    ok(ctx, result, performance.now() - startedAt);
    return result;
  });
}

/**
 * {@link traceSettled} for an acquisition: `settle` writes the outcome of a result, a rejection
 * is mapped by {@link failureOutcome} against `signal`, the wait is measured from `startedAt`.
 */
export function traceAcquire<T>(
  ch: TracingChannel<AcquireContext, AcquireContext>,
  build: () => AcquireContext,
  startedAt: number,
  signal: AbortSignal | undefined,
  fn: (ctx: AcquireContext | undefined) => Promise<T>,
  settle: (ctx: AcquireContext, result: T) => void,
): Promise<T> {
  return traceSettled(
    ch,
    build,
    fn,
    (ctx, result) => {
      settle(ctx, result);
      ctx.waitMs = performance.now() - startedAt;
    },
    (ctx, err) => {
      ctx.outcome = failureOutcome(err, signal);
      ctx.errorCode = codeOf(err);
      ctx.waitMs = performance.now() - startedAt;
    },
  );
}
