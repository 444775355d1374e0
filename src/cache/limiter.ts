/**
 * A bound on reads in flight at once.
 *
 * @internal
 * @module
 */

/** Runs at most `limit` tasks at once, the others in the order they came. */
export class Limiter {
  #running = 0;
  readonly #queue: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.limit) await new Promise<void>((resolve) => this.#queue.push(resolve));
    else this.#running++;
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      // The slot passes to the next task as it is: the count stays.
      if (next) next();
      else this.#running--;
    }
  }
}
