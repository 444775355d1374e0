/**
 * The async iterator of {@link SharedBase.changes}: values pushed by the recipe, held for a slow
 * consumer up to `bufferSize` (the oldest dropped first), ended by a `null` push or `signal`.
 *
 * @internal
 * @module
 */

/** A subscriber: gets each value, then `null` at the end. */
export type StreamPush<V> = (v: V | null) => void;

/** An iterator fed through `streams` (it adds its push there, and removes it when it ends). */
export function valueStream<V>(bufferSize: number, signal: AbortSignal | undefined, streams: Set<StreamPush<V>>): AsyncIterableIterator<V> {
  const buffer: V[] = [];
  let waiting: ((r: IteratorResult<V>) => void) | undefined;
  let done = false;
  const end = (): void => {
    done = true;
    streams.delete(push);
    signal?.removeEventListener('abort', end);
    const w = waiting;
    waiting = undefined;
    w?.({ value: undefined, done: true });
  };
  const push = (v: V | null): void => {
    if (v === null) return end();
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      w({ value: v, done: false });
    } else {
      if (buffer.length >= bufferSize) buffer.shift();
      buffer.push(v);
    }
  };
  if (signal?.aborted) done = true;
  else {
    streams.add(push);
    signal?.addEventListener('abort', end, { once: true });
  }
  const iterator: AsyncIterableIterator<V> = {
    next: () => {
      const v = buffer.shift();
      if (v) return Promise.resolve({ value: v, done: false });
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    return: () => {
      buffer.length = 0;
      end();
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
