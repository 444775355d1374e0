/**
 * {@link AtomicNumber}: a signed 64-bit number at one znode, changed by optimistic
 * compare-and-set (Curator's `DistributedAtomicLong`, same node, same encoding), optionally
 * promoted to a mutex when the optimistic attempts keep losing.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Acl, Stat } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { backoffDelay, resolveBackoff } from '../client/retry.js';
import { checkInt, checkKeys, checkOptions, checkSignal, checkTimeout, describe, parentOf, validatePath } from '../client/validate.js';
import {
  BadVersionError,
  ClosedError,
  ConnectionLossError,
  IllegalStateError,
  InvalidArgumentError,
  LockTimeoutError,
  NodeExistsError,
  NoNodeError,
  OutcomeUnknownError,
  RetriesExhaustedError,
  SessionExpiredError,
} from '../errors.js';
import { Mutex } from '../mutex/mutex.js';
import { delay } from '../util/abort.js';
import { linkSignals, onAbort, ownedController } from '../util/signals.js';
import { decodeLong, encodeLong, MAX_LONG, MIN_LONG, toLong } from './codec.js';
import { ATOMIC_CALL_OPTION_KEYS, ATOMIC_NUMBER_OPTION_KEYS, ATOMIC_RETRY_KEYS, PROMOTE_TO_LOCK_KEYS, type AtomicCallOptions, type AtomicNumberOptions, type AtomicStats, type AtomicValue } from './types.js';

export type { AtomicCallOptions, AtomicNumberOptions, AtomicRetryOptions, AtomicStats, AtomicValue, PromoteToLockOptions } from './types.js';

const DEFAULT_BACKOFF = { baseDelayMs: 10, maxDelayMs: 1000 };
const DEFAULT_MAX_RETRIES = 10;

/** A value read, with the version to write it back at; null for a missing node. */
type Read = { value: bigint; version: number } | null;

interface MutableStats {
  optimisticTries: number;
  promotedTries: number;
  optimisticTimeMs: number;
  promotedTimeMs: number;
}

/** Marks a write that was still in flight when its caller gave up. */
const IN_FLIGHT = Symbol('in flight');

/**
 * A signed 64-bit number at one znode, shared by every participant, in Apache Curator's
 * `DistributedAtomicLong` layout: the node's data is the value, 8 bytes, big-endian, signed, so
 * a Curator `DistributedAtomicLong` on the same path shares it (and a `PromotedToLock` on the
 * same lock path excludes ours).
 *
 * - **Optimistic**: an update reads the value and writes the new one at the version it read; a
 *   write that lost the race (the version moved) is tried again after a jittered backoff, up to
 *   `retry.maxRetries` times. Then, with `promoteToLock`, it takes a {@link Mutex} on `lockPath`
 *   and tries again under it (still by version: Curator's optimistic writers do not take the
 *   lock). Running out of attempts rejects with {@link RetriesExhaustedError}, and nothing of
 *   the call was applied: unlike Curator, an update never resolves with `succeeded: false`.
 * - **A write whose reply was lost** (the connection dropped after it was sent, the session
 *   ended with it in flight, or the caller's timeout or signal fired while it was in flight)
 *   rejects with {@link OutcomeUnknownError}: it may have been applied, and trying it again could
 *   apply an `add` twice, so it is not. Read the value to decide. Every other rejection means
 *   nothing of the call was applied.
 * - A missing node is created by the first update (missing parents as containers), as Curator
 *   does; `get()` reads a missing node as 0. Empty data reads as 0 (Curator's reading); data of
 *   another size than 8 bytes rejects with `CorruptValueError`.
 * - Values are `bigint`s in the signed 64-bit range; a `number` must be a safe integer. An
 *   update that would leave the range is refused with `InvalidArgumentError` (Curator's wraps).
 * - `get()` syncs with the ensemble's leader first, so it sees every update acknowledged
 *   before it was called, whichever member this session reads from.
 * - The node's version wraps to -1 after 2^32 writes, which ZooKeeper reads as "any version":
 *   an update that reads version -1 refuses with `IllegalStateError` rather than write
 *   unconditionally (a `forceSet` moves the version on).
 *
 * Guide: [Atomic numbers](../../docs/recipes/atomic.md).
 *
 * @example
 * ```ts
 * import { AtomicNumber } from 'zk-recipes';
 *
 * const orders = new AtomicNumber(session, '/counters/orders', { promoteToLock: { lockPath: '/counters/orders-lock' } });
 * const { postValue } = await orders.increment({ timeoutMs: 5000 });
 * console.log('order number', postValue.toString());
 * ```
 * @group Recipes
 */
