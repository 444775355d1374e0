/**
 * Argument checks of the test kit: bad input is an {@link InvalidArgumentError} that names the
 * argument, thrown before anything starts (no JVM, no socket, no timer).
 *
 * @internal
 * @module
 */
import { checkInt, checkRecord, describe, MAX_TIMER_MS } from '../client/validate.js';
import { InvalidArgumentError } from '../errors.js';

export { checkBoolean, checkFunction, checkInt, checkOptions, checkSignal, checkTimeout, describe, MAX_TIMER_MS, optionKeys } from '../client/validate.js';

/** A TCP port, 1 to 65535 (undefined: `fallback`, or undefined). */
export function checkPort(value: unknown, what: string): number;
export function checkPort(value: unknown, what: string, optional: true): number | undefined;
export function checkPort(value: unknown, what: string, optional = false): number | undefined {
  if (value === undefined && optional) return undefined;
  return checkInt(value, what, 1, 65535);
}

/** A deadline in ms that leaves time to act: a number above 0, at most 2^31-1 (undefined: `fallback`). */
export function checkDeadline(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0 && value <= MAX_TIMER_MS)) {
    throw new InvalidArgumentError(`${what} must be a number of ms above 0 and at most ${MAX_TIMER_MS} (the longest a timer can wait), got ${describe(value)}`);
  }
  return value;
}

/** A non-empty string. */
export function checkNonEmptyString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new InvalidArgumentError(`${what} must be a non-empty string, got ${describe(value)}`);
  return value;
}

/** An optional array of single-line strings (config lines, JVM flags). */
export function checkLines(value: unknown, what: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new InvalidArgumentError(`${what} must be an array of strings, got ${describe(value)}`);
  for (const [i, line] of value.entries()) {
    if (typeof line !== 'string' || /[\r\n]/.test(line)) throw new InvalidArgumentError(`${what}[${i}] must be a string on one line, got ${describe(line)}`);
  }
  return value as readonly string[];
}

/** An optional environment: an object of strings. */
export function checkEnv(value: unknown, what = 'env'): NodeJS.ProcessEnv | undefined {
  // Any variable names: no unknown-key check.
  return checkRecord(value as NodeJS.ProcessEnv | undefined, what);
}
