/**
 * {@link LockHandle}: what every lock-like recipe hands out when it grants.
 *
 * @module
 */
import type { CallOptions, ZkSession } from '../client/session.js';
import type { Op, OpResult, WatchEvent } from '../client/types.js';
import { LockLostError, NoNodeError, NotHeldError } from '../errors.js';
import type { LockLossReason } from '../observability/channels.js';
import { onAbort } from '../util/signals.js';
import type { HeldNodes } from './lock-driver.js';

/** What a handle calls back into its recipe. @internal */
export interface HandleHooks {
  /**
   * Deletes the nodes (through connection loss, until they are gone or `held`'s session is) and
   * does the recipe's bookkeeping. Resolves to whether the nodes were still there to delete.
   */
  release(handle: LockHandle, held: HeldNodes): Promise<boolean>;
  /** Reports a loss (event), and what kind of loss it was. */
  lost(handle: LockHandle, reason: LockLostError, why: LockLossReason): void;
}

/**
 * A held lock, lease or leadership. Release it exactly once: `release()`, `await using`, or
 * `runExclusive`.
 *
 * - `signal` aborts with a {@link LockLostError} when the lock is lost: the session is `LOST`
 *   (expired, or 0.95 of the session timeout without proof that the ensemble's leader heard of
 *   it), or our node was deleted by someone
 *   (noticed at once with the recipe's `watchOwnNode` option, off by default; otherwise by
 *   `multi()` and at release). It does not abort on release.
 * - `fencingToken` is our node's czxid: unique across the ensemble and increasing in grant order
 *   on one lock path. Pass it to the resource you protect and have it reject smaller tokens.
 *   It is a `bigint`, which `JSON.stringify` refuses: send `fencingToken.toString()`, compare
 *   `BigInt(received)`.
 *   A read-write lock downgrade's read handle carries its write handle's token (it takes the
 *   write node's place in grant order), so the two share one.
 * @group Recipes
 */
export class LockHandle implements AsyncDisposable {
  /** Full path of our lock node (the first one, for a multi-lease grant). */
  readonly path: string;
  /** Full paths of all our nodes (several for a multi-lease semaphore grant). */
  readonly paths: readonly string[];
  /** Our node's czxid (a downgrade's: its write node's): never decreasing in grant order on one path. */
  readonly fencingToken: bigint;
  /** Session id the lock belongs to. */
  readonly sessionId: bigint;
  /** Why the lock was lost, once it was. */
  private lostReason: LockLostError | undefined;
  /** Made when `signal` is first asked for: most handles are released with nobody listening. */
  private controller: AbortController | undefined;
  private releasing: Promise<void> | undefined;
  /** Given up by the recipe (lossPolicy 'suspended'): its node is being deleted in the background. */
  private relinquished = false;
  /** @internal When it was granted (`performance.now()`), for hold times. */
  readonly grantedAt = performance.now();
  /** Ends our subscription to the session's signal (one listener for every handle of it). */
  private readonly unfollowSession: () => void;

  /** @internal Created by recipes when the driver grants. */
  constructor(
    private readonly session: ZkSession,
    private readonly held: HeldNodes,
    private readonly hooks: HandleHooks,
  ) {
    this.paths = held.paths;
    this.path = held.paths[0] as string;
    this.fencingToken = held.czxid;
    this.sessionId = held.sessionId;
    const onSessionEnd = (): void => this.lose(`the session 0x${held.sessionId.toString(16)} ended`, held.sessionSignal.reason, 'session');
    if (held.sessionSignal.aborted) queueMicrotask(onSessionEnd);
    this.unfollowSession = onAbort(held.sessionSignal, onSessionEnd);
    if (held.ownWatch) this.followOwnNode(held.ownWatch);
  }

  /** Aborts with a {@link LockLostError} when the lock is lost. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lostReason) this.controller.abort(this.lostReason);
    }
    return this.controller.signal;
  }

  /** @internal Whether the lock was lost (without making the signal). */
  get wasLost(): boolean {
    return this.lostReason !== undefined;
  }

  /** True until released or lost. */
  get isHeld(): boolean {
    return this.releasing === undefined && this.lostReason === undefined;
  }

  private followOwnNode(changed: Promise<WatchEvent>): void {
    changed.then(
      (event) => {
        if (this.releasing || this.lostReason) return;
        if (event.type === 'NODE_DELETED') return this.lose(`our node ${this.path} was deleted by someone else`);
        // Data changed under us: keep watching.
        this.session
          .getDataWatch(this.path, { signal: this.held.ownWatchAbort?.signal })
          .then((w) => this.followOwnNode(w.changed))
          .catch((err: unknown) => {
            if (err instanceof NoNodeError) this.lose(`our node ${this.path} was deleted by someone else`);
          });
      },
      () => undefined, // aborted on release, or the session ended (handled by the session signal)
    );
  }

