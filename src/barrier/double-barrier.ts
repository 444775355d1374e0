/**
 * {@link DoubleBarrier}: a distributed double barrier (Curator's `DistributedDoubleBarrier`).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { ZkSession } from '../client/session.js';
import { checkOptions, describe, joinPath, optionKeys, validatePath } from '../client/validate.js';
import type { Acl } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { ClosedError, ConnectionLossError, IllegalStateError, InvalidArgumentError, NodeExistsError, NoNodeError, NotEmptyError } from '../errors.js';
import { Background, raceAbort } from '../util/abort.js';
import { checkOpen, linkWait, waitError, type BarrierWaitOptions } from './common.js';
import { ownedController } from '../util/signals.js';

/** Options of a {@link DoubleBarrier}. @group Recipes */
export interface DoubleBarrierOptions {
  /** How many participants must enter before any `enter()` returns (an integer >= 1). */
  memberCount: number;
  /**
   * ACL of the nodes this barrier creates: member, ready (and of the directories above them); default: the
   * session's `aclProvider` (the open ACL without one). See [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** The keys of {@link DoubleBarrierOptions}. @internal */
export const DOUBLE_BARRIER_OPTION_KEYS = optionKeys<DoubleBarrierOptions>({ memberCount: true, acl: true });

/** Curator's name of the node the last entrant creates. */
export const READY_NODE = 'ready';

/** Where a {@link DoubleBarrier} participant is. @group Recipes */
export type DoubleBarrierState = 'idle' | 'entering' | 'entered' | 'leaving' | 'left';

/**
 * A double barrier, in Curator's `DistributedDoubleBarrier` layout: `enter()` returns once
 * `memberCount` participants have entered, `leave()` once every participant has left. Each
 * participant is an ephemeral node `path/<uuid>`; the participant that counts `memberCount`
 * children creates the persistent node `path/ready`, whose creation every other entrant
 * watches. Leaving follows Curator's protocol: the lowest member (by name) waits for the
 * highest to go, every other member deletes its node and waits for the lowest to go, until none
 * is left; the last one out deletes `ready`. Java (Curator) and Node participants mix freely on
 * one path, if they agree on `memberCount` (neither side records it).
 *
 * - **A participant whose session ends counts as left** (its node is ephemeral): an `enter()`
 *   in progress then rejects with `IllegalStateError`, a `leave()` goes on waiting for the others.
 * - **Nothing is left behind**: an `enter()` or `leave()` that gives up (timeout, abort, close)
 *   deletes our node and removes its watches (Curator's timed-out `enter` leaves its node); the
 *   last participant out deletes `ready` and, when it is empty, the barrier node.
 * - A participant is reusable: after `leave()` it may `enter()` again (a new node).
 *
 * Guide: [Barriers](../../docs/recipes/barrier.md).
 *
 * @example
 * ```ts
 * import { DoubleBarrier } from 'zk-recipes';
 *
 * const barrier = new DoubleBarrier(session, '/barriers/batch-7', { memberCount: 3 });
 * await barrier.enter({ timeoutMs: 30_000 }); // all three are here
 * // ... the batch's work ...
 * await barrier.leave({ timeoutMs: 30_000 }); // all three are done
 * ```
 * @group Recipes
 */
export class DoubleBarrier {
  /** The barrier's directory. */
  readonly path: string;
  /** How many participants must enter. */
  readonly memberCount: number;
  private readonly readyPath: string;
  private readonly acl: readonly Acl[] | undefined;
  private readonly closer = ownedController();
  private readonly background = new Background();
  private closedFlag = false;
  private current: DoubleBarrierState = 'idle';
  private ourName: string | undefined;

  /** Creates a participant of the double barrier on `path` (nothing is sent until `enter()`). */
  constructor(
    private readonly session: ZkSession,
    path: string,
    options: DoubleBarrierOptions,
  ) {
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError('a double barrier path cannot be the root "/"', { path });
    if (options === undefined) throw new InvalidArgumentError('new DoubleBarrier needs options with memberCount, e.g. { memberCount: 3 }', { path });
    const o = checkOptions(options, 'new DoubleBarrier', DOUBLE_BARRIER_OPTION_KEYS);
    const n = o.memberCount;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1_000_000) {
      throw new InvalidArgumentError(`double barrier memberCount must be an integer from 1 to 1000000, got ${describe(n)}`, { path });
    }
    this.path = path;
    this.acl = optionalAcl(o.acl, 'DoubleBarrier');
    this.memberCount = n;
    this.readyPath = joinPath(path, READY_NODE);
  }

