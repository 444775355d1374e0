/**
 * {@link LeaderLatch}: leader election where one participant at a time holds leadership.
 *
 * @module
 */
import { hostname } from 'node:os';
import { EventEmitter } from 'eventemitter3';
import type { ZkSession } from '../client/session.js';
import type { WaitOptions } from '../client/lifecycle.js';
import { boundedCall } from '../client/bounded.js';
import type { Acl, ConnectionState, Stat } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { copyPermissionError } from '../util/permission.js';
import { checkBoolean, checkOptions, checkSignal, checkTimeout, describe, optionKeys, validatePath } from '../client/validate.js';
import { layoutsOf, OneHolderDirectory, ONE_HOLDER_RECORD, refuseForeign, type LayoutId } from '../driver/layouts.js';
import { points, tracing, type AcquireContext, type LockLossReason } from '../observability/channels.js';
import { traceAcquire } from '../observability/trace.js';
import { LockDriver, type HeldNodes } from '../driver/lock-driver.js';
import { sortChildren } from '../driver/names.js';
import { windowPredicate } from '../driver/predicates.js';
import { placeReporter, type ProgressOf } from '../driver/progress.js';
import { ParentReaper } from '../driver/reaper.js';
import { backoffDelay, resolveBackoff, type Backoff } from '../client/retry.js';
import { ClosedError, IllegalStateError, InvalidArgumentError, isPermissionError, LockLostError, LockTimeoutError, NoNodeError, SessionExpiredError, type LayoutMismatchError } from '../errors.js';
import { deferred, delay, raceAbort, type Deferred } from '../util/abort.js';
import { stackless } from '../util/stackless.js';
import { linkSignals, onAbort, ownedController } from '../util/signals.js';

/** How a campaign's progress is named. */
const LEADER: ProgressOf = { recipe: 'leader', mode: 'exclusive' };

/** When a leader stops considering itself leader. @group Recipes */
export type LeadershipPolicy = 'suspended' | 'lost';

