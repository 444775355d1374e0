/**
 * {@link LockRecipe}: the acquire / tryAcquire / runExclusive / participants / close shape shared
 * by every lock-like recipe. Subclasses only choose the lock name and predicate.
 *
 * @module
 */
import { hostname } from 'node:os';
import { Mutex as AsyncMutex } from 'async-mutex';
import { EventEmitter } from 'eventemitter3';
import type { ZkSession } from '../client/session.js';
import type { WaitOptions } from '../client/lifecycle.js';
import { boundedCall } from '../client/bounded.js';
import type { Acl, ConnectionState, Stat } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { checkBoolean, checkFunction, checkOptionalFunction, checkOptions, checkSignal, checkTimeout, describe, MAX_TIMER_MS, optionKeys, validatePath } from '../client/validate.js';
import { ClosedError, InvalidArgumentError, LockLostError, LockTimeoutError, NoNodeError, NotHeldError, type LayoutMismatchError } from '../errors.js';
import { linkSignals, ownedController, type LinkedSignal } from '../util/signals.js';
import { acquireTracing, points, type AcquireContext, type AcquireMode, type AcquireProgress, type AcquireRecipe } from '../observability/channels.js';
import { placeReporter } from './progress.js';
import { traceAcquire } from '../observability/trace.js';
import { LockHandle } from './handle.js';
import { LockDriver, type AcquireRequest, type HeldNodes, type InPlaceOf, type LockSpec } from './lock-driver.js';
import type { QueueNode } from './names.js';
import { layoutsOf, refuseForeign, type LayoutId } from './layouts.js';
import { ParentReaper } from './reaper.js';

