/**
 * {@link SeededRandom}: the deterministic pseudo-random generator of the chaos suite.
 *
 * @module
 */
import { checkName, describe, need } from './validate.js';

/**
 * A small, fast, seeded pseudo-random generator (sfc32 seeded through splitmix32): the same
 * seed gives the same sequence on every machine, so a fault schedule can be replayed from its
 * `--seed`. Not for cryptography.
 */
export class SeededRandom {
  /** The seed this generator started from. */
  readonly seed: number;
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  /** Creates a generator; `seed` is any integer (taken modulo 2^32). */
  constructor(seed: number) {
    need(typeof seed === 'number' && Number.isFinite(seed), `seed must be a finite number, got ${describe(seed)}`);
    this.seed = Math.trunc(seed) >>> 0;
    let s = this.seed;
    const next = (): number => {
      // splitmix32: spreads a small seed over the whole state.
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    // sfc32
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [min, max] (both included). */
  int(min: number, max: number): number {
    need(Number.isSafeInteger(min) && Number.isSafeInteger(max) && max >= min, `int: min and max must be integers with max >= min, got ${describe(min)} and ${describe(max)}`);
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A float in [min, max). */
  between(min: number, max: number): number {
    need(Number.isFinite(min) && Number.isFinite(max) && max >= min, `between: min and max must be finite with max >= min, got ${describe(min)} and ${describe(max)}`);
    return min + this.next() * (max - min);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    need(typeof p === 'number' && p >= 0 && p <= 1, `chance: p must be a probability in [0, 1], got ${describe(p)}`);
    return this.next() < p;
  }

  /** One element of a non-empty array, uniformly. */
  pick<T>(items: readonly T[]): T {
    need(Array.isArray(items) && items.length > 0, `pick: items must be a non-empty array, got ${describe(items)}`);
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** One key of `weights`, with probability proportional to its weight (weights >= 0, not all 0). */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    need(weights !== null && typeof weights === 'object', `weighted: weights must be an object, got ${describe(weights)}`);
    const entries = Object.entries(weights) as [K, number][];
    for (const [k, w] of entries) need(typeof w === 'number' && Number.isFinite(w) && w >= 0, `weighted: weight ${k} must be a finite number >= 0, got ${describe(w)}`);
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    need(total > 0, 'weighted: every weight is 0');
    let x = this.next() * total;
    for (const [key, w] of entries) {
      x -= Math.max(0, w);
      if (x < 0) return key;
    }
    return (entries.findLast(([, w]) => w > 0) as [K, number])[0];
  }

  /** A new generator derived from this seed and `label` (one stream per client or track). */
  fork(label: string): SeededRandom {
    checkName(label, 'fork: label');
    let h = this.seed ^ 0x811c9dc5;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
    return new SeededRandom(h >>> 0);
  }
}