/** Options of a {@link LeaderLatch}. @group Recipes */
export interface LeaderLatchOptions {
  /** Stored in our node and reported by `participants()` / `leader()`. Default `hostname:pid`. */
  participantId?: string;
  /**
   * `'suspended'` (default): leadership ends as soon as the connection is suspended, before the
   * server could expire the session, so two leaders never overlap. `'lost'`: keep it through a
   * suspension and end it only when the session is lost (fewer leader changes on flaky links).
   */
  policy?: LeadershipPolicy;
  /** Lock name of the latch nodes. Default `latch-` (Curator's `LeaderLatch`). */
  lockName?: string;
  /**
   * Also watch our own node, so that a leader whose node is deleted (or changed) by someone else
   * steps down at once. Costs one read and one notification per term. Default false, as in
   * Curator's `LeaderLatch`: nodes of an election are only ever deleted by their owner or with
   * its session; with false, a leader whose node an operator deletes keeps leading until its
   * session ends while the next participant is elected.
   */
  watchOwnNode?: boolean;
  /**
   * The pause after a failed attempt to enter the election (a connection lost, a foreign
   * layout on the path), before the next one (a permission refusal, `NoAuthError` or
   * `InvalidAclError`, is not retried: the participant leaves the election): `baseDelayMs` after the first failure, doubling with each failure in a
   * row up to `maxDelayMs`, each pause jittered between half and all of that; back to the start
   * once elected. Each failure is emitted once as `error`. Default
   * `{ baseDelayMs: 100, maxDelayMs: 5000 }`: an error that persists costs about five requests
   * in the first two seconds, then one every 2.5 to 5 s.
   */
  errorBackoff?: {
    /** The first pause, ms (an integer from 0 to 2^31-1). Default 100. */
    baseDelayMs?: number;
    /** The longest pause, ms (an integer from `baseDelayMs` to 2^31-1). Default 5000. */
    maxDelayMs?: number;
  };
  /**
   * ACL of the election's nodes and of the directories above them; default: the session's
   * `aclProvider` (the open ACL without one). See [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** The keys of {@link LeaderLatchOptions}. @internal */
export const LEADER_LATCH_OPTION_KEYS = optionKeys<LeaderLatchOptions>({ participantId: true, policy: true, lockName: true, watchOwnNode: true, errorBackoff: true, acl: true });

/**
 * Options of {@link LeaderLatch.start} and {@link LeaderLatch.awaitLeadership}: the bound of the
 * wait. @group Recipes
 */
export interface LeaderWaitOptions {
  /** Give up after this many ms with {@link LockTimeoutError}. Default: wait without limit. */
  timeoutMs?: number;
  /** Give up when this aborts, rejecting with its reason. */
  signal?: AbortSignal;
}

/** The keys of {@link LeaderWaitOptions}. @internal */
export const LEADER_WAIT_OPTION_KEYS = optionKeys<LeaderWaitOptions>({ timeoutMs: true, signal: true });

const noop = (): void => undefined;

/** The default {@link LeaderLatchOptions.errorBackoff}. */
const DEFAULT_ERROR_BACKOFF: Backoff = { baseDelayMs: 100, maxDelayMs: 5000 };

/** A participant of an election. @group Recipes */
export interface LeaderParticipant {
  /** The participant id stored in its node. */
  id: string;
  /** Full path of its node. */
  path: string;
  /** Whether it is the leader (first in the queue). */
  isLeader: boolean;
  /** Its node's czxid: the fencing token of its term when it leads. */
  czxid: bigint;
}

/** Typed events of a {@link LeaderLatch}. @group Recipes */
export interface LeaderLatchEvents {
  /**
   * This participant became leader; `signal` aborts when that leadership ends. `fencingToken`
   * is the term's token (see {@link LeaderLatch.fencingToken}).
   */
  elected: (signal: AbortSignal, fencingToken: bigint) => void;
  /** This participant's leadership ended (suspension, loss, node deleted, or close). */
  revoked: (reason: LockLostError | ClosedError) => void;
  /**
   * Something went wrong while (re-)entering the election; it is retried after a backoff. When
   * the session is closed, or `LOST` with `renewOnLoss` off, or the server refuses us
   * permission (`NoAuthError`, `InvalidAclError`), the participant leaves the election for good:
   * this is emitted once with that error.
   */
  error: (error: Error) => void;
}

/**
 * Leader election (Curator's `LeaderLatch` layout: `_c_<uuid>-latch-<seq>` ephemeral sequential
 * nodes; the first one leads). `start()` resolves once its node is in the election (its
 * `timeoutMs` and `signal` bound that, and a start that gives up closes the latch, leaving
 * nothing behind); the participant then stays in the election until
 * `close()`: when it loses leadership (suspension under the default policy, session loss, its
 * node deleted) it is told (`revoked`, and the leadership signal aborts), leaves, and re-enters
 * at the back of the queue once connected again, in the current session.
 *
 * Before declaring itself leader it checks that its node belongs to its *current* session (a
 * node of an older session must never make it leader: the cause of Curator's two-leader bug
 * CURATOR-696).
 *
 * Events ({@link LeaderLatchEvents}): `elected(signal, fencingToken)` when this participant
 * becomes leader (`signal` aborts when that leadership ends), `revoked(reason)` when it ends,
 * `error(error)` when (re-)entering the election failed. Leadership is an event: a follower
 * hears nothing until it is elected. `awaitLeadership({ timeoutMs })` rejects with
 * `LockTimeoutError` in a follower that was not elected in time (it stays in the election).
 *
 * Guide: [Leader election](../../docs/recipes/leader.md), with a whole service instance as example.
 *
 * @example
 * ```ts
 * import { LeaderLatch } from 'zk-recipes';
 *
 * const latch = new LeaderLatch(session, '/election/scheduler');
 * latch.on('elected', (signal, fencingToken) => {
 *   const timer = setInterval(() => console.log('scheduling as', fencingToken.toString()), 1000);
 *   signal.addEventListener('abort', () => clearInterval(timer), { once: true });
 * });
 * latch.on('revoked', (reason) => console.warn('no longer leader:', reason.message));
 * await latch.start({ timeoutMs: 10_000 }); // in the election now: participants() lists it
 * shutdown.addEventListener('abort', () => void latch.close(), { once: true }); // step down
 * ```
 * @group Recipes
 */
export class LeaderLatch extends EventEmitter<LeaderLatchEvents> {
  /** The election's directory. */
  readonly path: string;
  private readonly driver: LockDriver;
  private readonly reaper: ParentReaper;
  private readonly data: Buffer;
  private readonly policy: LeadershipPolicy;
  private readonly backoff: Backoff;
  private readonly kinds: readonly string[];
  /** The layouts of our nodes: other recipes' nodes on the path are refused. */
  private readonly layouts: readonly LayoutId[];
  /** With `lock-` nodes (a leader selector), the check that no semaphore shares them. */
  private readonly oneHolder: OneHolderDirectory | undefined;
  private readonly watchOwnNode: boolean;
  private started = false;
  /** Resolved once our node is in the election, for the `start()` waiting on it. */
  private entered: Deferred<void> | undefined;
  /** The last error of an attempt to enter the election (the cause of a `start()` timeout). */
  private lastError: Error | undefined;
  private readonly closeController = ownedController();
  private closing: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private leadership: AbortController | undefined;
  /**
   * The next term's leadership controller, made while the campaign waits: making one costs more
   * than anything else between the notification that elects us and `elected`.
   */
  private nextLeadership: AbortController | undefined;
  /**
   * The reason a close ends a term with, made while the campaign waits: built in `close()`, it
   * came before the step-down's deletion (14 µs there).
   */
  private closeReason: ClosedError | undefined;
  /** Ends the current term's wait in `lead()` (called once its leadership signal aborted). */
  private termOver: (() => void) | undefined;
  /** The current term's step-down on close: told, then its node's deletion sent (see `close()`). */
  private stepDown: ((reason: ClosedError) => void) | undefined;
  private termToken: bigint | undefined;
  /** The current term, for the leader channels. */
  private term: { readonly nodePath: string; readonly sessionId: bigint; readonly startedAt: number } | undefined;
  private readonly participantId: string;
  // Aborted when the election loop stopped for good (session closed, or LOST for good).
  private readonly ended = ownedController();
  private readonly onState: (s: ConnectionState) => void;
  /** Each term's release, once begun: a closing leader begins it at once (see {@link releaseOnce}). */
  private readonly releases = new WeakMap<HeldNodes, Promise<boolean>>();

