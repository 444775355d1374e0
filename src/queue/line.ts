/**
 * The line of idle consumers: they queue up as participants of a mutex under `consumers/`, and
 * only the head watches for new items, so a put wakes one consumer, not all.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Acl } from '../client/types.js';
import type { WatchEvent } from '../client/types.js';
import { LockDriver } from '../driver/lock-driver.js';
import { windowPredicate } from '../driver/predicates.js';
import { NoNodeError } from '../errors.js';
import { linkSignals } from '../util/signals.js';
import type { Cursor } from './cursor.js';
import { parseBucket } from './layout.js';

const noop = (): void => undefined;

/** One watched directory: settles on its next change. */
type Watch = { changed: Promise<unknown> };

/** Where idle consumers of one queue wait. */
export class IdleLine {
  private readonly line: LockDriver;

  constructor(
    private readonly session: ZkSession,
    private readonly cursor: Cursor,
    dir: string,
    private readonly data: Buffer,
    /** ACL of the nodes created (undefined: the session's provider). */
    private readonly acl: readonly Acl[] | undefined,
  ) {
    this.line = new LockDriver(session, dir, { lockName: 'lock-', kinds: ['lock-'], predicate: windowPredicate(1), acl });
  }

  /**
   * Lines up behind other idle consumers; at the head, watches for new items (and `alsoWatch`:
   * released claims) and runs `attempt` on every change until it yields something. Resolves to
   * that; rejects with the signal's reason. Leaves no node and no watch behind.
   */
  async waitAtHead<T>(signal: AbortSignal, attempt: (signal: AbortSignal) => Promise<T | null>, alsoWatch: readonly string[] = []): Promise<T | null> {
    const held = await this.line.acquire({ signal, data: this.data, watchOwnNode: false });
    if (!held) return null;
    try {
      for (;;) {
        this.cursor.invalidate();
        const result = await attempt(signal);
        if (result !== null) return result;
        const watch = new AbortController();
        // Aborting `watch` below ends it (AbortSignal.any would stay in the session's signal).
        const stop = linkSignals([signal, watch.signal, held.sessionSignal]).signal;
        try {
          const points = await this.cursor.watchPoints(stop);
          const watched = await Promise.all([...points.dirs, ...alsoWatch].map((dir) => this.watch(dir, stop)));
          // Something may have arrived between the attempt and the watches: look again first.
          const again = await attempt(signal);
          if (again !== null) return again;
          await new Promise<void>((resolve, reject) => {
            for (const w of watched) w.changed.then(() => resolve(), reject);
            if (stop.aborted) reject(stop.reason);
            else stop.addEventListener('abort', () => reject(stop.reason), { once: true });
          });
        } finally {
          watch.abort();
        }
      }
    } finally {
      await this.line.remove(held.paths, held.sessionSignal);
    }
  }

  // Wrapped: a promise resolved with a promise would wait for the watch to fire.
  private async watch(dir: string, signal: AbortSignal): Promise<Watch> {
    const set = async (): Promise<Watch> => {
      const w = await this.session.getChildrenWatch(dir, { signal });
      w.changed.catch(noop);
      return { changed: w.changed as Promise<WatchEvent> };
    };
    try {
      return await set();
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
    // A bucket that is gone was reaped: the layout changed, look again. Never re-create it (a
    // stale producer could then put into a bucket no idle consumer watches).
    if (parseBucket(dir.slice(dir.lastIndexOf('/') + 1)) !== undefined) return { changed: Promise.resolve() };
    // A directory that does not exist yet: create it and watch it, rather than treat it as a
    // change (that would spin).
    await this.session.mkdirp(dir, { acl: this.acl });
    return set();
  }
}
