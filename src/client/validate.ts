/**
 * Argument checks done before anything is sent, so bad input fails fast with a typed error.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.js';
import type { NodeData } from './types.js';

/** Whether ZooKeeper's PathUtils rejects this UTF-16 code unit. */
function forbidden(c: number): boolean {
  return c <= 0x1f || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xf8ff) || c >= 0xfff0;
}

/**
 * Throws {@link InvalidArgumentError} unless `path` is a valid absolute znode path: starts with
 * `/`, no trailing `/` (except the root), no empty, `.` or `..` segment, no forbidden characters.
 */
export function validatePath(path: unknown, what = 'path'): asserts path is string {
  if (typeof path !== 'string' || path.length === 0) {
    throw new InvalidArgumentError(`${what} must be a non-empty string, got ${describe(path)}`);
  }
  const problem = pathProblem(path);
  if (problem) throw new InvalidArgumentError(`${what} ${JSON.stringify(path)} is not a valid znode path: ${problem}`);
}

// Loops over code units without allocating: this is on every request's path.
function pathProblem(path: string): string | undefined {
  if (path.charCodeAt(0) !== 0x2f) return 'it must start with "/"';
  if (path.length === 1) return undefined;
  if (path.charCodeAt(path.length - 1) === 0x2f) return 'it must not end with "/"';
  for (let i = 1; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (forbidden(c)) return `it contains the forbidden character U+${c.toString(16).padStart(4, '0')}`;
  }
  let start = 1; // first index of the current segment
  for (let i = 1; i <= path.length; i++) {
    if (i < path.length && path.charCodeAt(i) !== 0x2f) continue;
    const len = i - start;
    if (len === 0) return 'it has an empty segment ("//")';
    if (path.charCodeAt(start) === 0x2e && (len === 1 || (len === 2 && path.charCodeAt(start + 1) === 0x2e))) return `it has a relative segment "${path.slice(start, i)}"`;
    start = i + 1;
  }
  return undefined;
}

/**
 * Joins a parent path and a child name. Throws {@link InvalidArgumentError} unless `parent` is
 * a string and `child` a non-empty string without `/` (the parent itself is not re-validated:
 * this is on every request's path).
 */
export function joinPath(parent: string, child: string): string {
  if (typeof parent !== 'string' || parent === '') throw new InvalidArgumentError(`joinPath: parent must be a non-empty string, got ${describe(parent)}`);
  if (typeof child !== 'string' || child === '' || child.includes('/')) throw new InvalidArgumentError(`joinPath: child must be a non-empty name without "/", got ${describe(child)}`);
  return parent === '/' ? `/${child}` : `${parent}/${child}`;
}

/** The parent of a valid path (the root's parent is the root). Throws {@link InvalidArgumentError} for an invalid path. */
export function parentOf(path: string): string {
  validatePath(path);
  return parentChecked(path);
}

/** {@link parentOf} of a path known to be valid (one the server sent): not checked again. */
export function parentChecked(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** Converts node data to a Buffer and enforces the size limit. */
export function toBuffer(data: NodeData | undefined, maxBytes: number, path: string): Buffer | undefined {
  if (data === undefined) return undefined;
  let buf: Buffer;
  if (typeof data === 'string') buf = Buffer.from(data, 'utf8');
  else if (data instanceof Uint8Array) buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  else throw new InvalidArgumentError(`data for ${path} must be a Uint8Array or a string, got ${describe(data)}`);
  if (buf.length > maxBytes) {
    throw new InvalidArgumentError(
      `data for ${path} is ${buf.length} bytes, over the ${maxBytes}-byte limit (ZooKeeper drops the connection near 1 MiB; raise maxDataBytes only if the server's jute.maxbuffer allows it)`,
      { path },
    );
  }
  return buf;
}

/**
 * Throws unless `version` is a signed 32-bit integer (or undefined). -1 means any version; a
 * node's own version wraps past 2^31 - 1 to -2^31 and counts up from there, so every other
 * negative value is a real version the server compares.
 */
export function validateVersion(version: unknown, path: string): void {
  if (version === undefined) return;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < -0x80000000 || version > 0x7fffffff) {
    throw new InvalidArgumentError(`version for ${path} must be a 32-bit integer (-1 = any; a wrapped version is negative), got ${describe(version)}`, { path });
  }
}

/**
 * Throws unless `value` is a finite integer within [min, max]. Returns it, or `fallback` when
 * `value` is undefined.
 */
export function checkInt(value: unknown, what: string, min: number, max: number, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${what} must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

/** The longest delay a Node.js timer can wait: longer ones fire after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Validates an optional timeout in ms: a number from 0 to {@link MAX_TIMER_MS}. */
export function checkTimeout(value: unknown, what = 'timeoutMs'): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMER_MS) {
    throw new InvalidArgumentError(`${what} must be a number of ms from 0 to ${MAX_TIMER_MS} (about 24.8 days, the longest a timer can wait), got ${describe(value)}`);
  }
  return value;
}