  /** Creates a participant on `path`; call `start()` to enter the election. */
  constructor(
    private readonly session: ZkSession,
    path: string,
    options: LeaderLatchOptions = {},
  ) {
    super();
    if (session === null || typeof session !== 'object' || typeof (session as Partial<ZkSession>).createWithStat !== 'function') {
      throw new InvalidArgumentError(`leader latch: session must be a ZkSession, got ${describe(session)}`);
    }
    validatePath(path, 'leader latch path');
    if (path === '/') throw new InvalidArgumentError('leader latch path must not be the root');
    checkOptions(options, 'new LeaderLatch', LEADER_LATCH_OPTION_KEYS);
    const policy = options.policy === undefined ? 'suspended' : options.policy;
    if (policy !== 'suspended' && policy !== 'lost') throw new InvalidArgumentError(`policy must be 'suspended' or 'lost', got ${describe(policy)}`);
    if (options.participantId !== undefined && typeof options.participantId !== 'string') {
      throw new InvalidArgumentError(`participantId must be a string, got ${describe(options.participantId)}`);
    }
    const lockName = options.lockName === undefined ? 'latch-' : options.lockName;
    if (typeof lockName !== 'string' || lockName === '' || lockName.includes('/') || !isNodeName(lockName)) {
      throw new InvalidArgumentError(`lockName must be a non-empty znode name without "/" or control characters, got ${describe(lockName)}`);
    }
    this.watchOwnNode = checkBoolean(options.watchOwnNode, 'watchOwnNode', false);
    this.backoff = resolveBackoff(options.errorBackoff, 'errorBackoff', DEFAULT_ERROR_BACKOFF);
    this.path = path;
    this.policy = policy;
    this.kinds = [lockName];
    this.participantId = options.participantId ?? `${hostname()}:${process.pid}`;
    this.data = Buffer.from(this.participantId);
    if (this.data.length > session.dataLimit) throw new InvalidArgumentError(`participantId is ${this.data.length} bytes, over the session's ${session.dataLimit}-byte limit`);
    this.layouts = layoutsOf(lockName);
    // `lock-` nodes, as a mutex's: one holder at a time, recorded as a mutex records it.
    this.oneHolder = this.layouts.includes('lock') ? new OneHolderDirectory(session, path, 'leader selector') : undefined;
    this.driver = new LockDriver(session, path, { lockName, kinds: this.kinds, predicate: windowPredicate(1), handoff: true, acl: optionalAcl(options.acl, 'LeaderLatch'), ...(this.oneHolder && { dirData: ONE_HOLDER_RECORD }) });
    this.reaper = new ParentReaper(session, 10_000);
    this.onState = (s) => {
      if (s === 'SUSPENDED' && this.policy === 'suspended') this.endLeadership(new LockLostError(`leadership of ${this.path} ended: connection suspended`, { path }), 'suspended');
    };
  }