  private lose(why: string, cause?: unknown, kind: LockLossReason = 'node-deleted'): void {
    if (this.releasing || this.lostReason) return;
    const reason = new LockLostError(`lock ${this.path} lost: ${why}`, { path: this.path, cause });
    this.unfollowSession();
    this.lostReason = reason;
    this.controller?.abort(reason);
    this.hooks.lost(this, reason, kind);
  }

  /**
   * Releases the lock: deletes our node(s), retrying through connection loss. Rejects with
   * {@link NotHeldError} when the handle was already released, when the lock had been lost, or
   * when our node turned out to be gone already (deleted by someone else), after making sure
   * nothing of ours is left.
   *
   * Never waits for a server that is gone: when the lock's session has ended (`LOST` or closed),
   * its nodes went with it, so this settles at once, with {@link NotHeldError}. While the
   * connection is only suspended it waits for the same session to come back, at the latest until
   * the session is `LOST`.
   */
  release(): Promise<void> {
    if (this.relinquished) return Promise.reject(this.lostBeforeRelease(this.lostReason as LockLostError));
    if (this.releasing) return Promise.reject(new NotHeldError(`lock ${this.path} was already released`, { path: this.path }));
    let lost = this.lostReason;
    this.releasing = (async () => {
      this.unfollowSession();
      const deleted = await this.hooks.release(this, this.held);
      if (!deleted && !lost && !this.lostReason) {
        // Our node was gone before we released it (deleted by someone): the lock was not ours.
        lost = new LockLostError(`lock ${this.path} lost: our node was already gone at release`, { path: this.path });
        this.lostReason = lost;
        this.controller?.abort(lost);
        this.hooks.lost(this, lost, 'node-deleted');
      }
    })();
    return this.releasing.then(() => {
      if (lost) throw this.lostBeforeRelease(lost);
    });
  }

  private lostBeforeRelease(lost: LockLostError): NotHeldError {
    return new NotHeldError(`lock ${this.path} was lost before release: ${lost.message}`, { path: this.path, cause: lost });
  }

  /**
   * @internal The recipe gives the lock up (the connection is suspended under lossPolicy
   * 'suspended'): the signal aborts, and our node(s) are deleted in the background, once the
   * session is back or with it. `release()` then rejects with {@link NotHeldError} at once.
   */
  relinquish(why: string): void {
    if (this.releasing || this.lostReason) return;
    this.lose(why, undefined, 'suspended');
    this.relinquished = true;
    this.unfollowSession();
    this.releasing = this.hooks.release(this, this.held).then(
      () => undefined,
      () => undefined,
    );
  }

  /** @internal Resolves once a release (ours or the recipe's) has finished; at once if none began. */
  whenReleased(): Promise<void> {
    return this.releasing ?? Promise.resolve();
  }

  /**
   * Runs `ops` as one ZooKeeper transaction that also checks our lock node still exists, so the
   * writes commit only while the lock is held (etcd's `IsOwner`). Rejects with
   * {@link LockLostError} when it does not. Results exclude the check. `options.signal` works as
   * for the session's `multi` (a transaction already sent still waits for its answer).
   */
  async multi(ops: readonly Op[], options?: CallOptions): Promise<OpResult[]> {
    if (!this.isHeld) throw new NotHeldError(`lock ${this.path} is not held`, { path: this.path });
    try {
      const results = await this.session.multi([{ type: 'check', path: this.path }, ...ops], options);
      return results.slice(1);
    } catch (err) {
      if (err instanceof NoNodeError && err.opIndex === 0) {
        this.lose(`our node ${this.path} is gone`, err);
        throw this.lostReason;
      }
      throw err;
    }
  }

  /** @internal The recipe learnt that our node is gone (e.g. a downgrade found it so). */
  noteLost(why: string, cause?: unknown): void {
    this.lose(why, cause, 'node-deleted');
  }

  /**
   * Releases unless already released; for `await using`. A lost lock is not an error here, and
   * a lock whose session ended settles at once (see {@link release}).
   */
  async [Symbol.asyncDispose](): Promise<void> {
    // Given up by the recipe: the loss was signalled, and the deletion must not hold up the scope.
    if (this.relinquished) return;
    if (this.releasing) return this.releasing;
    await this.release().catch((err: unknown) => {
      if (!(err instanceof NotHeldError)) throw err;
    });
  }
}