/** Options shared by every lock-like recipe. @group Recipes */
export interface LockOptions {
  /** Stored as our nodes' data and shown by `participants()`. Default `hostname:pid`. */
  participantId?: string;
  /**
   * Also watch our own node while waiting and holding, so that its deletion by someone else (an
   * operator, a buggy tool) aborts the handle's signal at once. Costs one read and one watch
   * notification per acquisition, so it is off by default: loss of the session (the usual way a
   * lock is lost) aborts the signal anyway, `handle.multi()` checks the node, and fencing tokens
   * protect the resource. Default false.
   */
  watchOwnNode?: boolean;
  /**
   * Also delete the lock's directory from this client once it has stayed empty this long after
   * a release, ms: from 0 to 2^31-1 (what a timer can wait), or `Infinity` (default). The
   * directory is a container node, which the server deletes some time after it is empty (its
   * container check runs every minute by default); this only makes it sooner.
   */
  reapParentAfterMs?: number;
  /**
   * When a held lock's signal aborts because of the connection. `'lost'` (default): at `LOST`,
   * which comes before the server can expire the session (so before anyone else can be
   * granted); a suspension that ends in `RECONNECTED` keeps the lock, and only `suspended` is
   * emitted. `'suspended'` (Curator's standard `ConnectionStateErrorPolicy`): already at
   * `SUSPENDED`, with a {@link LockLostError} saying the lock *may* be lost; the lock is then
   * given up (our node is deleted once the session is back, or goes with it). Choose it when
   * work must stop the moment the connection is in doubt, e.g. writes to a resource that cannot
   * check fencing tokens.
   */
  lossPolicy?: LossPolicy;
  /**
   * ACL of the nodes this recipe creates (its lock nodes and the directories above them);
   * default: the session's `aclProvider` (the open ACL without one). E.g. `CREATOR_ALL_ACL`
   * with a session that has digest `auth`: other identities can then neither delete our nodes
   * nor queue behind them. See [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** The keys of {@link LockOptions}. @internal */
export const LOCK_OPTION_KEYS = optionKeys<LockOptions>({ participantId: true, watchOwnNode: true, reapParentAfterMs: true, lossPolicy: true, acl: true });

/** When a held lock's signal aborts because of the connection; see {@link LockOptions.lossPolicy}. @group Recipes */
export type LossPolicy = 'lost' | 'suspended';

/**
 * Options of a blocking acquisition. Both are honoured also in an outage and after a lost reply:
 * the call settles within a second of the deadline (or abort), and our node is deleted before
 * it settles while connected, else once the server is back (or it goes with its session).
 * @group Recipes
 */
export interface AcquireOptions {
  /** Give up after this many ms with {@link LockTimeoutError}. Default: wait without limit. */
  timeoutMs?: number;
  /** Give up when this aborts, rejecting with its reason. */
  signal?: AbortSignal;
  /**
   * Called while waiting, each time our place in the queue changes: how many nodes are ahead
   * and who holds (the first node's participant id, read once per holder: without this option
   * nothing is read for it). Not called for a grant at once. A throw is ignored.
   */
  onProgress?: (progress: AcquireProgress) => void;
}

/** The keys of {@link AcquireOptions}. @internal */
export const ACQUIRE_OPTION_KEYS = optionKeys<AcquireOptions>({ timeoutMs: true, signal: true, onProgress: true });

/**
 * Options of a try-once acquisition (`tryAcquire`). It never waits for the lock; it waits for a
 * connection at most the session's connect timeout (then rejects with `ConnectionLossError`,
 * nothing sent), and for its requests' answers.
 * @group Recipes
 */
export interface TryAcquireOptions {
  /** Give up when this aborts, rejecting with its reason; our node, if created, is deleted. */
  signal?: AbortSignal;
}

/** The keys of {@link TryAcquireOptions}. @internal */
export const TRY_ACQUIRE_OPTION_KEYS = optionKeys<TryAcquireOptions>({ signal: true });

/** A node in a lock's queue, as `participants()` reports it. @group Recipes */
export interface Participant {
  /** The participant id stored in the node (the `participantId` option). */
  id: string;
  /** Full path of the node. */
  path: string;
  /** The node's own czxid. */
  czxid: bigint;
  /**
   * The fencing token its holder gets: the node's czxid, except for a read-write lock's
   * downgrade read node, which carries the token of the write node whose place it took. That
   * is known here only while the write node is still queued; once it is released ZooKeeper
   * keeps no trace of it, and this is the read node's own (newer) czxid. The holder's
   * `handle.fencingToken` is always right.
   */
  fencingToken: bigint;
  /** Whether this node currently holds (a lease of) the lock. */
  isHolder: boolean;
}

/** Typed events of lock-like recipes. @group Recipes */
export interface LockEvents {
  /** A lock was granted to this instance. */
  acquired: (handle: LockHandle) => void;
  /** A handle of this instance was released. */
  released: (handle: LockHandle) => void;
  /** A held lock was lost (its handle's signal aborted with `error`). */
  lost: (handle: LockHandle, error: LockLostError) => void;
  /** The session was suspended while this instance held locks: they may be lost. */
  suspended: () => void;
  /** The session reconnected (same session) while this instance held locks: still held. */
  reconnected: () => void;
}

/** Base of every lock-like recipe. @internal */
export abstract class LockRecipe extends EventEmitter<LockEvents> {
  /** The lock's directory. */
  readonly path: string;
  protected readonly driver: LockDriver;
  private readonly reaper: ParentReaper;
  private readonly data: Buffer;
  private readonly watchOwnNode: boolean;
  private readonly lossPolicy: LossPolicy;
  private readonly held = new Set<LockHandle>();
  private readonly state = new AsyncMutex();
  private readonly closeController = ownedController();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly onState: (s: ConnectionState) => void;
  private closing: Promise<void> | undefined;
  /** Whether this instance ever tried to acquire (so its directories may exist because of it). */
  private used = false;
  /** The layouts of this recipe's nodes under its path: other recipes' nodes there are refused. */
  protected readonly ownLayouts: readonly LayoutId[];
  /** How its acquisitions are named on the diagnostics channels. */
  private readonly traceAs: { readonly recipe: AcquireRecipe; readonly mode: AcquireMode };
  private readonly participantId: string;
  /** The `acl` option (undefined: the session's provider). */
  protected readonly acl: readonly Acl[] | undefined;