  /** Whether this participant is the leader right now. */
  get hasLeadership(): boolean {
    return this.leadership !== undefined && !this.leadership.signal.aborted;
  }

  /**
   * The current term's fencing token, undefined while not leader: the czxid of our latch node.
   * Unique across the ensemble and increasing from term to term on one election path (each term
   * has a new node, and leadership follows creation order), so a resource can reject a deposed
   * leader that still acts: have it refuse tokens smaller than the largest it has seen.
   */
  get fencingToken(): bigint | undefined {
    return this.hasLeadership ? this.termToken : undefined;
  }

  /** Aborts when the current leadership ends; undefined while not leader. */
  get leadershipSignal(): AbortSignal | undefined {
    return this.hasLeadership ? this.leadership?.signal : undefined;
  }

  /**
   * Enters the election, and resolves once this participant's node is in it (created in the
   * current session): `participants()` lists it from then on. Elected or not: a follower's
   * `start()` resolves too (wait for leadership with {@link awaitLeadership}). The participant
   * then stays in the election until `close()`, whether the returned promise is awaited or not
   * (it never rejects unhandled). Entering is retried through connection loss and errors (each
   * emitted as `error`, then a backoff), within `timeoutMs` and `signal`.
   *
   * Throws at once `IllegalStateError` if already started, `ClosedError` after `close()` or on a
   * closed session, `InvalidArgumentError` for bad options. Rejects with `LockTimeoutError` after
   * `timeoutMs` (its `cause` the last error entering, if any), the signal's reason when it
   * aborts (also if aborted already): the start gave up, and the latch is closed as by
   * `close()`, leaving nothing behind (a node whose create was still on its way is deleted once
   * the server answers, or goes with its session; `close()` resolves once it is gone). Rejects
   * with `ClosedError` if `close()` is called first, and with `SessionExpiredError` (or
   * `ClosedError`) if the participant left the election for good before its node was created
   * (the session `LOST` with `renewOnLoss` off, or closed). `signal` and `timeoutMs` bound only
   * this wait: once the node is in, aborting `signal` changes nothing (use `close()`).
   */
  start(options: LeaderWaitOptions = {}): Promise<void> {
    const o = checkOptions(options, 'start', LEADER_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.closing) throw new ClosedError(`leader latch ${this.path} is closed`);
    if (this.started) throw new IllegalStateError(`leader latch ${this.path} was already started`);
    if (this.session.closed) throw new ClosedError(`the session of leader latch ${this.path} is closed`);
    const entered = deferred<void>();
    this.entered = entered;
    if (signal?.aborted) {
      // Nothing was started, and nothing will be: a start that gave up closes the latch.
      void this.close();
      return this.handled(Promise.reject(signal.reason));
    }
    this.started = true;
    this.session.on('state', this.onState);
    this.loop = this.run();
    return this.handled(this.untilEntered(entered, timeoutMs, signal));
  }

  /** `promise`, marked as handled: a caller that does not await `start()` gets no unhandled rejection. */
  private handled(promise: Promise<void>): Promise<void> {
    promise.catch(noop);
    return promise;
  }

