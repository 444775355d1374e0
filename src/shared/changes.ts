/**
 * The async iterator of {@link SharedBase.changes}: values pushed by the recipe, held for a slow
 * consumer up to `bufferSize` (the oldest dropped first), ended by a `null` push or `signal`.
 *
 * @internal
 * @module
 */
import { BoundedStream, dropOldest } from '../util/bounded-stream.js';

/** A subscriber: gets each value, then `null` at the end. */
export type StreamPush<V> = (v: V | null) => void;

/** An iterator fed through `streams` (it adds its push there, and removes it when it ends). */
export function valueStream<V>(bufferSize: number, signal: AbortSignal | undefined, streams: Set<StreamPush<V>>): AsyncIterableIterator<V> {
  const end = (): void => stream.end();
  const stream = new BoundedStream<V>(bufferSize, dropOldest, {
    onEnd: () => {
      streams.delete(push);
      signal?.removeEventListener('abort', end);
    },
  });
  const push = (v: V | null): void => (v === null ? stream.end() : stream.push(v));
  if (signal?.aborted) stream.end();
  else {
    streams.add(push);
    signal?.addEventListener('abort', end, { once: true });
  }
  return stream.iterator();
}
