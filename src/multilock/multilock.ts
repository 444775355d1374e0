/**
 * {@link MultiLock}: all of several mutexes or none (Curator's `InterProcessMultiLock`).
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import type { ZkSession } from '../client/session.js';
import { checkFunction, checkOptions, checkSignal, checkTimeout, describe, validatePath } from '../client/validate.js';
import type { LockHandle } from '../driver/handle.js';
import { ACQUIRE_OPTION_KEYS, runHolding, TRY_ACQUIRE_OPTION_KEYS, type AcquireOptions, type TryAcquireOptions } from '../driver/lock-recipe.js';
import { InvalidArgumentError, LockLostError, NotHeldError } from '../errors.js';
import { Mutex, type MutexOptions } from '../mutex/mutex.js';

/** Options of a {@link MultiLock}: those of each member {@link Mutex}. @group Recipes */
export type MultiLockOptions = MutexOptions;

/** Events of a {@link MultiLock}. @group Recipes */
export interface MultiLockEvents {
  /** Every member lock was granted. */
  acquired: (handle: MultiLockHandle) => void;
  /** A handle was released (every member). */
  released: (handle: MultiLockHandle) => void;
  /** A member lock of a held handle was lost: the handle's signal aborted with `error`. */
  lost: (handle: MultiLockHandle, error: LockLostError) => void;
}

/**
 * What a {@link MultiLock} grants: one {@link LockHandle} per member lock, in acquisition order
 * (sorted by path). Its `signal` aborts with the first member's {@link LockLostError}.
 * @group Recipes
 */
export class MultiLockHandle implements AsyncDisposable {
  /** The member handles, in acquisition order (sorted by path). */
  readonly handles: readonly LockHandle[];
  private readonly controller = new AbortController();
  private releasing: Promise<void> | undefined;
  private readonly unfollow: (() => void)[] = [];

  /** @internal Created by {@link MultiLock} once every member is held. */
  constructor(
    handles: readonly LockHandle[],
    private readonly hooks: { lost(handle: MultiLockHandle, error: LockLostError): void; released(handle: MultiLockHandle): void },
  ) {
    this.handles = handles;
    for (const h of handles) {
      const lose = (): void => {
        if (this.releasing || this.controller.signal.aborted) return;
        const error = h.signal.reason instanceof LockLostError ? h.signal.reason : new LockLostError(`lock ${h.path} lost`, { path: h.path, cause: h.signal.reason });
        this.controller.abort(error);
        hooks.lost(this, error);
      };
      if (h.signal.aborted) queueMicrotask(lose);
      else {
        h.signal.addEventListener('abort', lose, { once: true });
        this.unfollow.push(() => h.signal.removeEventListener('abort', lose));
      }
    }
  }

  /** Aborts with a {@link LockLostError} when any member lock is lost. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True until released or until a member is lost. */
  get isHeld(): boolean {
    return this.releasing === undefined && !this.controller.signal.aborted;
  }

  /** The member locks' fencing tokens, in acquisition order (sorted by path). */
  get fencingTokens(): readonly bigint[] {
    return this.handles.map((h) => h.fencingToken);
  }

  /**
   * Releases every member lock, in reverse acquisition order; each is attempted even if another
   * fails. Rejects with {@link NotHeldError} when already released, or when a member had been
   * lost (the others are released all the same).
   */
  release(): Promise<void> {
    if (this.releasing) return Promise.reject(new NotHeldError(`multi-lock ${this.handles.map((h) => h.path).join(', ')} was already released`));
    const lost = this.controller.signal.aborted ? (this.controller.signal.reason as LockLostError) : undefined;
    for (const u of this.unfollow.splice(0)) u();
    this.releasing = releaseAll(this.handles).finally(() => this.hooks.released(this));
    return this.releasing.then(() => {
      if (lost) throw new NotHeldError(`a member of the multi-lock was lost before release: ${lost.message}`, { path: lost.path, cause: lost });
    });
  }