  /** Waits for `entered` (our node created) within `timeoutMs` and `signal`; giving up closes the latch. */
  private async untilEntered(entered: Deferred<void>, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<void> {
    // One subscription each to the shared signals, gone when this settles.
    const unClose = onAbort(this.closeController.signal, () => entered.reject(new ClosedError(`leader latch ${this.path} closed before it entered the election`, { path: this.path })));
    const unEnded = onAbort(this.ended.signal, () => entered.reject(this.leftElection()));
    const link = signal !== undefined || timeoutMs !== undefined ? linkSignals([signal], timeoutMs) : undefined;
    try {
      await raceAbort(entered.promise, link?.signal);
    } catch (err) {
      if (!link?.signal.aborted) throw err;
      const error = link.timedOut && !signal?.aborted ? new LockTimeoutError(`leader latch ${this.path} did not enter the election within ${timeoutMs} ms; it was closed`, { path: this.path, cause: this.lastError }) : signal?.reason;
      void this.close();
      throw error;
    } finally {
      unClose();
      unEnded();
      link?.dispose();
      this.entered = undefined;
    }
  }

  /**
   * Resolves once this participant is leader (at once if it is): in a follower, when the
   * participants before it are gone, which may be never. Rejects with `LockTimeoutError` after
   * `timeoutMs` (so a `timeoutMs` rejects in every follower that was not elected in time; wait
   * with a shutdown `signal` instead, or expect it), the abort reason (an already aborted signal
   * rejects, leader or not), `ClosedError` on close, and
   * `SessionExpiredError` (or `ClosedError`) once the participant left the election because its
   * session is `LOST` with `renewOnLoss` off (or closed): it can never be elected then.
   */
  async awaitLeadership(options: LeaderWaitOptions = {}): Promise<void> {
    const o = checkOptions(options, 'awaitLeadership', LEADER_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.closing) throw new ClosedError(`leader latch ${this.path} is closed`);
    // An aborted signal is a rejection, leader or not (as the platform's APIs do).
    signal?.throwIfAborted();
    if (!this.started) throw new IllegalStateError(`leader latch ${this.path} was not started; call start() first`);
    if (this.hasLeadership) return;
    if (this.ended.signal.aborted) throw this.leftElection();
    const elected = deferred<void>();
    const onElected = (): void => elected.resolve();
    this.on('elected', onElected);
    // Shared by every waiter of this latch: one listener each, whatever the number of waiters.
    const unClose = onAbort(this.closeController.signal, () => elected.reject(new ClosedError(`leader latch ${this.path} closed while awaiting leadership`)));
    const unEnded = onAbort(this.ended.signal, () => elected.reject(this.leftElection()));
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => elected.reject(new LockTimeoutError(`not elected leader of ${this.path} within ${timeoutMs} ms`, { path: this.path })), timeoutMs);
    try {
      await raceAbort(elected.promise, signal);
    } finally {
      clearTimeout(timer);
      this.off('elected', onElected);
      unClose();
      unEnded();
    }
  }

  /** A fresh error saying why this participant left the election for good. */
  private leftElection(): Error {
    const cause: unknown = this.ended.signal.reason;
    const why = `leader latch ${this.path} left the election: ${cause instanceof Error ? cause.message : String(cause)}`;
    if (isPermissionError(cause)) return copyPermissionError(cause, `leader latch ${this.path} left the election`);
    if (cause instanceof SessionExpiredError) return new SessionExpiredError('SESSION_EXPIRED', why, { zkCode: cause.zkCode, path: this.path, cause });
    return new ClosedError(why, { path: this.path, cause });
  }

  private async run(): Promise<void> {
    const stop = this.closeController.signal;
    let failures = 0;
    while (!stop.aborted) {
      let held: HeldNodes | null = null;
      let failed = false;
      try {
        await this.session.waitConnected({ signal: stop });
        this.reaper.cancel(this.path);
        this.nextLeadership ??= new AbortController();
        // Node makes a controller's signal on its first use: make it now, not at the election.
        void this.nextLeadership.signal;
        this.closeReason ??= this.closedReason();
        held = await this.campaign(stop);
        // Closed while the grant was on its way: never lead (the finally removes the node).
        if (!held || stop.aborted) continue;
        // Our node must belong to the session we are connected with now (CURATOR-696).
        if (held.sessionId !== this.session.sessionId || held.sessionSignal.aborted || (this.policy === 'suspended' && this.session.state === 'SUSPENDED')) {
          await this.driver.remove(held.paths, held.sessionSignal);
          continue;
        }
        failures = 0;
        await this.lead(held);
      } catch (err) {
        if (stop.aborted) break;
        const error = err instanceof Error ? err : new Error(String(err));
        // The session will never connect again: leave the election rather than retry forever.
        // So is a refusal of permission: retrying would cost requests forever and never succeed.
        if (this.session.closed || (err instanceof SessionExpiredError && !this.session.renewsOnLoss) || isPermissionError(err)) {
          this.ended.abort(error);
          this.report(error);
          break;
        }
        this.report(error);
        failed = true;
      } finally {
        if (held) {
          // Delete first: the deletion fires our own watch, so it needs no removal request.
          await this.releaseOnce(held);
          held.ownWatchAbort?.abort();
        }
      }
      // A persistent error costs a few requests a second, not a busy loop.
      if (failed) await delay(backoffDelay(this.backoff, failures++), stop).catch(() => undefined);
    }
  }

