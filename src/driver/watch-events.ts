/**
 * {@link WatchEvents}: the events of one wait's watches, in the order they fire, and
 * {@link Restart}, how a wait says that our node vanished.
 *
 * @internal
 * @module
 */
import type { WatchEvent } from '../client/types.js';
import { follow, unfollow, type AbortFollower } from '../util/signals.js';

/** Our node vanished while we waited (deleted by someone, or the session went): start over. */
export class Restart extends Error {}

/** The watches of a wait by node name (a `Map`, or a `SmallMap` in a long wait). */
export interface WatchTable extends Iterable<[string, { readonly changed: Promise<WatchEvent> }]> {
  get(name: string): { readonly changed: Promise<WatchEvent> } | undefined;
}

/** A watch event of one wait, or why the wait must end. */
type Fired = { readonly name: string; readonly type: WatchEvent['type'] } | { readonly error: unknown };

/**
 * The events of one wait's watches, in the order they fire. Each watch (and our own node's) is
 * followed once when it is set, not again on every wake-up: a semaphore waiter keeps up to
 * `maxLeases` watches across its wake-ups, and callbacks added per wake-up would pile up on
 * them until they fire.
 *
 * @internal
 */
export class WatchEvents implements AbortFollower {
  private readonly fired: Fired[] = [];
  /** The watches followed, of those in the table at the last {@link follow} (a dropped one never returns). */
  private followed: readonly object[] = [];
  /** The pending {@link next}: the names it waits for, and how it settles (fields, not closures). */
  private names: readonly string[] | undefined;
  private resolve: ((e: { name: string; type: WatchEvent['type'] }) => void) | undefined;
  private reject: ((reason: unknown) => void) | undefined;
  /** The signal {@link next} gives up with, followed once for every call with it (see {@link close}). */
  private giveUp: AbortSignal | undefined;
  /** The signal whose abort ends the wait like an event (see {@link endWith}). */
  private ender: AbortSignal | undefined;
  /** Set by {@link close}: the wait ended, and events that fire later are dropped unbuilt. */
  private closed = false;

  /** Follows every watch of `watches` not yet followed; an event counts only while its watch is the one in `watches`. */
  follow(watches: WatchTable): void {
    const followed: object[] = [];
    for (const [name, w] of watches) {
      followed.push(w);
      if (this.followed.includes(w)) continue;
      w.changed.then(
        (e) => {
          if (watches.get(name) === w) this.push({ name, type: e.type });
        },
        (error: unknown) => {
          if (watches.get(name) === w) this.push({ error });
        },
      );
    }
    // A copy of exactly its length: a grown array has room for 17, kept as long as we wait.
    this.followed = followed.slice();
  }

  /** Follows our own node's watch: any event of it ends the wait (start over). */
  followOwn(ownWatch: Promise<{ changed: Promise<WatchEvent> }>): void {
    ownWatch
      .then((w) => w.changed)
      .then(
        // Our own release fires it after the wait ended: build no error (nor its stack) for nobody.
        () => {
          if (!this.closed) this.push({ error: new Restart('our node changed or was deleted while waiting') });
        },
        (error: unknown) => this.push({ error }),
      );
  }

  /** {@link followOwn} of each of `ownWatches`. */
  followOwnAll(ownWatches: readonly Promise<{ changed: Promise<WatchEvent> }>[]): void {
    for (const w of ownWatches) this.followOwn(w);
  }

  /** Ends the wait with `error` (at the next event asked for). */
  fail(error: unknown): void {
    this.push({ error });
  }

  /**
   * Ends the wait (like {@link fail}) with the reason of `signal` once it aborts (it must not
   * have yet); until {@link close}.
   */
  endWith(signal: AbortSignal): void {
    this.ender = signal;
    follow(signal, this);
  }

  /** A followed signal aborted: the give-up signal rejects the pending call, the ending one fails the wait. */
  signalAborted(signal: AbortSignal): void {
    if (signal === this.giveUp) this.settle(undefined, signal.reason);
    if (signal === this.ender) this.fail(signal.reason);
  }

  /**
   * The next event of a name in `names` (others are stale: watches of an earlier window); rejects
   * with `giveUp`'s reason. Not async, and one subscription to `giveUp` however many times a
   * wait asks: a waiter keeps no suspended frame and no closures here while it waits.
   */
  next(names: readonly string[], giveUp: AbortSignal | undefined): Promise<{ name: string; type: WatchEvent['type'] }> {
    // Given up: no event counts any more, even one that fired first.
    if (giveUp?.aborted) return Promise.reject(giveUp.reason);
    const e = this.take(names);
    if (e) return 'error' in e ? Promise.reject(e.error) : Promise.resolve(e);
    this.listen(giveUp);
    return new Promise((resolve, reject) => {
      this.names = names;
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Stops following the signals and drops events that fire later (call it once the wait ended). */
  close(): void {
    this.closed = true;
    this.fired.length = 0;
    if (this.ender) unfollow(this.ender, this);
    this.ender = undefined;
    this.unlisten();
  }

  private unlisten(): void {
    if (this.giveUp && this.giveUp !== this.ender) unfollow(this.giveUp, this);
    this.giveUp = undefined;
  }

  /** The first queued event of a name in `names`, or error; stale ones are dropped. */
  private take(names: readonly string[]): Fired | undefined {
    for (let e = this.fired.shift(); e !== undefined; e = this.fired.shift()) if ('error' in e || names.includes(e.name)) return e;
    return undefined;
  }

  private listen(giveUp: AbortSignal | undefined): void {
    if (giveUp === this.giveUp) return;
    this.unlisten();
    this.giveUp = giveUp;
    // Through follow: `giveUp` may be a signal many waits share (a recipe's close signal).
    if (giveUp) follow(giveUp, this);
  }

  private push(e: Fired): void {
    if (this.closed) return;
    this.fired.push(e);
    const names = this.names;
    if (names === undefined) return;
    if (this.giveUp?.aborted) return this.settle(undefined, this.giveUp.reason);
    const next = this.take(names);
    if (next === undefined) return;
    if ('error' in next) this.settle(undefined, next.error);
    else this.settle(next, undefined);
  }

  /** Settles the pending {@link next} with `e`, else rejects it with `reason`. */
  private settle(e: { name: string; type: WatchEvent['type'] } | undefined, reason: unknown): void {
    const { resolve, reject } = this;
    this.names = this.resolve = this.reject = undefined;
    if (e) resolve?.(e);
    else reject?.(reason);
  }
}
