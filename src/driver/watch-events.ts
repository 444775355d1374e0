/**
 * {@link WatchEvents}: the events of one wait's watches, in the order they fire, and
 * {@link Restart}, how a wait says that our node vanished.
 *
 * @internal
 * @module
 */
import type { WatchEvent } from '../client/types.js';
import { onAbort } from '../util/signals.js';

/** Our node vanished while we waited (deleted by someone, or the session went): start over. */
export class Restart extends Error {}

const noop = (): void => undefined;

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
export class WatchEvents {
  private readonly fired: Fired[] = [];
  private wake: (() => void) | undefined;
  private readonly followed = new WeakSet<object>();

  /** Follows every watch of `watches` not yet followed; an event counts only while its watch is the one in `watches`. */
  follow(watches: ReadonlyMap<string, { changed: Promise<WatchEvent> }>): void {
    for (const [name, w] of watches) {
      if (this.followed.has(w)) continue;
      this.followed.add(w);
      w.changed.then(
        (e) => {
          if (watches.get(name) === w) this.push({ name, type: e.type });
        },
        (error: unknown) => {
          if (watches.get(name) === w) this.push({ error });
        },
      );
    }
  }

  /** Follows our own node's watch: any event of it ends the wait (start over). */
  followOwn(ownWatch: Promise<{ changed: Promise<WatchEvent> }>): void {
    ownWatch
      .then((w) => w.changed)
      .then(
        () => this.push({ error: new Restart('our node changed or was deleted while waiting') }),
        (error: unknown) => this.push({ error }),
      );
  }

  /** Ends the wait with `error` (at the next event asked for). */
  fail(error: unknown): void {
    this.push({ error });
  }

  /** The next event of a name in `names` (others are stale: watches of an earlier window); rejects with `giveUp`'s reason. */
  async next(names: readonly string[], giveUp: AbortSignal | undefined): Promise<{ name: string; type: WatchEvent['type'] }> {
    for (;;) {
      // Given up: no event counts any more, even one that fired first.
      giveUp?.throwIfAborted();
      const e = this.fired.shift();
      if (e === undefined) {
        await new Promise<void>((resolve, reject) => {
          if (giveUp?.aborted) return reject(giveUp.reason);
          // Through onAbort: `giveUp` may be a signal many waits share (a recipe's close signal).
          const cleanup = giveUp ? onAbort(giveUp, reject) : noop;
          this.wake = () => {
            cleanup();
            resolve();
          };
        });
        continue;
      }
      if ('error' in e) throw e.error;
      if (names.includes(e.name)) return e;
    }
  }

  private push(e: Fired): void {
    this.fired.push(e);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
