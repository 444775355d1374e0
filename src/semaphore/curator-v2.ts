/**
 * The `curator-v2` layout of {@link Semaphore}: Curator's `InterProcessSemaphoreV2` protocol, so
 * Java and Node participants share one limit on one path.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Acl, Stat, WatchEvent } from '../client/types.js';
import { joinPath } from '../client/validate.js';
import { LockDriver, type AcquireRequest, type HeldNodes } from '../driver/lock-driver.js';
import type { QueueNode } from '../driver/names.js';
import { windowPredicate, type Predicate } from '../driver/predicates.js';
import { IllegalStateError, LayoutMismatchError, NoNodeError, SessionExpiredError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import { linkSignals } from '../util/signals.js';

/** Curator's names: `PATH/locks` holds its mutex, `PATH/leases` the leases. */
export const LOCKS = 'locks';
/** The leases directory's name. */
export const LEASES = 'leases';
const LEASE = 'lease-';

/** Lease creation itself always "holds": the wait is on the count of leases, not on a node. */
const created: Predicate = () => ({ hold: true });

/** Something we relied on went away mid-way (our lease, the mutex's session): start over. */
class Restart extends Error {}

const noop = (): void => undefined;

/**
 * Checks the semaphore's own node, listed after our mutex node was created: that no other
 * layout uses the path, and the recorded `maxLeases`.
 */
export type VerifyDirectory = (stat: Stat, children: readonly string[]) => Promise<void>;

/**
 * Acquires leases the way `InterProcessSemaphoreV2` does, with zk-recipes' guarantees on top:
 *
 * 1. take the mutex `PATH/locks` (Curator's `InterProcessMutex` layout, through the lock driver:
 *    a waiter watches its predecessor only);
 * 2. holding it, create our lease(s) `PATH/leases/_c_<uuid>-lease-<seq>` (several in one
 *    transaction), with the driver's protected-name recovery after a lost reply;
 * 3. still holding it, wait until the leases directory has at most `maxLeases` children (all of
 *    them count, as in Curator), re-listing it with a child watch after each change;
 * 4. release the mutex. A lease is released by deleting its node; no mutex is needed for that.
 *
 * Only the mutex holder waits on the leases, so a release wakes one waiter (no herd), and leases
 * are granted in mutex order, which is also their creation order: the lease's czxid is a fencing
 * token that increases in grant order. On timeout, abort or error our lease(s) and mutex node are
 * deleted before the call settles.
 */
export class CuratorV2Layout {
  /** `PATH/locks`. */
  readonly locksDir: string;
  /** `PATH/leases`. */
  readonly leasesDir: string;
  /** The leases: created, listed and removed through the driver. */
  readonly leases: LockDriver;
  private readonly mutex: LockDriver;

  constructor(
    private readonly session: ZkSession,
    private readonly path: string,
    private readonly maxLeases: number,
    private readonly verify: VerifyDirectory,
    acl?: readonly Acl[],
  ) {
    this.locksDir = joinPath(path, LOCKS);
    this.leasesDir = joinPath(path, LEASES);
    this.mutex = new LockDriver(session, this.locksDir, { lockName: 'lock-', kinds: ['lock-'], predicate: windowPredicate(1), acl });
    this.leases = new LockDriver(session, this.leasesDir, { lockName: LEASE, kinds: [LEASE], predicate: created, acl });
  }

  /** The directories, deepest first. */
  get directories(): readonly string[] {
    return [this.leasesDir, this.locksDir, this.path];
  }

  /**
   * Whether the lease at `index` of the sorted leases holds. Only the mutex holder waits, and its
   * leases are the newest (one transaction: one uuid); while the leases exceed `maxLeases`, they
   * are that waiter's and every other lease holds.
   */
  holds(queue: readonly QueueNode[], index: number): boolean {
    if (queue.length <= this.maxLeases) return true;
    const uuid = queue[queue.length - 1]?.uuid;
    let start = queue.length - 1;
    while (uuid !== undefined && start > 0 && queue[start - 1]?.uuid === uuid) start--;
    return index < start;
  }

  /** Waits for `req.count` leases; null when not granted in time (or at once, for timeoutMs 0). */
  async acquire(req: AcquireRequest): Promise<HeldNodes | null> {
    // Refused before the mutex is taken: a lease transaction the session cannot send.
    this.leases.check(req);
    // This wait's own signal (see LockDriver.acquire): one subscription to the caller's.
    const link = linkSignals([req.signal], req.timeoutMs !== undefined && req.timeoutMs > 0 ? req.timeoutMs : undefined);
    const giveUp = link.signal;
    const timedOut = (): boolean => link.timedOut && !req.signal?.aborted;
    try {
      for (;;) {
        if (timedOut()) return null;
        giveUp.throwIfAborted();
        try {
          return await this.attempt(req, giveUp);
        } catch (err) {
          if (timedOut()) return null;
          const restart = err instanceof Restart || (err instanceof SessionExpiredError && this.session.renewsOnLoss && !this.session.closed);
          if (!restart) throw err;
        }
        await this.session.waitConnected({ signal: giveUp }).catch((err: unknown) => {
          if (!timedOut()) throw err;
        });
      }
    } finally {
      link.dispose();
    }
  }

