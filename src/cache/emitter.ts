/**
 * A cache's event delivery: listeners that may throw, and async iterators with bounded buffers.
 *
 * @internal
 * @module
 */
import { BoundedStream } from '../util/bounded-stream.js';
import { EventEmitter } from 'eventemitter3';
import { callListeners } from '../util/listeners.js';
import type { CachedNode, CacheEvent, CacheEvents } from './types.js';

type Item = CacheEvent | { readonly type: 'end' };

/** The emitter every cache extends: each emitted event also feeds the open iterators. */
export class CacheEmitter extends EventEmitter<CacheEvents> {
  readonly #streams = new Set<(item: Item) => void>();

  /** Emits to listeners (one that throws does not stop the others) and to the iterators. */
  protected publish(event: CacheEvent): void {
    for (const push of this.#streams) push(event);
    switch (event.type) {
      case 'added':
      case 'removed':
        return this.#call(event.type, event.node);
      case 'changed':
        return this.#call('changed', event.node, event.previous);
      case 'sessionLost':
        return this.#call('sessionLost', event.error);
      case 'snapshot':
        return;
      default:
        return this.#call(event.type);
    }
  }

  /** Emits `error` (to listeners only: the iterators are for the copy's changes). */
  protected reportError(error: Error): void {
    this.#call('error', error);
  }

  /** Ends every iterator (after their buffered items). */
  protected endStreams(): void {
    for (const push of [...this.#streams]) push({ type: 'end' });
    this.#streams.clear();
  }

  /** An iterator over future events; `snapshot()` gives the copy for an overflow or a start. */
  protected stream(bufferSize: number, startWith: boolean, ended: boolean, snapshot: () => readonly CachedNode[]): AsyncIterableIterator<CacheEvent> {
    // Catching up from the copy as it is now replaces the events it already reflects.
    const stream = new BoundedStream<CacheEvent>(bufferSize, (buffer) => buffer.splice(0, buffer.length, { type: 'snapshot', nodes: snapshot() }), {
      initial: startWith ? [{ type: 'snapshot', nodes: snapshot() }] : [],
      onEnd: () => this.#streams.delete(push),
    });
    const push = (item: Item): void => (item.type === 'end' ? stream.end() : stream.push(item));
    if (ended) stream.end();
    else this.#streams.add(push);
    return stream.iterator();
  }

  #call(event: keyof CacheEvents, ...args: unknown[]): void {
    callListeners(this, event, args);
  }
}