  /** One candidacy: from entering the election to being elected (traced as a campaign). */
  private campaign(stop: AbortSignal): Promise<HeldNodes | null> {
    const startedAt = performance.now();
    return traceAcquire(
      tracing.leaderCampaign,
      (): AcquireContext => ({ recipe: 'leader', mode: 'exclusive', path: this.path, participantId: this.participantId, sessionId: this.session.sessionId, timeoutMs: undefined, nonblocking: false, leases: 1 }),
      startedAt,
      stop,
      (ctx) =>
        this.driver.acquire({
          signal: stop,
          data: this.data,
          watchOwnNode: this.watchOwnNode,
          onListing: (stat, children) => this.inElection(stat, children),
          onPlace: placeReporter(this.session, LEADER, this.path, ctx, undefined, stop),
        }),
      (ctx, held) => {
        ctx.outcome = held && !stop.aborted ? 'acquired' : 'aborted';
        ctx.nodePath = held?.paths[0];
        ctx.fencingToken = held?.czxid;
      },
    );
  }

  /**
   * Called with the first listing after our node was created: it is in the election now (what
   * `start()` waits for), unless another recipe uses the path ({@link LayoutMismatchError}: the
   * node is deleted, the error emitted, and entering retried after the backoff).
   */
  private async inElection(stat: Stat, children: readonly string[]): Promise<void> {
    refuseForeign(this.oneHolder ? 'leader selector' : 'leader latch', this.path, children, this.layouts);
    await this.oneHolder?.check(stat);
    this.entered?.resolve();
  }

  /** Emits `error`; a listener that throws must not end the election loop. */
  private report(error: Error): void {
    this.lastError = error;
    try {
      this.emit('error', error);
    } catch (err) {
      process.emitWarning(`zk-recipes: a LeaderLatch 'error' listener threw: ${String(err)}`);
    }
  }

  /** Holds leadership until it ends for any reason. */
  private async lead(held: HeldNodes): Promise<void> {
    const leadership = this.nextLeadership ?? new AbortController();
    this.nextLeadership = undefined;
    this.leadership = leadership;
    this.termToken = held.czxid;
    const end = (why: string, kind: LockLossReason, cause?: unknown): void => {
      // Our own step-down fires our node's watch too: build no error (nor its stack) for a term that ended.
      if (leadership.signal.aborted) return;
      this.endLeadership(new LockLostError(`leadership of ${this.path} ended: ${why}`, { path: this.path, cause }), kind);
    };
    // The session's signal is shared by every recipe on it: subscribe, never a listener each.
    const unSession = onAbort(held.sessionSignal, (reason) => end('the session was lost', 'session', reason));
    // Called by close() itself, before its signal's listeners: a step-down waits on nothing.
    this.stepDown = (reason) => {
      this.endLeadership(reason, 'closed');
      // Revoked: step down in this same call, not once this loop has come round to its finally
      // (a chain of promise reactions before the next leader can even be told). The loop then
      // awaits this same release, whose failure it handles.
      this.releaseOnce(held).catch(noop);
    };
    const over = new Promise<void>((resolve) => (this.termOver = resolve));
    held.ownWatch?.then(
      () => end('our node was changed or deleted by someone else', 'node-deleted'),
      () => undefined,
    );
    try {
      // Listeners added to an already aborted signal never run: check, or wait forever.
      if (this.closeController.signal.aborted || held.sessionSignal.aborted) {
        this.leadership = undefined;
        return;
      }
      this.term = { nodePath: held.paths[0] as string, sessionId: held.sessionId, startedAt: performance.now() };
      if (points.leaderElected.hasSubscribers) points.leaderElected.publish({ path: this.path, nodePath: this.term.nodePath, term: held.czxid, sessionId: held.sessionId, participantId: this.participantId });
      this.emit('elected', leadership.signal, held.czxid);
      if (!leadership.signal.aborted) await over;
    } finally {
      unSession();
      this.stepDown = undefined;
      this.termOver = undefined;
    }
  }

