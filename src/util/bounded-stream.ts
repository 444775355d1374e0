/**
 * An async iterator fed by pushes, holding at most `size` items for a slow consumer: what the
 * recipes' iterators share (a cache's events, a group's views, a shared value's changes).
 *
 * @internal
 * @module
 */

/** What a full buffer does with a new item (drop the oldest, or fold the buffer into one). */
export type Overflow<T> = (buffer: T[], item: T) => void;

/** Drops the oldest item: the newest is always kept. */
export const dropOldest = <T>(buffer: T[], item: T): void => {
  buffer.shift();
  buffer.push(item);
};

/**
 * A bounded stream. `end()` lets the consumer read what is buffered, then ends the iteration;
 * the iterator's `return()` ends it at once, a `next()` that waits included. `onEnd` runs once,
 * whichever ends it first (to unsubscribe the stream from its source).
 */
export class BoundedStream<T> {
  readonly #buffer: T[];
  readonly #size: number;
  readonly #overflow: Overflow<T>;
  readonly #onEnd: () => void;
  #waiting: ((r: IteratorResult<T>) => void) | undefined;
  #done = false;

  constructor(size: number, overflow: Overflow<T>, options: { initial?: readonly T[]; onEnd?: () => void } = {}) {
    this.#size = size;
    this.#overflow = overflow;
    this.#buffer = [...(options.initial ?? [])];
    this.#onEnd = options.onEnd ?? (() => undefined);
  }

  /** Whether it has ended (no more pushes are taken). */
  get ended(): boolean {
    return this.#done;
  }

  /** Hands `item` to a waiting `next()`, or buffers it. */
  push(item: T): void {
    if (this.#done) return;
    const w = this.#waiting;
    if (w) {
      this.#waiting = undefined;
      w({ value: item, done: false });
    } else if (this.#buffer.length < this.#size) this.#buffer.push(item);
    else this.#overflow(this.#buffer, item);
  }

  /** Ends the stream after what is buffered. */
  end(): void {
    if (this.#done) return;
    this.#done = true;
    this.#onEnd();
    const w = this.#waiting;
    this.#waiting = undefined;
    w?.({ value: undefined, done: true });
  }

  /** The consumer's side. */
  iterator(): AsyncIterableIterator<T> {
    const iterator: AsyncIterableIterator<T> = {
      next: () => {
        if (this.#buffer.length > 0) return Promise.resolve({ value: this.#buffer.shift() as T, done: false });
        if (this.#done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiting = resolve));
      },
      return: () => {
        this.#buffer.length = 0;
        this.end();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }
}
