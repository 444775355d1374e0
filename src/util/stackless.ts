/**
 * Building an error without capturing a stack, where the stack costs more than the rest of the
 * error and would say nothing (an error built in a reply handler) or is built on a hot path.
 *
 * @internal
 * @module
 */

/** Runs `make` (which builds an error) with no stack frames captured; the error's `stack` is its name and message. */
export function stackless<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
