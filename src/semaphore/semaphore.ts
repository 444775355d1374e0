/**
 * {@link Semaphore}: a distributed counting semaphore.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Stat } from '../client/types.js';
import { describe } from '../client/validate.js';
import type { LockHandle } from '../driver/handle.js';
import { LockRecipe, type AcquireOptions, type LockOptions } from '../driver/lock-recipe.js';
import type { QueueNode } from '../driver/names.js';
import { windowPredicate } from '../driver/predicates.js';
import { BadVersionError, InvalidArgumentError, LeaseMismatchError, NoNodeError } from '../errors.js';

/** Options of a {@link Semaphore}. */
export interface SemaphoreOptions extends LockOptions {
  /** How many leases may be held at once, across all participants (an integer >= 1). */
  maxLeases: number;
}

/**
 * A distributed counting semaphore: at most `maxLeases` leases held at once across all
 * participants. Nodes are `_c_<uuid>-lock-<seq>` ephemeral sequential nodes under `path` (like
 * {@link Mutex}, which is a semaphore with one lease); `maxLeases` is stored as the data of
 * `path` itself, and a participant configured with another value gets a `LeaseMismatchError`
 * instead of silently breaking the limit.
 *
 * - **Fair**: leases are granted in queue order; `acquire(n)` creates its n nodes in one
 *   transaction, so they are adjacent and a multi-lease request cannot deadlock with others.
 * - **Wake-ups**: a waiter watches the `maxLeases - n + 1` nodes just before its own, so any
 *   release among them can promote it (with holders A, B, C and waiter D, C's release grants D
 *   at once), and a release wakes at most `maxLeases` waiters.
 * - **On SUSPENDED** the instance emits `suspended`; **on LOST** handles' signals abort.
 *
 * Choosing `maxLeases`: the number of concurrent users the protected resource can serve (e.g.
 * its connection pool size divided among services). Everyone on one path must agree on it.
 */
export class Semaphore extends LockRecipe {
  /** How many leases may be held at once. */
  readonly maxLeases: number;
  private verifiedDir: bigint | undefined;

  /** Creates a semaphore on `path` (its directory; created on demand with `maxLeases` as data). */
  constructor(session: ZkSession, path: string, options: SemaphoreOptions) {
    const max = (options as Partial<SemaphoreOptions> | undefined)?.maxLeases;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 1_000_000) {
      throw new InvalidArgumentError(`semaphore maxLeases must be an integer from 1 to 1000000, got ${describe(max)}`);
    }
    super(session, path, { lockName: 'lock-', kinds: ['lock-'], predicate: windowPredicate(max), dirData: Buffer.from(String(max)) }, options, 'semaphore');
    this.maxLeases = max;
  }

  /**
   * Waits for `leases` leases (default 1), taken together. Rejects with `LockTimeoutError` after
   * `timeoutMs`, or the abort reason.
   */
  acquire(options?: AcquireOptions): Promise<LockHandle>;
  acquire(leases: number, options?: AcquireOptions): Promise<LockHandle>;
  async acquire(a?: number | AcquireOptions, b?: AcquireOptions): Promise<LockHandle> {
    const [leases, options] = typeof a === 'number' ? [a, b] : [1, a];
    return (await this.acquireNodes(this.checkLeases(leases), options, false)) as LockHandle;
  }

  /** Takes `leases` leases (default 1) if free right now; otherwise resolves to `null`. */
  async tryAcquire(leases = 1): Promise<LockHandle | null> {
    return this.acquireNodes(this.checkLeases(leases), undefined, true);
  }

  /** Runs `fn` while holding one lease, then releases it (`LockLostError` if lost meanwhile). */
  async runExclusive<T>(fn: (signal: AbortSignal, handle: LockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    return this.runWith(await this.acquire(options), fn);
  }

  private checkLeases(leases: unknown): number {
    if (typeof leases !== 'number' || !Number.isInteger(leases) || leases < 1 || leases > this.maxLeases) {
      throw new InvalidArgumentError(`leases must be an integer from 1 to maxLeases (${this.maxLeases}), got ${describe(leases)}`);
    }
    return leases;
  }

  protected holds(queue: readonly QueueNode[], index: number): boolean {
    // A multi-lease request is adjacent nodes sharing one uuid: they hold together or not at all.
    const uuid = queue[index]?.uuid;
    let end = index + 1;
    while (uuid !== undefined && queue[end]?.uuid === uuid) end++;
    return end <= this.maxLeases;
  }

  /** Verifies (once per incarnation of the directory) that it records our `maxLeases`. */
  protected override async checkDirectory(stat: Stat): Promise<void> {
    if (this.verifiedDir === stat.czxid) return;
    for (;;) {
      let data: Buffer;
      let version: number;
      try {
        ({ data, stat: { version } } = await this.session.getData(this.path));
      } catch (err) {
        // Reaped meanwhile: our node is in it, so this cannot really happen; re-check next time.
        if (err instanceof NoNodeError) return;
        throw err;
      }
      const recorded = data.toString('utf8');
      if (recorded === '') {
        // Created by someone who did not record a limit (e.g. a plain mkdirp): claim it.
        try {
          await this.session.setData(this.path, String(this.maxLeases), { version });
        } catch (err) {
          if (err instanceof BadVersionError) continue;
          throw err;
        }
      } else if (recorded !== String(this.maxLeases)) {
        throw new LeaseMismatchError(
          `semaphore ${this.path} is used with maxLeases ${recorded}, but this participant was configured with ${this.maxLeases}; use the same maxLeases everywhere (or a new path)`,
          { path: this.path },
        );
      }
      this.verifiedDir = stat.czxid;
      return;
    }
  }
}