  private async attempt(req: AcquireRequest, giveUp: AbortSignal | undefined): Promise<HeldNodes | null> {
    const tryOnce = req.timeoutMs === 0;
    // A timeout reaches the driver as an abort of giveUp (one deadline for every step).
    const mutex = await this.mutex.acquire({ timeoutMs: tryOnce ? 0 : undefined, signal: giveUp, data: req.data, watchOwnNode: false });
    if (!mutex) return null;
    let leases: HeldNodes | null = null;
    let granted = false;
    let refused = false;
    try {
      // Read the semaphore's node after our first write (the mutex node): a window-layout
      // participant that listed it before `locks` existed is seen here, one that lists it later
      // sees `locks`. Sent before the lease, so both go out in one round trip.
      const layout = this.session.getChildren(this.path, { signal: giveUp });
      layout.catch(noop);
      let first: readonly string[] = [];
      leases = await this.leases.acquire({
        timeoutMs: 0,
        signal: giveUp,
        count: req.count ?? 1,
        data: req.data,
        watchOwnNode: false,
        onListing: (_stat, children) => {
          first = children;
        },
      });
      if (!leases) throw new IllegalStateError(`lease creation in ${this.leasesDir} was not granted`, { path: this.leasesDir });
      const dir = await layout;
      await this.verify(dir.stat, dir.children);
      // The driver starts over in a renewed session; our mutex node went with the old one.
      if (leases.sessionId !== mutex.sessionId || mutex.sessionSignal.aborted) throw new Restart(`the session of our mutex node ${mutex.paths[0]} ended`);
      if (!(await this.waitForRoom(first, leases, tryOnce, giveUp))) return null;
      const own = req.watchOwnNode ? await this.watchOwn(leases.paths[0] as string) : undefined;
      granted = true;
      return { ...leases, ownWatch: own?.changed, ownWatchAbort: own?.abort };
    } catch (err) {
      refused = err instanceof LayoutMismatchError;
      throw err;
    } finally {
      // A caller that gave up must not wait out an outage: the deletions then go on in the
      // background (ending with their session at the latest; close() waits for them).
      if (!granted && leases) await this.leases.abandon(leases.paths, leases.sessionSignal);
      if (granted) await this.mutex.remove(mutex.paths, mutex.sessionSignal);
      else await this.mutex.abandon(mutex.paths, mutex.sessionSignal);
      // Empty, they would make window-layout participants of the path refuse too.
      if (refused) for (const d of [this.leasesDir, this.locksDir]) await this.session.delete(d).catch(noop);
    }
  }

  /** Resolves once the deletions left running by acquisitions that gave up have ended. */
  async idle(): Promise<void> {
    await Promise.all([this.mutex.idle(), this.leases.idle()]);
  }

  /**
   * Step 3: holding the mutex, wait until at most `maxLeases` leases exist (ours included). Nobody
   * else creates leases meanwhile, so the count only falls: a child watch re-armed on each
   * listing misses nothing. Resolves to false when it is full and `tryOnce`.
   */
  private async waitForRoom(first: readonly string[], leases: HeldNodes, tryOnce: boolean, giveUp: AbortSignal | undefined): Promise<boolean> {
    const ours = leases.paths.map((p) => p.slice(this.leasesDir.length + 1));
    let children = first;
    let watch: { abort: AbortController; changed: Promise<WatchEvent> } | undefined;
    try {
      for (;;) {
        const missing = ours.find((n) => !children.includes(n));
        if (missing !== undefined) throw new Restart(`our lease ${this.leasesDir}/${missing} is gone`);
        if (children.length <= this.maxLeases) return true;
        if (tryOnce) return false;
        if (!watch) {
          const abort = new AbortController();
          // Ends with the caller: a reply that comes later removes its watch (the signal aborted).
          // Aborting `abort` ends the link (AbortSignal.any would stay in giveUp as long as it lives).
          const link = linkSignals([abort.signal, giveUp]);
          const w = await raceAbort(this.session.getChildrenWatch(this.leasesDir, { signal: link.signal }), giveUp).catch((err: unknown) => {
            link.dispose(); // no watch was set (if given up, the link aborted already: a late reply removes its watch)
            throw err;
          });
          w.changed.catch(noop);
          watch = { abort, changed: w.changed };
          children = w.result.children;
          continue;
        }
        await raceAbort(watch.changed, giveUp);
        watch.abort.abort(); // fired: ends its link; the next turn lists again with a new watch
        watch = undefined;
      }
    } catch (err) {
      if (err instanceof NoNodeError) throw new Restart(`the leases directory ${this.leasesDir} is gone`);
      throw err;
    } finally {
      watch?.abort.abort(); // removes the watch, locally and on the server
    }
  }

  /** Watches our (first) lease while held, so its deletion by someone aborts the handle. */
  private async watchOwn(path: string): Promise<{ changed: Promise<WatchEvent>; abort: AbortController }> {
    const abort = new AbortController();
    try {
      const w = await this.session.getDataWatch(path, { signal: abort.signal });
      w.changed.catch(noop);
      return { changed: w.changed, abort };
    } catch (err) {
      if (err instanceof NoNodeError) throw new Restart(`our lease ${path} was deleted`);
      throw err;
    }
  }
}
