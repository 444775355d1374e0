/**
 * {@link Mutex}: a distributed, fair, non-reentrant mutual-exclusion lock.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Stat } from '../client/types.js';
import type { LockHandle } from '../driver/handle.js';
import { OneHolderDirectory, ONE_HOLDER_RECORD } from '../driver/layouts.js';
import { LockRecipe, type AcquireOptions, type LockOptions, type TryAcquireOptions } from '../driver/lock-recipe.js';
import type { QueueNode } from '../driver/names.js';
import { windowPredicate } from '../driver/predicates.js';

/** Options of a {@link Mutex}. @group Recipes */
export type MutexOptions = LockOptions;

/**
 * A distributed mutex (Curator's `InterProcessMutex` layout: `_c_<uuid>-lock-<seq>` ephemeral
 * sequential nodes under `path`, so Java services using Curator and Node services using
 * zk-recipes exclude each other on the same path).
 *
 * - **Fair**: granted in the order `acquire()` calls queued (by sequence number).
 * - **Not reentrant**: every `acquire()` is a separate participant, also on the same instance; a
 *   second `acquire()` from the same flow waits for the first to be released.
 * - **No herd**: each waiter watches only its predecessor; a release wakes exactly one waiter,
 *   which then holds the lock without another read.
 * - **On SUSPENDED** the instance emits `suspended` (the lock may be lost); **on LOST** every
 *   handle's `signal` aborts with `LockLostError` and `lost` is emitted. Guard writes with the
 *   handle's `fencingToken` or `handle.multi()`.
 *
 * Events ({@link LockEvents}): `acquired(handle)`, `released(handle)`, `lost(handle, error)`
 * (a held lock's signal aborted), `suspended()` and `reconnected()` (while it holds locks).
 *
 * Guide: [Mutex](../../docs/recipes/mutex.md), with a whole service instance as example.
 *
 * @example
 * ```ts
 * import { Mutex } from 'zk-recipes';
 *
 * const mutex = new Mutex(session, '/locks/orders');
 * mutex.on('lost', (handle, error) => console.warn(`lost ${handle.path}: ${error.message}`));
 * await using lock = await mutex.acquire({ timeoutMs: 5000, signal: shutdown });
 * console.log('holding; pass this with each write:', lock.fencingToken.toString());
 * ```
 * @group Recipes
 */
export class Mutex extends LockRecipe {
  private readonly directory: OneHolderDirectory;

  /** Creates a mutex on `path` (its directory; created on demand). */
  constructor(session: ZkSession, path: string, options: MutexOptions = {}) {
    super(session, path, { lockName: 'lock-', kinds: ['lock-'], predicate: windowPredicate(1), handoff: true, dirData: ONE_HOLDER_RECORD }, options, 'mutex');
    this.directory = new OneHolderDirectory(session, path, 'mutex');
  }

  /** Refuses other recipes' nodes, and a semaphore of more leases (its `maxLeases` in the directory's data). */
  protected override async checkDirectory(stat: Stat, children: readonly string[]): Promise<void> {
    super.checkDirectory(stat, children);
    await this.directory.check(stat);
  }

  /** Waits for the lock. Rejects with `LockTimeoutError` after `timeoutMs`, or the abort reason. */
  acquire(options?: AcquireOptions): Promise<LockHandle> {
    // Not async: a waiting acquisition keeps no suspended frame here (acquireNodes never throws).
    return this.acquireNodes(1, options, false) as Promise<LockHandle>;
  }

  /**
   * Takes the lock if it is free right now; otherwise resolves to `null` (never throws for
   * "busy"). Rejects with the signal's reason when it aborts first.
   */
  tryAcquire(options?: TryAcquireOptions): Promise<LockHandle | null> {
    return this.acquireNodes(1, options, true);
  }

  /**
   * Runs `fn` while holding the lock, then releases it. `fn` gets the handle's signal. Rejects
   * with `LockLostError` if the lock was lost before `fn` finished.
   */
  async runExclusive<T>(fn: (signal: AbortSignal, handle: LockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    return this.runExclusively(fn, options, (o) => this.acquire(o));
  }

  protected holds(_queue: readonly QueueNode[], index: number): boolean {
    return index === 0;
  }
}