  protected constructor(
    protected readonly session: ZkSession,
    path: string,
    spec: LockSpec,
    options: LockOptions,
    private readonly what: string,
    /** The keys `options` may have (a subclass's options add to {@link LOCK_OPTION_KEYS}). */
    optionNames: readonly string[] = LOCK_OPTION_KEYS,
  ) {
    super();
    if (session === null || typeof session !== 'object' || typeof (session as Partial<ZkSession>).createWithStat !== 'function') {
      throw new InvalidArgumentError(`${what}: session must be a ZkSession, got ${describe(session)}`);
    }
    validatePath(path, `${what} path`);
    if (path === '/') throw new InvalidArgumentError(`${what} path must not be the root`);
    checkOptions(options, `new ${constructorName(what)}`, optionNames);
    if (options.participantId !== undefined && typeof options.participantId !== 'string') {
      throw new InvalidArgumentError(`participantId must be a string, got ${describe(options.participantId)}`);
    }
    const grace = options.reapParentAfterMs === undefined ? Infinity : options.reapParentAfterMs;
    if (typeof grace !== 'number' || !(grace === Infinity || (grace >= 0 && grace <= MAX_TIMER_MS))) {
      throw new InvalidArgumentError(`reapParentAfterMs must be a number of ms from 0 to ${MAX_TIMER_MS} (the longest a timer can wait), or Infinity, got ${describe(grace)}`);
    }
    this.path = path;
    this.participantId = options.participantId ?? `${hostname()}:${process.pid}`;
    this.data = Buffer.from(this.participantId);
    this.traceAs = traceNames(what);
    if (this.data.length > session.dataLimit) throw new InvalidArgumentError(`participantId is ${this.data.length} bytes, over the session's ${session.dataLimit}-byte limit`);
    this.watchOwnNode = checkBoolean(options.watchOwnNode, 'watchOwnNode', false);
    const lossPolicy = options.lossPolicy === undefined ? 'lost' : options.lossPolicy;
    if (lossPolicy !== 'lost' && lossPolicy !== 'suspended') throw new InvalidArgumentError(`lossPolicy must be 'lost' or 'suspended', got ${describe(lossPolicy)}`);
    this.lossPolicy = lossPolicy;
    this.acl = optionalAcl(options.acl, constructorName(what));
    this.driver = new LockDriver(session, path, { ...spec, acl: this.acl });
    this.ownLayouts = layoutsOf(spec.lockName);
    this.reaper = new ParentReaper(session, grace);
    this.onState = (s) => {
      if (this.held.size === 0) return;
      if (s === 'SUSPENDED') {
        if (this.lossPolicy === 'suspended') for (const h of this.held) h.relinquish('the connection was suspended, so the lock may be lost (lossPolicy "suspended")');
        this.emit('suspended');
      } else if (s === 'RECONNECTED') this.emit('reconnected');
    };
    session.on('state', this.onState);
  }

  /**
   * Called with the directory's Stat and children on the first listing after our node was
   * created (of every acquisition: participants come and go): another recipe's nodes there are
   * refused with {@link LayoutMismatchError}; semaphores also verify `maxLeases`, and a mutex
   * that no semaphore of more leases records its limit there.
   */
  protected checkDirectory(_stat: Stat, children: readonly string[]): Promise<void> | void {
    refuseForeign(this.what, this.path, children, this.ownLayouts);
  }

  /**
   * Enters the queue and waits for a grant (null: not granted in time). A layout with its own
   * protocol (Curator's `InterProcessSemaphoreV2`) overrides it.
   */
  protected enter(req: AcquireRequest): Promise<HeldNodes | null> {
    return this.driver.acquire(req);
  }

  /** {@link checkDirectory} as every acquisition passes it on, made once. */
  private readonly onFirstListing = (stat: Stat, children: readonly string[]): Promise<void> | void => this.checkDirectory(stat, children);

  /**
   * The directories this recipe creates, deepest first: reaped once unused, removed (if empty)
   * on close. A layout with subdirectories lists them before `path`.
   */
  /** Resolves once the deletions left running by acquisitions that gave up have ended. */
  protected idle(): Promise<void> {
    return this.driver.idle();
  }

  protected directories(): readonly string[] {
    return [this.path];
  }

  /** The driver of the directory whose nodes `participants()` reports. */
  protected get queueDriver(): LockDriver {
    return this.driver;
  }

  /** Whether the node at `index` of the sorted queue holds (for participants()). */
  protected abstract holds(queue: readonly QueueNode[], index: number): boolean;