/**
 * Validates an optional delay in ms, like {@link checkTimeout} but also refusing a fraction.
 * Returns it, or `fallback` when `value` is undefined.
 */
export function checkDelay(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS) {
    throw new InvalidArgumentError(`${what} must be an integer number of ms from 0 to ${MAX_TIMER_MS}, got ${describe(value)}`);
  }
  return value;
}

/** Validates an optional boolean option (a string such as "false" is refused, not taken as true). */
export function checkBoolean(value: unknown, what: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`${what} must be a boolean, got ${describe(value)}`);
  return value;
}

/**
 * The keys of an options type, listed once where the type is declared: the record must name
 * every key of `T` and nothing else (a key missing or unknown is a compile error), so the
 * runtime list {@link checkOptions} checks against cannot drift from the type, e.g.
 * `optionKeys<AcquireOptions>({ timeoutMs: true, signal: true })`. For a type that extends
 * another, pass the other's list as `base` and name only the keys it adds:
 * `optionKeys<SemaphoreOptions, LockOptions>({ maxLeases: true, layout: true }, LOCK_OPTION_KEYS)`.
 *
 * @internal
 */
export function optionKeys<T extends B, B extends object = object>(
  keys: { readonly [K in Exclude<keyof Required<T>, keyof B>]: true },
  base: readonly (keyof B & string)[] = [],
): readonly (keyof T & string)[] {
  return Object.freeze([...base, ...Object.keys(keys)]) as readonly (keyof T & string)[];
}

/**
 * Validates an options object: undefined gives `{}`; anything but a plain object is refused, and
 * so is an own key that is not one of `known` (a misspelling such as `{ timeout: 5 }` for
 * `timeoutMs` would otherwise pass silently in plain JavaScript): the
 * {@link InvalidArgumentError} names the nearest known key. `what` names the call or
 * constructor, e.g. `acquire` or `new Mutex`.
 */
export function checkOptions<T extends object>(value: T | undefined, what: string, known: readonly string[]): Partial<T> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentError(`options of ${what} must be an object, got ${describe(value)}`);
  checkKeys(value, what, known);
  return value;
}

/**
 * Throws {@link InvalidArgumentError} if `value` (an object) has an own enumerable key that is
 * not one of `known`, naming the nearest known key. `what` names what the keys are options of
 * (`acquire`, `retry`, `ops[2]`).
 */
export function checkKeys(value: object, what: string, known: readonly string[], noun = 'option'): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const near = nearestKey(key, known);
    const list = known.length === 0 ? `${what} takes no ${noun}s` : `its ${noun}s are ${known.map((k) => `'${k}'`).join(', ')}`;
    throw new InvalidArgumentError(`unknown ${noun} '${key}' of ${what}${near === undefined ? '' : `: did you mean '${near}'?`} (${list})`);
  }
}

/**
 * The known key nearest to a misspelled `key`, if one is near enough to be a likely meant: the
 * same letters in another case, a known key that starts with it or it with the known key
 * (`timeout` for `timeoutMs`), or an edit distance of at most a third of its length (at least 1,
 * at most 3: `sesionTimeoutMs`).
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestScore = Infinity;
  for (const k of known) {
    const kl = k.toLowerCase();
    let score: number;
    if (kl === lower) score = 0;
    else if (lower.length >= 3 && (kl.startsWith(lower) || lower.startsWith(kl))) score = 0.5 + Math.abs(kl.length - lower.length) / 100;
    else {
      const d = editDistance(lower, kl);
      if (d > Math.min(3, Math.max(1, Math.floor(Math.max(lower.length, kl.length) / 3)))) continue;
      score = d;
    }
    if (score < bestScore) {
      best = k;
      bestScore = score;
    }
  }
  return best;
}

/** Levenshtein distance with transpositions (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const prev = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = d;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/** Validates a plain object whose keys are free (an environment, a map): undefined gives undefined. */
export function checkRecord<T extends object>(value: T | undefined, what: string): T | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentError(`${what} must be an object, got ${describe(value)}`);
  return value;
}

/** Validates a required function argument. */
export function checkFunction<F>(value: F, what: string): F {
  if (typeof value !== 'function') throw new InvalidArgumentError(`${what} must be a function, got ${describe(value)}`);
  return value;
}

/** Validates an optional function option. */
export function checkOptionalFunction<F>(value: F | undefined, what: string): F | undefined {
  return value === undefined ? undefined : checkFunction(value, what);
}

/** Validates an optional AbortSignal. */
export function checkSignal(value: unknown, what = 'signal'): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) throw new InvalidArgumentError(`${what} must be an AbortSignal, got ${describe(value)}`);
  return value;
}

/** Short description of a value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? value.slice(0, 80) + '…' : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value == null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value}`;
}
