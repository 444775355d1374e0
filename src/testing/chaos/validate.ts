/**
 * Argument checks of the chaos suite's public API: bad input fails at once with an
 * {@link InvalidArgumentError} naming it, before anything starts.
 *
 * @internal
 * @module
 */
import { checkInt, checkKeys, checkSignal, describe } from '../../client/validate.js';
import { InvalidArgumentError } from '../../errors.js';

export { checkInt, checkSignal, describe };

/** Throws {@link InvalidArgumentError} with `message` unless `ok`. */
export function need(ok: boolean, message: string): asserts ok {
  if (!ok) throw new InvalidArgumentError(message);
}

export { optionKeys } from '../../client/validate.js';

/**
 * An object (the options themselves), or a default when undefined; a key not in `known` is
 * refused, naming the nearest known one (`known` undefined: any keys, e.g. a map).
 */
export function checkObject<T extends object>(value: T | undefined, what: string, known: readonly string[] | undefined): Partial<T> {
  if (value === undefined) return {};
  need(value !== null && typeof value === 'object', `${what} must be an object, got ${describe(value)}`);
  if (known !== undefined) checkKeys(value, what, known);
  return value;
}

/** A function, or undefined. */
export function checkOptionalFunction<F>(value: F | undefined, what: string): F | undefined {
  need(value === undefined || typeof value === 'function', `${what} must be a function, got ${describe(value)}`);
  return value;
}

/** A non-empty string. */
export function checkName(value: unknown, what: string): string {
  need(typeof value === 'string' && value !== '', `${what} must be a non-empty string, got ${describe(value)}`);
  return value;
}

/** A finite number >= `min`. */
export function checkNumber(value: unknown, what: string, min: number): number {
  need(typeof value === 'number' && Number.isFinite(value) && value >= min, `${what} must be a finite number >= ${min}, got ${describe(value)}`);
  return value;
}

/** Weights by key: each a finite number >= 0, each key one of `keys`. */
export function checkWeights<K extends string>(value: Partial<Record<K, number>> | undefined, keys: readonly K[], what: string): Partial<Record<K, number>> {
  const weights = checkObject(value, what, undefined);
  checkKeys(weights, what, keys, 'key');
  for (const [k, w] of Object.entries(weights)) checkNumber(w, `${what}.${k}`, 0);
  return weights as Partial<Record<K, number>>;
}
