/**
 * {@link SmallMap}: a map of a few entries in one flat array. A `Map`'s smallest table is about
 * 300 bytes (a `WeakSet`'s about 100), and a waiting lock keeps a map of the one or two nodes it
 * watches, and the watches it follows, for as long as it waits: thousands may wait in one process.
 * Look-ups are linear: for a handful of entries only.
 *
 * @internal
 * @module
 */

/** A map of a few entries (insertion order kept), with the part of `Map`'s interface used here. */
export class SmallMap<K, V> implements Iterable<[K, V]> {
  /** Keys and values alternating, in an array of exactly their length (a grown one has room for 17). */
  private flat: (K | V)[] = [];

  /** How many entries. */
  get size(): number {
    return this.flat.length / 2;
  }

  get(key: K): V | undefined {
    const i = this.find(key);
    return i < 0 ? undefined : (this.flat[i + 1] as V);
  }

  has(key: K): boolean {
    return this.find(key) >= 0;
  }

  set(key: K, value: V): this {
    const i = this.find(key);
    if (i < 0) this.flat = this.flat.concat([key, value]);
    else this.flat[i + 1] = value;
    return this;
  }

  delete(key: K): boolean {
    const i = this.find(key);
    if (i < 0) return false;
    this.flat = this.flat.filter((_, j) => j !== i && j !== i + 1).slice();
    return true;
  }

  /** The keys, in insertion order (a copy: safe to delete while iterating it). */
  keys(): K[] {
    return this.flat.filter((_, i) => i % 2 === 0) as K[];
  }

  /** The entries, in insertion order (a copy: safe to delete while iterating it). */
  entries(): [K, V][] {
    const out: [K, V][] = [];
    for (let i = 0; i < this.flat.length; i += 2) out.push([this.flat[i] as K, this.flat[i + 1] as V]);
    return out;
  }

  [Symbol.iterator](): Iterator<[K, V]> {
    return this.entries()[Symbol.iterator]();
  }

  private find(key: K): number {
    for (let i = 0; i < this.flat.length; i += 2) if (this.flat[i] === key) return i;
    return -1;
  }
}
