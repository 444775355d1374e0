/**
 * Calling an emitter's listeners so that one that throws neither stops the others nor reaches
 * the caller (a socket handler, a timer).
 *
 * @internal
 * @module
 */

/** What of an eventemitter3 emitter is used here. */
interface Emitter {
  listeners(event: string): unknown[];
  listenerCount(event: string): number;
  removeListener(event: string, fn: never, context: undefined, once: true): unknown;
}

/**
 * Calls every listener of `event` with `args`. A listener that throws is reported as `error`
 * (to the `error` listeners, if any; else as a process warning), and the others still run.
 */
export function callListeners(emitter: Emitter, event: string, args: readonly unknown[]): void {
  for (const fn of emitter.listeners(event) as ((...a: unknown[]) => void)[]) {
    // A once() listener is dropped before it runs, as eventemitter3 would: its flag is all that is removed.
    emitter.removeListener(event, fn as never, undefined, true);
    try {
      fn.apply(emitter, args as unknown[]);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      if (event !== 'error' && emitter.listenerCount('error') > 0) callListeners(emitter, 'error', [error]);
      else process.emitWarning(error);
    }
  }
}