  /** Releases unless already released; a lost member is not an error here. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.releasing) return this.releasing;
    await this.release().catch((err: unknown) => {
      if (!(err instanceof NotHeldError)) throw err;
    });
  }
}

/** Releases `handles` in reverse order, each one even if another fails; throws the first error but NotHeldError. */
async function releaseAll(handles: readonly LockHandle[]): Promise<void> {
  let first: unknown;
  for (const h of [...handles].reverse()) {
    try {
      await h.release();
    } catch (err) {
      if (!(err instanceof NotHeldError)) first ??= err;
    }
  }
  if (first !== undefined) throw first;
}

/**
 * All of several locks or none (Curator's `InterProcessMultiLock` over `InterProcessMutex`es):
 * one {@link Mutex} per path, in Curator's mutex layout, so a Curator `InterProcessMultiLock`
 * (or a plain `InterProcessMutex`) on the same paths and ours exclude each other.
 *
 * - **One global order**: the member locks are acquired sorted by path, whatever order they
 *   were given in, so two multi-locks over overlapping paths cannot deadlock each other.
 *   Curator acquires in list order: a Curator multi-lock given the paths in another order can
 *   deadlock with ours (or with another Curator one); give Curator the paths sorted.
 * - **All or none**: if a member cannot be had (timeout, abort, error), those already taken are
 *   released, in reverse order, before the call rejects; `timeoutMs` bounds the whole
 *   acquisition, not each member.
 * - **Released in reverse order**. A lost member lock (session expiry, node deleted) aborts the
 *   handle's `signal` with its {@link LockLostError} and emits `lost`.
 *
 * Guide: [Mutex](../../docs/recipes/mutex.md#multilock-several-locks-at-once).
 *
 * @example
 * ```ts
 * import { MultiLock } from 'zk-recipes';
 *
 * const both = new MultiLock(session, ['/locks/account-17', '/locks/account-4']);
 * await using held = await both.acquire({ timeoutMs: 5000 });
 * // both accounts are ours; held.signal aborts if either lock is lost
 * ```
 * @group Recipes
 */
export class MultiLock extends EventEmitter<MultiLockEvents> {
  /** The member lock paths, in acquisition order (sorted). */
  readonly paths: readonly string[];
  private readonly mutexes: readonly Mutex[];

  /** Creates a multi-lock over `paths` (at least one, no duplicates); nothing is sent until `acquire()`. */
  constructor(session: ZkSession, paths: readonly string[], options?: MultiLockOptions) {
    super();
    if (!Array.isArray(paths) || paths.length === 0) throw new InvalidArgumentError(`a multi-lock needs a non-empty array of lock paths, got ${describe(paths)}`);
    paths.forEach((p, i) => validatePath(p, `paths[${i}]`));
    const sorted = [...paths].sort();
    const dup = sorted.find((p, i) => sorted[i + 1] === p);
    if (dup !== undefined) throw new InvalidArgumentError(`a multi-lock's paths must differ, ${dup} is given twice (it would wait for itself)`, { path: dup });
    this.paths = Object.freeze(sorted);
    this.mutexes = sorted.map((p) => new Mutex(session, p, options));
  }

  /**
   * Waits for every member lock, in path order. Rejects with `LockTimeoutError` after
   * `timeoutMs` (for the whole acquisition) or with the abort reason, having released what it took.
   */
  async acquire(options?: AcquireOptions): Promise<MultiLockHandle> {
    const o = checkOptions(options, 'acquire', ACQUIRE_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    const deadline = timeoutMs === undefined ? undefined : performance.now() + timeoutMs;
    const taken: LockHandle[] = [];
    try {
      for (const m of this.mutexes) {
        const left = deadline === undefined ? undefined : Math.max(0, Math.ceil(deadline - performance.now()));
        // onProgress reports each member's queue in turn (the one being waited for).
        taken.push(await m.acquire({ timeoutMs: left, signal, ...(o.onProgress && { onProgress: o.onProgress }) }));
      }
    } catch (err) {
      await releaseAll(taken).catch(() => undefined);
      throw err;
    }
    return this.grant(taken);
  }

  /**
   * Takes every member lock if all are free right now; otherwise releases what it took and
   * resolves to `null`. When the signal aborts first, releases what it took and rejects with
   * its reason.
   */
  async tryAcquire(options?: TryAcquireOptions): Promise<MultiLockHandle | null> {
    const signal = checkSignal(checkOptions(options, 'tryAcquire', TRY_ACQUIRE_OPTION_KEYS).signal);
    const taken: LockHandle[] = [];
    try {
      for (const m of this.mutexes) {
        const h = await m.tryAcquire({ signal });
        if (!h) {
          await releaseAll(taken);
          return null;
        }
        taken.push(h);
      }
    } catch (err) {
      await releaseAll(taken).catch(() => undefined);
      throw err;
    }
    return this.grant(taken);
  }

  /**
   * Runs `fn` while holding every member lock, then releases them. `fn` gets the handle's
   * signal. Rejects with `LockLostError` if a member was lost before `fn` finished.
   */
  async runExclusive<T>(fn: (signal: AbortSignal, handle: MultiLockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    checkFunction(fn, 'runExclusive: fn');
    return runHolding(await this.acquire(options), fn);
  }

  /** Closes every member mutex (releasing what they hold, ending their waits). */
  async close(): Promise<void> {
    await Promise.all(this.mutexes.map((m) => m.close()));
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private grant(taken: LockHandle[]): MultiLockHandle {
    const handle = new MultiLockHandle(taken, { lost: (h, error) => this.emit('lost', h, error), released: (h) => this.emit('released', h) });
    this.emit('acquired', handle);
    return handle;
  }
}