export class AtomicNumber implements AsyncDisposable {
  /** The node's path. */
  readonly path: string;
  readonly #session: ZkSession;
  readonly #acl: readonly Acl[] | undefined;
  readonly #maxRetries: number;
  readonly #backoff: { baseDelayMs: number; maxDelayMs: number };
  readonly #mutex: Mutex | undefined;
  readonly #lockTimeoutMs: number | undefined;
  readonly #life = ownedController();

  /** Creates the recipe on `path` (nothing is sent until a call). */
  constructor(session: ZkSession, path: string, options: AtomicNumberOptions = {}) {
    if (session === null || typeof session !== 'object') throw new InvalidArgumentError(`new AtomicNumber: session must be a ZkSession, got ${describe(session)}`);
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError('new AtomicNumber: the path must not be the root', { path });
    const o = checkOptions(options, 'new AtomicNumber', ATOMIC_NUMBER_OPTION_KEYS);
    if (o.retry !== undefined && (o.retry === null || typeof o.retry !== 'object' || Array.isArray(o.retry))) {
      throw new InvalidArgumentError(`new AtomicNumber: retry must be an object { maxRetries?, baseDelayMs?, maxDelayMs? }, got ${describe(o.retry)}`);
    }
    this.#backoff = resolveBackoff(o.retry, 'retry', DEFAULT_BACKOFF, ATOMIC_RETRY_KEYS);
    this.#maxRetries = checkInt(o.retry?.maxRetries, 'retry.maxRetries', 0, 1000, DEFAULT_MAX_RETRIES);
    const p = o.promoteToLock;
    if (p !== undefined) {
      if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new InvalidArgumentError(`new AtomicNumber: promoteToLock must be an object { lockPath, timeoutMs? }, got ${describe(p)}`);
      checkKeys(p, 'promoteToLock', PROMOTE_TO_LOCK_KEYS);
      validatePath(p.lockPath, 'promoteToLock.lockPath');
      if (p.lockPath === path) throw new InvalidArgumentError(`new AtomicNumber: promoteToLock.lockPath must not be the number's own path ${path}`, { path });
      this.#lockTimeoutMs = checkTimeout(p.timeoutMs, 'promoteToLock.timeoutMs');
    }
    this.#acl = optionalAcl(o.acl, 'AtomicNumber');
    this.#session = session;
    this.path = path;
    this.#mutex = p === undefined ? undefined : new Mutex(session, p.lockPath, { acl: this.#acl });
  }

  /** The smallest value an atomic number holds (-2^63). */
  static readonly MIN_VALUE = MIN_LONG;
  /** The largest value an atomic number holds (2^63 - 1). */
  static readonly MAX_VALUE = MAX_LONG;

