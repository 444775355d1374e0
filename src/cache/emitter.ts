/**
 * A cache's event delivery: listeners that may throw, and async iterators with bounded buffers.
 *
 * @internal
 * @module
 */
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
    const buffer: CacheEvent[] = startWith ? [{ type: 'snapshot', nodes: snapshot() }] : [];
    let waiting: ((r: IteratorResult<CacheEvent>) => void) | undefined;
    let done = ended;
    const push = (item: Item): void => {
      if (item.type === 'end') {
        done = true;
        this.#streams.delete(push);
        if (waiting) {
          const w = waiting;
          waiting = undefined;
          w({ value: undefined, done: true });
        }
        return;
      }
      if (waiting) {
        const w = waiting;
        waiting = undefined;
        w({ value: item, done: false });
      } else if (buffer.length < bufferSize) buffer.push(item);
      // Catching up from the copy as it is now replaces the events it already reflects.
      else buffer.splice(0, buffer.length, { type: 'snapshot', nodes: snapshot() });
    };
    if (!done) this.#streams.add(push);
    const iterator: AsyncIterableIterator<CacheEvent> = {
      next: () => {
        const item = buffer.shift();
        if (item) return Promise.resolve({ value: item, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          waiting = resolve;
        });
      },
      return: () => {
        this.#streams.delete(push);
        buffer.length = 0;
        done = true;
        // A next() still waiting (return() called from elsewhere, e.g. on shutdown) ends too.
        const w = waiting;
        waiting = undefined;
        w?.({ value: undefined, done: true });
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  #call(event: keyof CacheEvents, ...args: unknown[]): void {
    callListeners(this, event, args);
  }
}