  /** Where this participant is: `idle`, `entering`, `entered`, `leaving` or `left`. */
  get state(): DoubleBarrierState {
    return this.current;
  }

  /** Our member node's path while entering or entered, else undefined. */
  get memberPath(): string | undefined {
    return this.ourName === undefined ? undefined : joinPath(this.path, this.ourName);
  }

  /**
   * Enters, and resolves once `memberCount` participants have entered. Rejects with
   * `OperationTimeoutError` after `timeoutMs`, the abort reason, `ClosedError`, or
   * `IllegalStateError` when our node vanished (our session ended); in each case our node is
   * deleted and its watches removed, and the participant is `idle` again.
   */
  async enter(options?: BarrierWaitOptions): Promise<void> {
    checkOpen(this.closedFlag, this.session, 'double barrier', this.path);
    if (this.current !== 'idle' && this.current !== 'left') throw new IllegalStateError(`enter() on double barrier ${this.path} while ${this.current}: a participant enters once per round (leave() first)`, { path: this.path });
    const link = linkWait(options, 'enter', this.closer.signal);
    this.current = 'entering';
    const name = randomUUID();
    this.ourName = name;
    const ours = joinPath(this.path, name);
    // The ready watch is dropped (aborted) when enter ends, whatever the outcome.
    const watch = new AbortController();
    const unlink = (): void => watch.abort(link.signal.reason);
    link.signal.addEventListener('abort', unlink, { once: true });
    let creating = false;
    try {
      const ready = await this.session.existsWatch(this.readyPath, { signal: watch.signal });
      ready.changed.catch(() => undefined);
      creating = true;
      await this.createMember(ours, link.signal);
      if (ready.result === null) await this.awaitReady(name, ready.changed, link.signal);
      this.current = 'entered';
    } catch (err) {
      this.current = 'idle';
      this.ourName = undefined;
      // Also when the create's reply had not come: it may have been applied.
      if (creating) this.dropMember(ours);
      throw waitError(err, link, 'double barrier enter', this.path);
    } finally {
      link.signal.removeEventListener('abort', unlink);
      watch.abort();
      link.dispose();
    }
  }

  /**
   * Leaves, and resolves once every participant has left (a participant whose session ended
   * counts as left). Throws `IllegalStateError` without an `enter()` first. Rejects with
   * `OperationTimeoutError` after `timeoutMs`, the abort reason or `ClosedError`: our node is
   * deleted then (we have left), but others may not have.
   */
  async leave(options?: BarrierWaitOptions): Promise<void> {
    checkOpen(this.closedFlag, this.session, 'double barrier', this.path);
    if (this.current !== 'entered') throw new IllegalStateError(`leave() on double barrier ${this.path} while ${this.current}: enter() first`, { path: this.path });
    const link = linkWait(options, 'leave', this.closer.signal);
    this.current = 'leaving';
    const name = this.ourName as string;
    const ours = joinPath(this.path, name);
    let ourNodeShouldExist = true;
    try {
      for (;;) {
        let children: string[];
        try {
          ({ children } = await this.session.getChildren(this.path, { signal: link.signal }));
        } catch (err) {
          if (!(err instanceof NoNodeError)) throw err;
          children = [];
        }
        const members = children.filter((c) => c !== READY_NODE).sort();
        if (members.length === 0) break;
        const index = members.indexOf(name);
        // Our node gone (our session ended): we count as left; wait for the others all the same.
        if (index < 0) ourNodeShouldExist = false;
        if (members.length === 1 && index === 0) {
          await this.deleteMember(ours, link.signal);
          ourNodeShouldExist = false;
          break;
        }
        // Curator's protocol: the lowest waits for the highest; the others leave and wait for the lowest.
        let watched: string;
        if (index === 0) watched = members[members.length - 1] as string;
        else {
          watched = members[0] as string;
          if (ourNodeShouldExist) await this.deleteMember(ours, link.signal);
          ourNodeShouldExist = false;
        }
        await this.awaitGone(joinPath(this.path, watched), link.signal);
      }
      await this.tidy();
      this.current = 'left';
      this.ourName = undefined;
    } catch (err) {
      this.current = 'left';
      this.ourName = undefined;
      if (ourNodeShouldExist) this.dropMember(ours);
      throw waitError(err, link, 'double barrier leave', this.path);
    } finally {
      link.dispose();
    }
  }