  /** Reads the value (after a `sync`: it includes every update acknowledged before the call); a missing node is 0. */
  async get(options?: AtomicCallOptions): Promise<AtomicValue> {
    const started = performance.now();
    return this.#run('get', options, async (signal) => {
      await this.#reading(() => this.#session.sync(this.path, { signal }), signal);
      const read = await this.#read(signal);
      const value = read?.value ?? 0n;
      return result(true, value, value, { optimisticTries: 1, promotedTries: 0, optimisticTimeMs: performance.now() - started, promotedTimeMs: 0 });
    });
  }

  /** Adds 1; resolves to the value before and after. See {@link AtomicNumber.add}. */
  increment(options?: AtomicCallOptions): Promise<AtomicValue> {
    return this.#add(1n, 'increment', options);
  }

  /** Subtracts 1; resolves to the value before and after. See {@link AtomicNumber.add}. */
  decrement(options?: AtomicCallOptions): Promise<AtomicValue> {
    return this.#add(-1n, 'decrement', options);
  }

  /**
   * Adds `delta` (a bigint or a safe integer) and resolves to the value before and after.
   * Rejects with {@link RetriesExhaustedError} when every attempt lost the race (nothing
   * applied), {@link OutcomeUnknownError} when a write's reply was lost (it may have been
   * applied), `InvalidArgumentError` when the sum would leave the signed 64-bit range.
   */
  add(delta: bigint | number, options?: AtomicCallOptions): Promise<AtomicValue> {
    return this.#add(delta, 'add', options);
  }

  /** Subtracts `delta`; see {@link AtomicNumber.add}. */
  subtract(delta: bigint | number, options?: AtomicCallOptions): Promise<AtomicValue> {
    let d: bigint;
    try {
      d = toLong(delta, 'subtract: delta', this.path);
    } catch (err) {
      return Promise.reject(err);
    }
    // -(-2^63) is outside the range; the sum check below catches every other overflow.
    if (d === MIN_LONG) return Promise.reject(new InvalidArgumentError(`subtract: delta for ${this.path}: ${d} cannot be negated in the signed 64-bit range`, { path: this.path }));
    return this.#add(-d, 'subtract', options);
  }

  /**
   * Sets `newValue` only if the value is `expected` now: one read, one write at the version
   * read. Resolves with `succeeded: false` (and the value found as `preValue` and `postValue`)
   * when the value differs, the node is missing (as Curator, it is not created), or another
   * write came between the read and the write.
   */
  compareAndSet(expected: bigint | number, newValue: bigint | number, options?: AtomicCallOptions): Promise<AtomicValue> {
    let want: bigint, next: bigint;
    try {
      want = toLong(expected, 'compareAndSet: expected', this.path);
      next = toLong(newValue, 'compareAndSet: newValue', this.path);
    } catch (err) {
      return Promise.reject(err);
    }
    const started = performance.now();
    return this.#run('compareAndSet', options, async (signal) => {
      const read = await this.#read(signal);
      const stats = (): AtomicStats => ({ optimisticTries: 1, promotedTries: 0, optimisticTimeMs: performance.now() - started, promotedTimeMs: 0 });
      const found = read?.value ?? 0n;
      if (read === null || found !== want) return result(false, found, found, stats());
      try {
        await this.#setAt(encodeLong(next), read.version, signal);
      } catch (err) {
        if (err instanceof BadVersionError || err instanceof NoNodeError) return result(false, found, found, stats());
        throw err;
      }
      return result(true, found, next, stats());
    });
  }

  /**
   * Sets `value` whatever the value is, by the same optimistic loop as an update (so a write
   * that lost the race is tried again, and promoted to the lock if configured); rejects with
   * {@link RetriesExhaustedError} when every attempt lost.
   */
  trySet(value: bigint | number, options?: AtomicCallOptions): Promise<AtomicValue> {
    let v: bigint;
    try {
      v = toLong(value, 'trySet: value', this.path);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#update('trySet', () => v, options);
  }

  /**
   * Writes `value` unconditionally (creating the node and its parents if missing). Rejects with
   * {@link OutcomeUnknownError} when the reply was lost.
   */
  forceSet(value: bigint | number, options?: AtomicCallOptions): Promise<void> {
    let data: Buffer;
    try {
      data = encodeLong(toLong(value, 'forceSet: value', this.path));
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#run('forceSet', options, async (signal) => {
      // Deleted between our write and our create, again and again: backs off, ends with the call.
      for (let attempt = 0; ; attempt++) {
        try {
          await this.#setAt(data, -1, signal);
          return;
        } catch (err) {
          if (!(err instanceof NoNodeError)) throw err;
        }
        if (await this.#create(data, signal)) return;
        await delay(backoffDelay(this.#backoff, attempt), signal);
      }
    });
  }

  /**
   * Creates the node with `value` if it does not exist (parents too). Resolves to true if this
   * call created it, false if it existed. Rejects with {@link OutcomeUnknownError} when the
   * reply was lost.
   */
  initialize(value: bigint | number, options?: AtomicCallOptions): Promise<boolean> {
    let data: Buffer;
    try {
      data = encodeLong(toLong(value, 'initialize: value', this.path));
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#run('initialize', options, async (signal) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.#create(data, signal, true);
        } catch (err) {
          // A parent container reaped between its creation and ours: again.
          if (!(err instanceof NoNodeError)) throw err;
        }
        await delay(backoffDelay(this.#backoff, attempt), signal);
      }
    });
  }

  /** Ends the recipe: later calls reject with `ClosedError`, calls under way are aborted. Idempotent. */
  async close(): Promise<void> {
    if (this.#life.signal.aborted) return;
    this.#life.abort(new ClosedError(`the atomic number at ${this.path} was closed`, { path: this.path }));
    await this.#mutex?.close();
  }

  /** `await using n = new AtomicNumber(...)` closes it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #add(delta: bigint | number, op: string, options: AtomicCallOptions | undefined): Promise<AtomicValue> {
    let d: bigint;
    try {
      d = toLong(delta, `${op}: delta`, this.path);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#update(op, (prev) => {
      const next = prev + d;
      if (next < MIN_LONG || next > MAX_LONG) throw new InvalidArgumentError(`${op} of ${this.path}: ${prev} + ${d} is outside the signed 64-bit range; nothing was written`, { path: this.path });
      return next;
    }, options);
  }

  /** Validates the call's options and runs `fn` with one signal for the caller's deadline, signal and `close()`. */
  async #run<T>(op: string, options: AtomicCallOptions | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const o = checkOptions(options, op, ATOMIC_CALL_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.#life.signal.aborted) throw new ClosedError(`${op} of the atomic number at ${this.path}: it is closed`, { path: this.path });
    const link = linkSignals([signal, this.#life.signal], timeoutMs);
    try {
      return await fn(link.signal);
    } finally {
      link.dispose();
    }
  }

  /** The optimistic loop, then the promoted one; `make` gives the new value from the old. */
  #update(op: string, make: (prev: bigint) => bigint, options: AtomicCallOptions | undefined): Promise<AtomicValue> {
    return this.#run(op, options, async (signal) => {
      const stats: MutableStats = { optimisticTries: 0, promotedTries: 0, optimisticTimeMs: 0, promotedTimeMs: 0 };
      const t0 = performance.now();
      let done = await this.#attempts(make, signal, stats, 'optimisticTries').finally(() => (stats.optimisticTimeMs = performance.now() - t0));
      if (done) return result(true, done.pre, done.post, stats);
      if (this.#mutex) {
        const t1 = performance.now();
        try {
          done = await this.#underLock(this.#mutex, make, signal, stats);
        } finally {
          stats.promotedTimeMs = performance.now() - t1;
        }
        if (done) return result(true, done.pre, done.post, stats);
      }
      const tries = stats.optimisticTries + stats.promotedTries;
      throw new RetriesExhaustedError(`${op} of ${this.path}: lost the race on all ${tries} attempts${this.#mutex ? ' (optimistic and under the lock)' : ''}; nothing was applied`, { path: this.path });
    });
  }

  async #underLock(mutex: Mutex, make: (prev: bigint) => bigint, signal: AbortSignal, stats: MutableStats): Promise<{ pre: bigint; post: bigint } | undefined> {
    let handle;
    try {
      handle = await mutex.acquire({ timeoutMs: this.#lockTimeoutMs, signal });
    } catch (err) {
      if (err instanceof LockTimeoutError) throw new RetriesExhaustedError(`${this.path}: the optimistic attempts lost the race and the lock ${mutex.path} was not granted within ${this.#lockTimeoutMs} ms; nothing was applied`, { path: this.path, cause: err });
      throw err;
    }
    try {
      return await this.#attempts(make, signal, stats, 'promotedTries');
    } finally {
      // A failed release (the session went meanwhile) is the lock's business, not this call's outcome.
      await handle.release().catch(() => undefined);
    }
  }

  /** Up to 1 + maxRetries attempts with backoff between them; undefined when all lost the race. */
  async #attempts(make: (prev: bigint) => bigint, signal: AbortSignal, stats: MutableStats, count: 'optimisticTries' | 'promotedTries'): Promise<{ pre: bigint; post: bigint } | undefined> {
    for (let attempt = 0; ; attempt++) {
      stats[count] += 1;
      const done = await this.#tryOnce(make, signal);
      if (done) return done;
      if (attempt >= this.#maxRetries) return undefined;
      await delay(backoffDelay(this.#backoff, attempt), signal);
    }
  }

  /** One read and one conditional write; undefined when another writer came first. */
  async #tryOnce(make: (prev: bigint) => bigint, signal: AbortSignal): Promise<{ pre: bigint; post: bigint } | undefined> {
    const read = await this.#read(signal);
    const pre = read?.value ?? 0n;
    const post = make(pre);
    const data = encodeLong(post);
    if (read === null) return (await this.#create(data, signal)) ? { pre, post } : undefined;
    if (read.version === -1) {
      throw new IllegalStateError(`update of ${this.path}: the node's version wrapped to -1, which ZooKeeper reads as "any version"; forceSet() moves it on`, { path: this.path });
    }
    try {
      await this.#setAt(data, read.version, signal);
      return { pre, post };
    } catch (err) {
      if (err instanceof BadVersionError || err instanceof NoNodeError) return undefined;
      throw err;
    }
  }

  async #read(signal: AbortSignal): Promise<Read> {
    return this.#reading(async () => {
      try {
        const { data, stat } = await this.#session.getData(this.path, { signal });
        return { value: decodeLong(data, this.path), version: stat.version };
      } catch (err) {
        if (err instanceof NoNodeError) return null;
        throw err;
      }
    }, signal);
  }

  /**
   * Runs a read, and runs it again on the next session when this one ended under it (a read
   * applies nothing, so the call goes on, as a lock wait does); with `renewOnLoss` off,
   * `waitConnected` rejects with the session's error.
   */
  async #reading<T>(read: () => Promise<T>, signal: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await read();
      } catch (err) {
        if (!(err instanceof SessionExpiredError) || signal.aborted) throw err;
      }
      await this.#session.waitConnected({ signal });
      if (attempt > 0) await delay(backoffDelay(this.#backoff, attempt - 1), signal);
    }
  }

  #setAt(data: Buffer, version: number, signal: AbortSignal): Promise<Stat> {
    return this.#written('write', this.#session.setData(this.path, data, { version, signal }), signal);
  }

  /**
   * Creates the node with `data` (parents as containers if missing): true if created, false if
   * it existed (another writer came first), unless `strict` (then NoNode propagates: the parent
   * went between our two creates).
   */
  async #create(data: Buffer, signal: AbortSignal, strict = false): Promise<boolean> {
    const create = (): Promise<string> => this.#written('create', this.#session.create(this.path, { data, signal, acl: this.#acl }), signal);
    try {
      await create();
      return true;
    } catch (err) {
      if (err instanceof NodeExistsError) return false;
      if (!(err instanceof NoNodeError)) throw err;
    }
    await this.#session.mkdirp(parentOf(this.path), { container: true, signal, acl: this.#acl });
    try {
      await create();
      return true;
    } catch (err) {
      if (err instanceof NodeExistsError) return false;
      if (err instanceof NoNodeError && !strict) return false;
      throw err;
    }
  }

  /**
   * Waits for a write, turning every way its outcome can be unknown into
   * {@link OutcomeUnknownError}: a connection lost after it was sent, the session ended with it
   * pending, or `signal` aborting while it is in flight (the session keeps waiting for a sent
   * write's reply; the caller does not). A write not sent yet when `signal` aborts is withdrawn by
   * the session, and the call rejects with the abort reason.
   */
  async #written<T>(what: string, write: Promise<T>, signal: AbortSignal): Promise<T> {
    const unknown = (cause: unknown): OutcomeUnknownError =>
      new OutcomeUnknownError(`${what} of ${this.path} was sent but its reply did not come: it may or may not have been applied; read the value to know`, { path: this.path, cause });
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | typeof IN_FLIGHT;
    if (signal.aborted) outcome = await settledOr(write);
    else {
      let stop!: () => void;
      const aborted = new Promise<typeof IN_FLIGHT>((resolve) => {
        // An unsent write is withdrawn synchronously by the session's own listener; give it a turn.
        stop = onAbort(signal, () => setImmediate(() => resolve(IN_FLIGHT)));
      });
      outcome = await Promise.race([settled(write), aborted]);
      stop();
    }
    if (outcome === IN_FLIGHT) {
      write.catch(() => undefined);
      throw unknown(signal.reason);
    }
    if (outcome.ok) return outcome.value;
    const err = outcome.error;
    if (err instanceof ConnectionLossError && err.sent) throw unknown(err);
    if (err instanceof SessionExpiredError) throw unknown(err);
    throw err;
  }
}

function result(succeeded: boolean, preValue: bigint, postValue: bigint, stats: AtomicStats): AtomicValue {
  return Object.freeze({ succeeded, preValue, postValue, stats: Object.freeze({ ...stats }) });
}

function settled<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** The outcome of `p` if it settles within a turn of the event loop, else {@link IN_FLIGHT}. */
function settledOr<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown } | typeof IN_FLIGHT> {
  return Promise.race([settled(p), new Promise<typeof IN_FLIGHT>((resolve) => setImmediate(() => resolve(IN_FLIGHT)))]);
}
