/**
 * A bound on reads in flight at once.
 *
 * @internal
 * @module
 */

/** Runs at most `limit` tasks at once, the others in the order they came. */
export class Limiter {
  #running = 0;
  // A queue with a moving head: Array.shift() copies the whole array once it is large (tens
  // of thousands of reads waiting behind a wide node), which made dequeuing quadratic.
  #queue: (() => void)[] = [];
  #head = 0;

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.limit) await new Promise<void>((resolve) => this.#queue.push(resolve));
    else this.#running++;
    try {
      return await task();
    } finally {
      const next = this.#dequeue();
      // The slot passes to the next task as it is: the count stays.
      if (next) next();
      else this.#running--;
    }
  }

  #dequeue(): (() => void) | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const next = this.#queue[this.#head++];
    // Drop the consumed part now and then (amortised O(1)).
    if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return next;
  }
}
