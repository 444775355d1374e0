/**
 * Persistent watches (ZooKeeper 3.6+): the handle callers get from `ZkSession.addWatch`.
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import { callListeners } from '../util/listeners.js';
import { ClosedError } from '../errors.js';
import type { WatchEvent } from './types.js';

/**
 * What a persistent watch yields: a node event, or `RESET` once it is registered again after a
 * reconnect. The server does not replay what changed while the client was disconnected: after a
 * `RESET`, re-read what you keep. A read sent after `RESET` goes behind the re-registration on
 * the connection, so every change after the state it reads comes as an event. @group Sessions
 */
export type PersistentWatchItem = WatchEvent | PersistentWatchReset;

/** The `RESET` item of a {@link PersistentWatch}: registered again after a reconnect. @group Sessions */
export interface PersistentWatchReset {
  /** Discriminator. */
  type: 'RESET';
  /** The watched path. */
  path: string;
}

/** Events of a {@link PersistentWatch}. @group Sessions */
export interface PersistentWatchEvents {
  /** A node event on the watched path (or, recursive, under it). */
  event: (event: WatchEvent) => void;
  /**
   * The watch is registered again after a reconnect; events in between were not delivered.
   * Re-read what you keep.
   */
  reset: () => void;
  /** The watch ended: closed (`ClosedError`) or its session was lost (`SessionExpiredError`). */
  end: (reason: unknown) => void;
  /** A listener threw (the other listeners still ran). */
  error: (error: Error) => void;
}

/** Options of a {@link PersistentWatch}'s async iterator. @group Sessions */
export interface PersistentWatchIteratorOptions {
  /**
   * Items kept for a slow consumer (default 10000). When full, the buffered events are dropped
   * for one `RESET`: the consumer re-reads instead of the buffer growing without bound.
   */
  bufferSize?: number;
}

/** What the session layer calls on a handle. @internal */
export interface PersistentWatchSink {
  deliver(item: PersistentWatchItem): void;
  end(reason: unknown): void;
}

const sinks = new WeakMap<PersistentWatch, PersistentWatchSink>();

/** The delivery side of a handle (session layer only). @internal */
export function sinkOf(watch: PersistentWatch): PersistentWatchSink {
  const sink = sinks.get(watch);
  if (!sink) throw new Error('not a PersistentWatch made by a session');
  return sink;
}

/**
 * A persistent watch: it stays set after it fires, and after reconnects (re-registered with the
 * others), until {@link PersistentWatch.close} or the end of its session. Recursive, it sees
 * every node under its path as well, but never `NODE_CHILDREN_CHANGED` (a child's
 * `NODE_CREATED` and `NODE_DELETED` say it). Listen (`event`, `reset`, `end`) or iterate:
 *
 * @example
 * ```ts
 * import type { WatchEvent, ZkSession } from 'zk-recipes';
 * declare const zk: ZkSession;
 * declare function reload(): void;
 * declare function apply(event: WatchEvent): void;
 *
 * await using watch = await zk.addWatch('/config', { recursive: true });
 * for await (const item of watch) if (item.type === 'RESET') reload(); else apply(item);
 * ```
 * @group Sessions
 */
export class PersistentWatch extends EventEmitter<PersistentWatchEvents> implements AsyncIterable<PersistentWatchItem>, AsyncDisposable {
  #ended: { reason: unknown } | undefined;
  readonly #queues = new Set<(item: PersistentWatchItem | { end: unknown }) => void>();
  readonly #remove: () => Promise<void>;

  /** @internal Made by `ZkSession.addWatch`. */
  constructor(
    /** The watched path. */
    readonly path: string,
    /** Whether it covers every node under its path too. */
    readonly recursive: boolean,
    remove: () => Promise<void>,
  ) {
    super();
    this.#remove = remove;
    sinks.set(this, { deliver: (item) => this.#deliver(item), end: (reason) => this.#end(reason) });
  }

  /** Whether it ended (closed, or its session was lost). */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /**
   * Ends the watch and removes it from the server (unless another handle of the session still
   * needs it). Idempotent; resolves once the removal is sent (its reply is not awaited: a lost
   * connection drops the watch anyway, and it is not re-registered after).
   */
  async close(): Promise<void> {
    if (this.#ended) return;
    this.#end(new ClosedError(`persistent watch on ${this.path} closed`, { path: this.path }));
    await this.#remove();
  }

  /** Same as {@link PersistentWatch.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Items from now on, until the watch ends: the iteration returns after `close()` and throws
   * the session's error after a loss. Each iterator has its own bounded buffer.
   */
  [Symbol.asyncIterator](options: PersistentWatchIteratorOptions = {}): AsyncIterator<PersistentWatchItem> {
    const size = options.bufferSize ?? 10_000;
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`bufferSize must be a positive integer, got ${String(size)}`);
    const buffer: PersistentWatchItem[] = [];
    let waiting: ((r: IteratorResult<PersistentWatchItem>) => void) | undefined;
    let failing: ((e: unknown) => void) | undefined;
    let end: { reason: unknown } | undefined = this.#ended;
    const push = (item: PersistentWatchItem | { end: unknown }): void => {
      if ('end' in item) {
        end = { reason: item.end };
        this.#queues.delete(push);
        if (waiting) settleEnd();
        return;
      }
      if (waiting) {
        const w = waiting;
        waiting = failing = undefined;
        w({ value: item, done: false });
      } else if (buffer.length < size) buffer.push(item);
      else buffer.splice(0, buffer.length, { type: 'RESET', path: this.path });
    };
    const settleEnd = (): void => {
      const w = waiting;
      const f = failing;
      waiting = failing = undefined;
      if (end && end.reason instanceof ClosedError) w?.({ value: undefined, done: true });
      else f?.(end?.reason);
    };
    if (!end) this.#queues.add(push);
    return {
      next: () => {
        const item = buffer.shift();
        if (item) return Promise.resolve({ value: item, done: false });
        if (end) return end.reason instanceof ClosedError ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(end.reason);
        return new Promise((resolve, reject) => {
          waiting = resolve;
          failing = reject;
        });
      },
      return: () => {
        this.#queues.delete(push);
        buffer.length = 0;
        end ??= { reason: new ClosedError('iteration ended', { path: this.path }) };
        // A next() still waiting (return() called from elsewhere) ends too.
        const w = waiting;
        waiting = failing = undefined;
        w?.({ value: undefined, done: true });
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  #deliver(item: PersistentWatchItem): void {
    if (this.#ended) return;
    for (const q of this.#queues) q(item);
    if (item.type === 'RESET') this.#emit('reset');
    else this.#emit('event', item);
  }

  #end(reason: unknown): void {
    if (this.#ended) return;
    this.#ended = { reason };
    for (const q of [...this.#queues]) q({ end: reason });
    this.#queues.clear();
    this.#emit('end', reason);
  }

  /** Calls every listener; one that throws does not stop the others nor reach the socket. */
  #emit(event: 'event' | 'reset' | 'end' | 'error', ...args: unknown[]): void {
    callListeners(this, event, args);
  }
}
