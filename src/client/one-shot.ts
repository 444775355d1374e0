/**
 * {@link OneShot}: one caller's one-shot watch, set by a watch-setting read of the session: what
 * the generation calls when it fires, and how its caller drops it.
 *
 * @internal
 * @module
 */
import type { Generation, WatchEntry, WatchListener } from './generation.js';
import type { RawEvent, RawWatchKind, WatcherTableName } from './nzc.js';
import type { WatchEvent } from './types.js';

const noop = (): void => undefined;

/** `changed` promises of watches that fired or ended (see {@link watchSettled}). */
const settledWatches = new WeakSet<Promise<WatchEvent>>();

/**
 * Whether the watch behind `changed` (of a watch-setting read) has fired or ended, known
 * synchronously: a notification is handled before any later reply or notification of the same
 * session, but promise reactions to it may run after theirs.
 */
export function watchSettled(changed: Promise<WatchEvent>): boolean {
  return settledWatches.has(changed);
}

/** Told synchronously when a watch fires (see {@link StoppableWatch.onFire}). */
export interface FireListener {
  /** The watch fired with `event`; `changed` has not settled yet. Must not throw. */
  fired(event: WatchEvent): void;
}

/** A watch its caller drops with `stop()` (see `ZkSession.dataWatch`). */
export interface StoppableWatch {
  /** Settles when the watch fires; rejects when the session ends or it is stopped. */
  readonly changed: Promise<WatchEvent>;
  /**
   * Told when the watch fires, in the notification's own handling, before `changed` settles
   * (its reactions run a few promise hops later): for a request that must leave at once.
   */
  onFire: FireListener | undefined;
  /** Drops the watch (on the server too, once nobody waits there): `changed` rejects with `reason`. */
  stop(reason: unknown): void;
}

/**
 * A watch set by a read, as its caller holds it: `changed` settles once it fires, fails (the
 * session ended) or is stopped. An object with methods rather than closures: a lock waiter keeps
 * one or two for as long as it waits, and thousands may wait in one process.
 */
export class OneShot implements WatchListener, StoppableWatch {
  /** Settles when the watch fires; rejects when it fails or is stopped. */
  readonly changed: Promise<WatchEvent>;
  /** Called once it settles (the caller's abort subscription, if any). */
  unsubscribe: () => void = noop;
  onFire: FireListener | undefined = undefined;
  private fulfil!: (event: WatchEvent) => void;
  private fail!: (reason: unknown) => void;
  private gen: Generation | undefined;
  private entry: WatchEntry | undefined;
  private done = false;

  constructor() {
    this.changed = new Promise<WatchEvent>((resolve, reject) => {
      this.fulfil = resolve;
      this.fail = reject;
    });
    this.changed.catch(noop);
  }

  /** The read's reply set the watch (synchronously in its callback): file it in `g`'s table. */
  arm(g: Generation, kind: RawWatchKind, path: string, tables: readonly WatcherTableName[], sentFn: (event: RawEvent) => void): void {
    this.gen = g;
    this.entry = g.attach(kind, path, tables, sentFn, this);
    // Stopped while the read was on its way: nobody will wait for it.
    if (this.done) g.detach(this.entry, this);
  }

  /** Whether it fired, failed or was stopped. */
  get settled(): boolean {
    return this.done;
  }

  /** The generation's table: the watch fired. */
  resolve(event: WatchEvent): void {
    if (!this.end()) return;
    this.onFire?.fired(event);
    this.fulfil(event);
  }

  /** The generation's table: the watch ended without firing (the session ended). */
  reject(reason: unknown): void {
    if (this.end()) this.fail(reason);
  }

  /**
   * Drops the watch (on the server too, once nobody waits for it there): `changed` rejects with
   * `reason`. Harmless once it settled.
   */
  stop(reason: unknown): void {
    if (this.gen && this.entry) this.gen.detach(this.entry, this);
    if (this.end()) this.fail(reason);
  }

  private end(): boolean {
    if (this.done) return false;
    this.done = true;
    settledWatches.add(this.changed);
    this.unsubscribe();
    return true;
  }
}
