/**
 * {@link Barrier}: a distributed barrier (Curator's `DistributedBarrier`).
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { checkOptions, optionKeys, parentOf, validatePath } from '../client/validate.js';
import type { Acl } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { ClosedError, InvalidArgumentError, NodeExistsError, NoNodeError, SessionExpiredError } from '../errors.js';
import { checkOpen, linkWait, waitError, type BarrierWaitOptions } from './common.js';
import { raceAbort } from '../util/abort.js';
import { ownedController } from '../util/signals.js';

/** Options of a {@link Barrier}. @group Recipes */
export interface BarrierOptions {
  /**
   * ACL of the nodes this barrier creates (and of the directories above them); default: the
   * session's `aclProvider` (the open ACL without one). See [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** The keys of {@link BarrierOptions}. @internal */
export const BARRIER_OPTION_KEYS = optionKeys<BarrierOptions>({ acl: true });

/**
 * A distributed barrier, in Curator's `DistributedBarrier` layout: the barrier is up while the
 * node `path` exists. `set()` creates it (a persistent node; missing parents as containers),
 * `remove()` deletes it, and `wait()` returns once it is gone. Java services using Curator and
 * Node services using zk-recipes share a barrier on the same path, either side setting it.
 *
 * - `wait()` first `sync`s (a lagging follower could otherwise still show a barrier set
 *   elsewhere as absent), then reads the node with a data watch: one notification per removal,
 *   no polling; a wait that gives up (timeout, abort, close) removes its watch from the server.
 * - **On session loss** a wait goes on with the next session (the barrier is a persistent node:
 *   it does not end with a session); with `renewOnLoss` off it rejects with the session's error.
 * - `set()` and `remove()` are idempotent: setting a set barrier or removing a removed one is
 *   not an error.
 *
 * Guide: [Barriers](../../docs/recipes/barrier.md).
 *
 * @example
 * ```ts
 * import { Barrier } from 'zk-recipes';
 *
 * const barrier = new Barrier(session, '/barriers/deploy');
 * await barrier.set();
 * // elsewhere: await new Barrier(other, '/barriers/deploy').wait({ timeoutMs: 60_000 });
 * await barrier.remove(); // releases every waiter
 * ```
 * @group Recipes
 */
export class Barrier {
  /** The barrier node's path. */
  readonly path: string;
  private readonly closer = ownedController();
  private closedFlag = false;
  private readonly acl: readonly Acl[] | undefined;

  /** Creates a barrier on `path` (nothing is sent until a call). */
  constructor(
    private readonly session: ZkSession,
    path: string,
    options?: BarrierOptions,
  ) {
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError('a barrier path cannot be the root "/" (it can be neither created nor deleted)', { path });
    const o = checkOptions(options, 'new Barrier', BARRIER_OPTION_KEYS);
    this.acl = optionalAcl(o.acl, 'Barrier');
    this.path = path;
  }

  /** Sets the barrier (creates its node). Setting a barrier that is already set is not an error. */
  async set(options?: Pick<BarrierWaitOptions, 'signal'>): Promise<void> {
    checkOpen(this.closedFlag, this.session, 'barrier', this.path);
    const { signal } = checkOptions(options, 'set', ['signal']);
    for (;;) {
      try {
        // Set and remove are idempotent: one given up after it was sent may be sent again.
        await raceAbort(this.session.create(this.path, { mode: 'PERSISTENT', signal, acl: this.acl }), signal);
        return;
      } catch (err) {
        if (err instanceof NodeExistsError) return;
        if (!(err instanceof NoNodeError)) throw err;
      }
      // A missing parent: created as containers, as Curator's creatingParentContainersIfNeeded.
      await this.session.mkdirp(parentOf(this.path), { container: true, signal, acl: this.acl });
    }
  }

  /** Removes the barrier (deletes its node), releasing every waiter. Removing a removed barrier is not an error. */
  async remove(options?: Pick<BarrierWaitOptions, 'signal'>): Promise<void> {
    checkOpen(this.closedFlag, this.session, 'barrier', this.path);
    const { signal } = checkOptions(options, 'remove', ['signal']);
    try {
      await raceAbort(this.session.delete(this.path, { signal }), signal);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
  }

  /** Whether the barrier is set right now (as the session's server sees it). */
  async isSet(options?: Pick<BarrierWaitOptions, 'signal'>): Promise<boolean> {
    checkOpen(this.closedFlag, this.session, 'barrier', this.path);
    const { signal } = checkOptions(options, 'isSet', ['signal']);
    return (await this.session.exists(this.path, { signal })) !== null;
  }

  /**
   * Resolves once the barrier is not set (at once if it is not). Rejects with
   * `OperationTimeoutError` after `timeoutMs`, with the abort reason when `signal` aborts, with
   * `ClosedError` on close; its watch is removed in each case.
   */
  async wait(options?: BarrierWaitOptions): Promise<void> {
    checkOpen(this.closedFlag, this.session, 'barrier', this.path);
    const link = linkWait(options, 'wait', this.closer.signal);
    try {
      // A follower answers from its own copy: without this, a barrier another session has just
      // set could still read as absent on a lagging member, and the wait would return at once.
      await this.session.sync(this.path, { signal: link.signal });
      for (;;) {
        let changed: Promise<unknown>;
        try {
          ({ changed } = await this.session.getDataWatch(this.path, { signal: link.signal }));
        } catch (err) {
          if (err instanceof NoNodeError) return;
          throw err;
        }
        try {
          await changed;
        } catch (err) {
          // The watch ended with its session: look again with the next one.
          if (err instanceof SessionExpiredError && this.session.renewsOnLoss && !this.session.closed && !link.signal.aborted) continue;
          throw err;
        }
      }
    } catch (err) {
      throw waitError(err, link, 'barrier wait', this.path);
    } finally {
      link.dispose();
    }
  }

  /** Ends the pending waits (with `ClosedError`); later calls throw `ClosedError`. Idempotent. */
  async close(): Promise<void> {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.closer.abort(new ClosedError(`barrier ${this.path} was closed`, { path: this.path }));
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