  /** Index of the node whose czxid is the fencing token of the node at `index` (participants()). */
  protected tokenNodeAt(_queue: readonly QueueNode[], index: number): number {
    return index;
  }

  /**
   * Acquires `count` adjacent nodes; the shared body of every recipe's `acquire`. With
   * `inPlaceOf`, one node in that held node's place, or {@link LockLostError} once it is gone.
   */
  protected acquireNodes(count: number, options: AcquireOptions | TryAcquireOptions | undefined, tryOnce: boolean, inPlaceOf?: InPlaceOf): Promise<LockHandle | null> {
    let opts: AcquireOptions, timeoutMs: number | undefined, userSignal: AbortSignal | undefined, onProgress: AcquireOptions['onProgress'];
    try {
      opts = tryOnce ? checkOptions(options, 'tryAcquire', TRY_ACQUIRE_OPTION_KEYS) : checkOptions(options, 'acquire', ACQUIRE_OPTION_KEYS);
      timeoutMs = tryOnce ? 0 : checkTimeout(opts.timeoutMs);
      userSignal = checkSignal(opts.signal);
      onProgress = checkOptionalFunction(opts.onProgress, 'onProgress');
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    const { recipe, mode } = this.traceAs;
    const startedAt = performance.now();
    return traceAcquire(
      acquireTracing[recipe],
      (): AcquireContext => ({ recipe, mode, path: this.path, participantId: this.participantId, sessionId: this.session.sessionId, timeoutMs: tryOnce ? undefined : timeoutMs, nonblocking: tryOnce, leases: count }),
      startedAt,
      userSignal,
      // Not async: a waiting acquisition keeps no suspended frame here.
      (ctx) => this.acquireChecked(count, timeoutMs, userSignal, tryOnce, inPlaceOf, ctx, onProgress, startedAt),
      (ctx, handle) => (ctx.outcome = handle ? 'acquired' : 'miss'),
    );
  }

  /**
   * Not async: a reaction on the attempt, not a suspended frame, is what a waiting acquisition
   * keeps here (about 300 bytes less per waiter).
   */
  private acquireChecked(
    count: number,
    timeoutMs: number | undefined,
    userSignal: AbortSignal | undefined,
    tryOnce: boolean,
    inPlaceOf: InPlaceOf | undefined,
    ctx: AcquireContext | undefined,
    onProgress: AcquireOptions['onProgress'],
    startedAt: number,
  ): Promise<LockHandle | null> {
    this.used = true;
    for (const dir of this.directories()) this.reaper.cancel(dir);
    // Not AbortSignal.any: Node 20 keeps each composite in both sources until they are gone.
    // Without a caller's signal, the close signal itself (the driver subscribes through onAbort).
    const link = userSignal ? linkSignals([userSignal, this.closeController.signal]) : undefined;
    let attempt: Promise<HeldNodes | null>;
    try {
      attempt = this.enter({
        timeoutMs,
        signal: link ? link.signal : this.closeController.signal,
        count,
        data: this.data,
        watchOwnNode: this.watchOwnNode,
        onListing: this.onFirstListing,
        inPlaceOf,
        onPlace: placeReporter(this.session, this.traceAs, this.path, ctx, onProgress, link ? link.signal : this.closeController.signal),
      });
    } catch (err) {
      // As an async function would: a rejection, never a throw out of acquire().
      link?.dispose();
      return Promise.reject(err);
    }
    this.pending.add(attempt);
    return attempt.then(
      (held) => {
        this.attemptEnded(attempt, link);
        return this.handOut(held, tryOnce, timeoutMs, ctx, startedAt);
      },
      (err: unknown) => {
        this.attemptEnded(attempt, link);
        if (this.closeController.signal.aborted && !userSignal?.aborted) throw new ClosedError(`${this.what} ${this.path} was closed while acquiring`, { cause: err });
        throw err;
      },
    );
  }

  /** An attempt settled: it is no longer pending, and its linked signal goes. */
  private attemptEnded(attempt: Promise<HeldNodes | null>, link: LinkedSignal | undefined): void {
    link?.dispose();
    this.pending.delete(attempt);
  }

  /**
   * A grant (or none) becomes a handle this instance tracks. Not async: returned from the
   * attempt's reaction, a handle settles the acquisition in that same reaction.
   */
  private handOut(held: HeldNodes | null, tryOnce: boolean, timeoutMs: number | undefined, ctx: AcquireContext | undefined, startedAt: number): LockHandle | null | Promise<never> {
    if (!held) {
      if (tryOnce) {
        if (points.lockMiss.hasSubscribers) points.lockMiss.publish({ ...this.traceAs, path: this.path, participantId: this.participantId, sessionId: this.session.sessionId });
        return null;
      }
      throw new LockTimeoutError(`could not acquire ${this.what} ${this.path} within ${timeoutMs} ms`, { path: this.path });
    }
    const handle = new LockHandle(this.session, held, {
      release: (h, nodes) => this.releaseHandle(h, nodes),
      lost: (h, reason, why) => {
        if (points.lockLost.hasSubscribers) {
          const { recipe, mode } = this.traceAs;
          points.lockLost.publish({ recipe, mode, path: this.path, nodePath: h.path, fencingToken: h.fencingToken, sessionId: h.sessionId, reason: why, error: reason, holdMs: performance.now() - h.grantedAt });
        }
        this.emit('lost', h, reason);
      },
    });
    if (ctx) {
      ctx.nodePath = handle.path;
      ctx.fencingToken = handle.fencingToken;
    }
    // Synchronous, so atomic: close() sets `closing` before it takes its snapshot of `held`.
    const accepted = !this.closing;
    if (accepted) this.held.add(handle);
    if (!accepted) {
      return handle
        .release()
        .catch(() => undefined)
        .then(() => {
          throw new ClosedError(`${this.what} ${this.path} was closed while acquiring`);
        });
    }
    if (points.lockGranted.hasSubscribers) {
      const { recipe, mode } = this.traceAs;
      points.lockGranted.publish({ recipe, mode, path: this.path, nodePath: handle.path, fencingToken: handle.fencingToken, sessionId: handle.sessionId, participantId: this.participantId, waitMs: performance.now() - startedAt });
    }
    this.emit('acquired', handle);
    return handle;
  }

  private async releaseHandle(handle: LockHandle, nodes: HeldNodes): Promise<boolean> {
    // A handle ends once on the channels: released, or lost (published when it was lost, or
    // by the handle when the release finds our node already gone).
    const lostBefore = handle.wasLost;
    const deleted = await this.driver.release(nodes.paths, nodes.sessionSignal, nodes.markRelease);
    this.held.delete(handle);
    for (const dir of this.directories()) this.reaper.touch(dir);
    if (deleted && !lostBefore && points.lockReleased.hasSubscribers) {
      const { recipe, mode } = this.traceAs;
      points.lockReleased.publish({ recipe, mode, path: this.path, nodePath: handle.path, fencingToken: handle.fencingToken, sessionId: handle.sessionId, holdMs: performance.now() - handle.grantedAt });
    }
    this.emit('released', handle);
    return deleted;
  }

  /**
   * The body of every recipe's `runExclusive`: checks `fn` and `options` before anything is
   * sent, then acquires with `acquire`, runs `fn` and releases (see {@link runWith}).
   */
  protected async runExclusively<T>(
    fn: (signal: AbortSignal, handle: LockHandle) => T | Promise<T>,
    options: AcquireOptions | undefined,
    acquire: (options: AcquireOptions | undefined) => Promise<LockHandle>,
  ): Promise<T> {
    checkFunction(fn, 'runExclusive: fn');
    const opts = checkOptions(options, 'runExclusive', ACQUIRE_OPTION_KEYS);
    checkTimeout(opts.timeoutMs);
    checkSignal(opts.signal);
    return this.runWith(await acquire(options), fn);
  }

  /**
   * Runs `fn` while holding the lock and releases it afterwards, whatever happens. `fn` gets the
   * handle's signal, which aborts if the lock is lost meanwhile. Rejects with what `fn` threw,
   * else with the {@link LockLostError} if the lock was lost before `fn` finished (its result may
   * have been produced without exclusion).
   */
  protected runWith<T>(handle: LockHandle, fn: (signal: AbortSignal, handle: LockHandle) => T | Promise<T>): Promise<T> {
    return runHolding(handle, fn);
  }

  /**
   * Holders and waiters in queue order, with their participant ids and czxids. Rejects with
   * `OperationTimeoutError` after `timeoutMs`, or the signal's reason when it aborts.
   */
  async participants(options: WaitOptions = {}): Promise<Participant[]> {
    this.assertOpen();
    const driver = this.queueDriver;
    return boundedCall(options, 'participants', driver.dir, async (signal) => {
      const queue = await driver.queue(signal);
      const nodes = await Promise.all(
        queue.map((n) =>
          this.session.getData(`${driver.dir}/${n.name}`, { signal }).then(
            (d) => ({ id: d.data.toString('utf8'), path: `${driver.dir}/${n.name}`, czxid: d.stat.czxid }),
            (err: unknown) => {
              if (err instanceof NoNodeError) return undefined;
              throw err;
            },
          ),
        ),
      );
      return nodes.flatMap((n, i) => (n ? [{ ...n, fencingToken: nodes[this.tokenNodeAt(queue, i)]?.czxid ?? n.czxid, isHolder: this.holds(queue, i) }] : []));
    });
  }

  /** Handles of this instance that are currently held. */
  get heldHandles(): readonly LockHandle[] {
    return [...this.held];
  }

  /**
   * Releases everything this instance holds, gives up its pending acquisitions (they reject with
   * {@link ClosedError}) and removes its nodes and watches. Idempotent; the session stays open.
   * Never waits for a server that is gone: nodes of a session that is `LOST` went with it; a
   * merely suspended session is waited for until it is back or `LOST`.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const handles = await this.state.runExclusive(() => {
        this.closeController.abort(new ClosedError(`${this.what} ${this.path} closed`));
        return [...this.held];
      });
      await Promise.all([...handles.map((h) => h[Symbol.asyncDispose]()), ...handles.map((h) => h.whenReleased()), ...[...this.pending].map((p) => p.catch(() => undefined))]);
      // Deletions left running by acquisitions that gave up (each ends with its session at the latest).
      await this.idle();
      this.reaper.stop();
      // Best effort: the directories go if nobody else uses them (others re-create them on demand).
      // An instance that never acquired created none of them: nothing to send.
      if (this.used) for (const dir of this.directories()) await this.reaper.removeNow(dir);
      this.session.off('state', this.onState);
    })();
    return this.closing;
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  protected assertOpen(): void {
    if (this.closing) throw new ClosedError(`${this.what} ${this.path} is closed`);
    if (this.session.closed) throw new ClosedError(`the session of ${this.what} ${this.path} is closed`);
  }
}

/**
 * Runs `fn` with a held handle and releases it afterwards, whatever happens (the body of every
 * `runExclusive`). Rejects with what `fn` threw, else with the loss if the handle was lost
 * before `fn` finished.
 * @internal
 */
export async function runHolding<H extends { readonly signal: AbortSignal; release(): Promise<void> }, T>(handle: H, fn: (signal: AbortSignal, handle: H) => T | Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await fn(handle.signal, handle);
  } finally {
    // A lost lock's release rejects with NotHeldError: the loss is reported below instead.
    await handle.release().catch((err: unknown) => {
      if (!(err instanceof NotHeldError)) throw err;
    });
  }
  // The signal aborts only on loss, never on release.
  if (handle.signal.aborted) throw handle.signal.reason;
  return result;
}

/** The names a recipe's `what` traces its acquisitions under. */
function traceNames(what: string): { recipe: AcquireRecipe; mode: AcquireMode } {
  switch (what) {
    case 'semaphore':
      return { recipe: 'semaphore', mode: 'shared' };
    case 'read lock':
      return { recipe: 'rwlock', mode: 'read' };
    case 'write lock':
      return { recipe: 'rwlock', mode: 'write' };
    default:
      return { recipe: 'mutex', mode: 'exclusive' };
  }
}

/** The class a recipe's `what` names, for messages: `mutex` → `Mutex`, `read lock` → `ReadWriteLock`. */
function constructorName(what: string): string {
  switch (what) {
    case 'mutex':
      return 'Mutex';
    case 'semaphore':
      return 'Semaphore';
    case 'read lock':
    case 'write lock':
      return 'ReadWriteLock';
    default:
      return what;
  }
}