  /** Abandons a wait in progress (deleting our node) and refuses later calls. Idempotent. */
  async close(): Promise<void> {
    if (!this.closedFlag) {
      this.closedFlag = true;
      this.closer.abort(new ClosedError(`double barrier ${this.path} was closed`, { path: this.path }));
      // A participant that entered and never left: it leaves now (without waiting for the others).
      if (this.current === 'entered' && this.ourName !== undefined) this.dropMember(joinPath(this.path, this.ourName));
    }
    await this.background.idle();
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Creates our ephemeral member node (the directory as a container when missing, as Curator's
   * creatingParentContainersIfNeeded). A lost reply is settled by reading the node's owner.
   */
  private async createMember(ours: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        // A create sent into a dead connection is not waited for past the caller's deadline:
        // enter's failure path deletes the node (a later request of the same session).
        await raceAbort(this.session.create(ours, { mode: 'EPHEMERAL', signal, acl: this.acl }), signal);
        return;
      } catch (err) {
        if (err instanceof NoNodeError) {
          await this.session.mkdirp(this.path, { container: true, signal, acl: this.acl });
          continue;
        }
        if (err instanceof ConnectionLossError || err instanceof NodeExistsError) {
          await this.session.sync(ours, { signal });
          const stat = await this.session.exists(ours, { signal });
          if (stat && stat.ephemeralOwner === this.session.sessionId) return;
          if (stat) throw new IllegalStateError(`member node ${ours} exists and is not ours (a uuid collision?)`, { path: ours });
          continue;
        }
        throw err;
      }
    }
  }

  /** Waits for `ready` (watched in `changed`), creating it when we count `memberCount` children. */
  private async awaitReady(name: string, changed: Promise<unknown>, signal: AbortSignal): Promise<void> {
    const { children } = await this.session.getChildren(this.path, { signal });
    if (!children.includes(name)) throw this.gone();
    if (children.includes(READY_NODE)) return;
    // As Curator counts: every child, ours included (ready is absent here).
    if (children.length >= this.memberCount) {
      try {
        await this.session.create(this.readyPath, { mode: 'PERSISTENT', signal, acl: this.acl });
      } catch (err) {
        if (!(err instanceof NodeExistsError)) throw err;
      }
      return;
    }
    await changed;
    // Ready was created (or our session ended and the watch with it: the error says so).
    const stat = await this.session.exists(joinPath(this.path, name), { signal });
    if (stat === null) throw this.gone();
  }

  /** Resolves once `node` is gone or changed (a data watch: NoNode leaves none behind). */
  private async awaitGone(node: string, signal: AbortSignal): Promise<void> {
    let changed: Promise<unknown>;
    try {
      ({ changed } = await this.session.getDataWatch(node, { signal }));
    } catch (err) {
      if (err instanceof NoNodeError) return;
      throw err;
    }
    await changed;
  }

  private async deleteMember(ours: string, signal: AbortSignal): Promise<void> {
    try {
      // Not waited for past the deadline: leave's failure path deletes it in the background.
      await raceAbort(this.session.delete(ours, { signal }), signal);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
  }

  /** Deletes our node in the background (ending with the session), after a wait gave up. */
  private dropMember(ours: string): void {
    this.background.track(this.session.delete(ours, { signal: this.session.signal }));
  }

  /** The last one out: deletes `ready` (as Curator does), then the directory if it is empty. */
  private async tidy(): Promise<void> {
    const quiet = (err: unknown): void => {
      if (!(err instanceof NoNodeError) && !(err instanceof NotEmptyError)) throw err;
    };
    await this.session.delete(this.readyPath, { signal: this.session.signal }).catch(quiet);
    await this.session.delete(this.path, { signal: this.session.signal }).catch(quiet);
  }

  private gone(): IllegalStateError {
    return new IllegalStateError(`our member node under double barrier ${this.path} is gone (our session ended, or someone deleted it): this participant counts as left; enter() again`, { path: this.path });
  }
}