  /** Releases a term's nodes, once however often asked (by a closing leader, then by the loop). */
  private releaseOnce(held: HeldNodes): Promise<boolean> {
    let done = this.releases.get(held);
    if (done === undefined) {
      done = this.driver.release(held.paths, held.sessionSignal, held.markRelease);
      this.releases.set(held, done);
    }
    return done;
  }

  private endLeadership(reason: LockLostError | ClosedError, kind: LockLossReason | 'closed'): void {
    const l = this.leadership;
    if (!l || l.signal.aborted) return;
    l.abort(reason);
    this.leadership = undefined;
    this.termOver?.();
    const term = this.term;
    this.term = undefined;
    if (term && points.leaderRevoked.hasSubscribers) {
      points.leaderRevoked.publish({ path: this.path, term: this.termToken ?? 0n, sessionId: term.sessionId, participantId: this.participantId, reason: kind, error: reason, leadMs: performance.now() - term.startedAt });
    }
    this.emit('revoked', reason);
  }

  /**
   * The participants in queue order, the leader first. Rejects with `OperationTimeoutError` after
   * `timeoutMs`, or the signal's reason when it aborts.
   */
  async participants(options: WaitOptions = {}): Promise<LeaderParticipant[]> {
    if (this.closing) throw new ClosedError(`leader latch ${this.path} is closed`);
    return boundedCall(options, 'participants', this.path, (signal) => this.readParticipants(signal));
  }

  private async readParticipants(signal: AbortSignal | undefined): Promise<LeaderParticipant[]> {
    let children: string[];
    try {
      children = (await this.session.getChildren(this.path, { signal })).children;
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
    const queue = sortChildren(children, this.kinds);
    const out = await Promise.all(
      queue.map((n) =>
        this.session.getData(`${this.path}/${n.name}`, { signal }).then(
          (d) => ({ id: d.data.toString('utf8'), path: `${this.path}/${n.name}`, isLeader: false, czxid: d.stat.czxid }),
          (err: unknown) => {
            if (err instanceof NoNodeError) return undefined;
            throw err;
          },
        ),
      ),
    );
    const present = out.filter((p): p is LeaderParticipant => p !== undefined);
    if (present[0]) present[0].isLeader = true;
    return present;
  }

  /** The current leader, or undefined when nobody is in the election; `options` as {@link participants}. */
  async leader(options: WaitOptions = {}): Promise<LeaderParticipant | undefined> {
    return (await this.participants(options))[0];
  }

  /**
   * Leaves the election (relinquishing leadership) and deletes our node. Idempotent. A leader is
   * told first (`revoked`, its leadership signal), then the deletion is sent, both within this
   * call. Settles at once after `LOST` (our node went with the session) instead of waiting for
   * the server.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const reason = this.closeReason ?? this.closedReason();
      // A leader steps down first: an abort's dispatch costs more than the deletion's sending.
      this.stepDown?.(reason);
      this.closeController.abort(reason);
      this.session.off('state', this.onState);
      await this.loop?.catch(() => undefined);
      await this.driver.idle();
      this.reaper.stop();
    })();
    return this.closing;
  }

  /**
   * The reason of a close, which a term it ends is revoked with too. Without a stack: capturing
   * one cost more than the rest of what precedes the step-down's deletion (failovers were 7-16 %
   * slower at the median with it).
   */
  private closedReason(): ClosedError {
    return stackless(() => new ClosedError(`leader latch ${this.path} closed`, { path: this.path }));
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Whether `name` can be one segment of a znode path (no control or forbidden characters, not . or ..). */
function isNodeName(name: string): boolean {
  try {
    validatePath(`/${name}`);
    return true;
  } catch {
    return false;
  }
}
