/**
 * {@link LeaderSelector}: leadership that lasts while a callback runs.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { WaitOptions } from '../client/lifecycle.js';
import { checkBoolean, checkFunction, checkOptionalFunction, checkOptions, checkSignal, optionKeys } from '../client/validate.js';
import { ClosedError, IllegalStateError } from '../errors.js';
import { linkSignals, type LinkedSignal } from '../util/signals.js';
import { LEADER_LATCH_OPTION_KEYS, LeaderLatch, type LeaderLatchOptions, type LeaderParticipant } from './latch.js';

/** Options of {@link LeaderSelector.run}. @group Recipes */
export interface RunOptions {
  /** Re-enter the election after each term (Curator's `autoRequeue`). Default false. */
  requeue?: boolean;
  /** Stops: no further terms; a running term's signal aborts. */
  signal?: AbortSignal;
  /**
   * Called once with each error of an attempt to enter the election (e.g. `NoAuthError` on the
   * path); the attempt is retried after the `errorBackoff` of the selector's options.
   */
  onError?: (error: Error) => void;
}

/** The keys of {@link RunOptions}. @internal */
export const RUN_OPTION_KEYS = optionKeys<RunOptions>({ requeue: true, signal: true, onError: true });

/** One term of leadership, as {@link LeaderSelector.run} hands it to its callback. @group Recipes */
export interface LeaderTerm {
  /** Aborts when this term's leadership ends (or the run is stopped). */
  readonly signal: AbortSignal;
  /** The term's fencing token (see {@link LeaderLatch.fencingToken}): pass it to what you write. */
  readonly fencingToken: bigint;
}

/**
 * Leader election where leadership lasts while a callback runs (Curator's `LeaderSelector`).
 * `run(fn)` waits to be elected, calls `fn(signal, term)`, and relinquishes leadership when `fn`
 * settles; `signal` aborts if leadership is lost meanwhile (suspension under the default
 * policy, session loss, node deleted): stop acting as leader at once. With `requeue`, the
 * participant re-enters the election after each term.
 *
 * Nodes are `_c_<uuid>-lock-<seq>` (Curator's `LeaderSelector` is a mutex on its path).
 *
 * Events: none; a term is the callback's run, and its `signal` tells when it ends.
 *
 * Guide: [Leader election](../../docs/recipes/leader.md).
 *
 * @example
 * ```ts
 * import { LeaderSelector } from 'zk-recipes';
 *
 * const selector = new LeaderSelector(session, '/election/compactor');
 * await selector.run(
 *   async (signal, term) => {
 *     console.log('compacting as leader, token', term.fencingToken.toString());
 *     await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
 *   },
 *   { requeue: true, signal: shutdown }, // term after term until shutdown
 * );
 * ```
 * @group Recipes
 */
export class LeaderSelector {
  private readonly options: LeaderLatchOptions;
  private running = false;
  private latch: LeaderLatch | undefined;
  private closed = false;

  /** Creates a selector on `path`. */
  constructor(
    private readonly session: ZkSession,
    /** The election's directory. */
    readonly path: string,
    options: LeaderLatchOptions = {},
  ) {
    this.options = { lockName: 'lock-', ...checkOptions(options, 'new LeaderSelector', LEADER_LATCH_OPTION_KEYS) };
    // Validates everything up front (the latch is created per run).
    void new LeaderLatch(session, path, this.options);
  }

  /**
   * Runs terms of leadership. Without `requeue` it resolves after one term, and an abort before
   * the term rejects with the signal's reason. With `requeue` it runs term after term until
   * `signal` aborts or `close()` is called, then resolves. An already aborted `signal` rejects
   * with its reason at once (with `requeue` too). Rejects with what `fn` threw, and with
   * `SessionExpiredError` once the session is `LOST` with `renewOnLoss` off. Every argument and
   * option is checked before anything is sent (`InvalidArgumentError`).
   */
  async run(fn: (signal: AbortSignal, term: LeaderTerm) => unknown, options: RunOptions = {}): Promise<void> {
    checkFunction(fn, 'run: fn');
    const o = checkOptions(options, 'run', RUN_OPTION_KEYS);
    const signal = checkSignal(o.signal);
    const requeue = checkBoolean(o.requeue, 'requeue', false);
    const onError = checkOptionalFunction(o.onError, 'onError');
    if (this.closed) throw new ClosedError(`leader selector ${this.path} is closed`);
    // An aborted signal is a rejection, with requeue too (stopping a running loop is not).
    signal?.throwIfAborted();
    if (this.running) throw new IllegalStateError(`leader selector ${this.path} is already running`);
    this.running = true;
    try {
      for (;;) {
        signal?.throwIfAborted();
        const latch = new LeaderLatch(this.session, this.path, this.options);
        this.latch = latch;
        if (onError) latch.on('error', onError);
        latch.start();
        let ranTerm = false;
        let link: LinkedSignal | undefined;
        try {
          await latch.awaitLeadership({ signal });
          const term = latch.leadershipSignal;
          const fencingToken = latch.fencingToken;
          // Lost again before we looked: wait for the next election rather than skip the term.
          if (term && fencingToken !== undefined) {
            ranTerm = true;
            // Ends with the term (AbortSignal.any would stay in the caller's signal while it lives).
            link = signal ? linkSignals([term, signal]) : undefined;
            const termSignal = link?.signal ?? term;
            await fn(termSignal, { signal: termSignal, fencingToken });
          }
        } finally {
          await latch.close();
          link?.dispose();
          this.latch = undefined;
        }
        if (ranTerm && !requeue) return;
        if (this.closed) return;
      }
    } catch (err) {
      // Stopping is how a requeue loop ends; close() ends any run.
      if (this.closed && err instanceof ClosedError) return;
      if (requeue && signal?.aborted && err === signal.reason) return;
      throw err;
    } finally {
      this.running = false;
    }
  }

  /** Whether this participant is leader right now. */
  get hasLeadership(): boolean {
    return this.latch?.hasLeadership ?? false;
  }

  /**
   * The participants in queue order, the leader first. Rejects with `ClosedError` after
   * `close()`, `OperationTimeoutError` after `timeoutMs`, or the signal's reason when it aborts.
   */
  async participants(options: WaitOptions = {}): Promise<LeaderParticipant[]> {
    if (this.closed) throw new ClosedError(`leader selector ${this.path} is closed`);
    return new LeaderLatch(this.session, this.path, this.options).participants(options);
  }

  /** Stops: a running term's signal aborts, no further terms; our node is deleted. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.latch?.close();
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
