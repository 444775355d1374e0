/**
 * {@link SharedValue} and {@link SharedCount}: one value at one znode, shared by every
 * participant, with compare-and-set on the node's version (Curator's `SharedValue` and
 * `SharedCount`, same node, same encoding).
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import type { ZkSession } from '../client/session.js';
import type { Acl, ConnectionState, Stat } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { backoffDelay } from '../client/retry.js';
import { checkInt, checkOptions, checkSignal, checkTimeout, optionKeys, parentOf, validatePath } from '../client/validate.js';
import { ClosedError, ConnectionLossError, IllegalStateError, InvalidArgumentError, NoNodeError, NodeExistsError, BadVersionError, OutcomeUnknownError, SessionExpiredError, isPermissionError } from '../errors.js';
import { delay, raceAbort } from '../util/abort.js';
import { callListeners } from '../util/listeners.js';
import { linkSignals, onAbort, ownedController } from '../util/signals.js';
import { valueStream, type StreamPush } from './changes.js';
import { BYTES, COUNT, type Codec } from './codec.js';

/** A value with the node version and the zxid of the write that produced it. @group Recipes */
export interface VersionedValue<T> {
  /** The value. */
  readonly value: T;
  /** The node's data version when the value was read (ZooKeeper's: it wraps past 2^31 - 1). */
  readonly version: number;
  /** The zxid of the write that produced it (the node's `mzxid`): ordered across the ensemble, never wraps. */
  readonly zxid: bigint;
}

/** Events of a {@link SharedValue} or {@link SharedCount}. @group Recipes */
export interface SharedValueEvents<T> {
  /** A newer value was seen (each zxid once, in zxid order; our own writes too). */
  changed: (value: VersionedValue<T>) => void;
  /** The session's connection state changed (as Curator's listeners' `stateChanged`). */
  state: (state: ConnectionState) => void;
  /** A background read failed in a way worth knowing (bad data on the node); the value kept is the last good one. */
  error: (error: Error) => void;
}

/**
 * Options of a call of a shared value that waits for the server ({@link SharedBase.start},
 * {@link SharedBase.refresh}, {@link SharedBase.set}, {@link SharedBase.trySet}).
 * @group Recipes
 */
export interface SharedWaitOptions {
  /** Gives up on the wait; it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Gives up after this many milliseconds (rejects with a `TimeoutError` DOMException). */
  timeoutMs?: number;
}

/** Options of {@link SharedValue.changes}. @group Recipes */
export interface SharedIteratorOptions {
  /** Values held for a slow consumer (default 16, 1..65536); past it the oldest are dropped, the newest is always kept. */
  bufferSize?: number;
  /** Ends the iteration. */
  signal?: AbortSignal;
}

/** @internal */
export const SHARED_WAIT_OPTION_KEYS = optionKeys<SharedWaitOptions>({ signal: true, timeoutMs: true });
/** @internal */
export const SHARED_ITERATOR_OPTION_KEYS = optionKeys<SharedIteratorOptions>({ bufferSize: true, signal: true });

/** Options of a {@link SharedValue} or {@link SharedCount}. @group Recipes */
export interface SharedValueOptions {
  /**
   * ACL of the node (created by `start()` if absent) and of the parents it creates; default:
   * the session's `aclProvider` (the open ACL without one). See [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** @internal */
export const SHARED_VALUE_OPTION_KEYS = optionKeys<SharedValueOptions>({ acl: true });

const RE_ARM = { baseDelayMs: 50, maxDelayMs: 2000 };

/**
 * The machinery of {@link SharedValue} and {@link SharedCount}: a local copy of one node kept
 * current by a data watch, re-read after a reconnect and after a new session.
 * @group Recipes
 */
export class SharedBase<T> extends EventEmitter<SharedValueEvents<T>> {
  readonly #session: ZkSession;
  readonly #codec: Codec<T>;
  readonly #seed: Buffer;
  readonly #acl: readonly Acl[] | undefined;
  readonly #life = ownedController();
  readonly #streams = new Set<StreamPush<VersionedValue<T>>>();
  #state: 'latent' | 'starting' | 'started' | 'closed' = 'latent';
  #current: VersionedValue<T> | undefined;
  #armed = false;
  readonly #onState = (s: ConnectionState): void => this.#sessionState(s);
  /** The node's path. */
  readonly path: string;

  /** @internal */
  constructor(session: ZkSession, path: string, seed: unknown, codec: Codec<T>, what: string, options: SharedValueOptions = {}) {
    super();
    if (session === null || typeof session !== 'object') throw new InvalidArgumentError(`${what}: session must be a ZkSession, got ${typeof session}`);
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError(`${what}: the path must not be the root`, { path });
    const o = checkOptions(options, `new ${what}`, SHARED_VALUE_OPTION_KEYS);
    this.#acl = optionalAcl(o.acl, what);
    this.#session = session;
    this.path = path;
    this.#codec = codec;
    this.#seed = codec.encode(seed, path);
    const limit = session.dataLimit;
    if (typeof limit === 'number' && this.#seed.length > limit) {
      throw new InvalidArgumentError(`${what} at ${path}: the seed is ${this.#seed.length} bytes, over the session's ${limit}-byte data limit`, { path });
    }
  }

  /**
   * Creates the node with the seed if it does not exist (parents as containers), reads it and
   * starts watching it. Rejects with the signal's reason or a timeout; then nothing is left
   * watching (call `close()` anyway to release the instance).
   */
  async start(options: SharedWaitOptions = {}): Promise<void> {
    const o = checkOptions(options, 'start', SHARED_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.#state === 'closed') throw new ClosedError(`start of the shared value at ${this.path}: it is closed`, { path: this.path });
    if (this.#state !== 'latent') throw new IllegalStateError(`start of the shared value at ${this.path}: it was started already`, { path: this.path });
    this.#state = 'starting';
    const link = linkSignals([signal, this.#life.signal], timeoutMs);
    try {
      await this.#ensureNode(link.signal);
      await raceAbort(this.#arm(), link.signal);
      this.#session.on('state', this.#onState);
      this.#state = 'started';
    } catch (err) {
      this.#stop();
      throw err;
    } finally {
      link.dispose();
    }
  }

  /** The value last seen, its version and zxid (local: no request). Throws before `start()`. */
  get(): VersionedValue<T> {
    this.#check('get');
    return this.#current!;
  }

  /** The value last seen (local). */
  get value(): T {
    return this.get().value;
  }

  /**
   * Reads the value as the ensemble's leader has it now (`sync`, then a read): after another
   * session's write was acknowledged, the local copy (fed by a member that may lag) may not have
   * it yet; this does. Resolves to the newest value seen.
   */
  async refresh(options: SharedWaitOptions = {}): Promise<VersionedValue<T>> {
    const o = checkOptions(options, 'refresh', SHARED_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    this.#check('refresh');
    const link = linkSignals([signal, this.#life.signal], timeoutMs);
    try {
      await this.#read(link.signal);
      return this.#current!;
    } finally {
      link.dispose();
    }
  }

  /**
   * Sets the value whatever it is now, and resolves to what was written (its version and zxid).
   *
   * Rejects with the signal's reason or a timeout if it gives up before the write was sent, or
   * with a `ConnectionLossError` whose `sent` is false if no connection came (then nothing was
   * written), and with {@link OutcomeUnknownError} if the write was sent and
   * no reply came: the connection dropped, or the caller gave up first (`cause` says which). It
   * may or may not have been applied, and it is not re-sent; a late reply still updates `get()`.
   */
  async set(value: T, options: SharedWaitOptions = {}): Promise<VersionedValue<T>> {
    const data = this.#codec.encode(value, this.path);
    const o = checkOptions(options, 'set', SHARED_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    this.#check('set');
    const link = linkSignals([signal, this.#life.signal], timeoutMs);
    try {
      const stat = await this.#write(data, -1, link.signal);
      return Object.freeze({ value: this.#codec.decode(data, this.path), version: stat.version, zxid: stat.mzxid });
    } finally {
      link.dispose();
    }
  }

  /**
   * Compare-and-set: writes `value` only if the node is still at `previous` (a value from
   * {@link get}, {@link refresh} or an event). Resolves to false, without writing, if the local
   * copy has moved on from `previous`, or if the server refused the version (someone wrote
   * first: the current value is then re-read, so `get()` has it, unless that read fails, in which
   * case the watch brings it). As Curator's since its fix for wrapped versions, `previous` is
   * compared by zxid and value, not by version, since a version wraps past 2^31 - 1 to -2^31; a
   * `previous` whose version is -1 (which ZooKeeper would read as "any version") is refused with
   * `IllegalStateError` rather than sent as an unconditional write.
   *
   * Gives up (signal, timeout) and reports a lost reply as {@link set} does: a write sent whose
   * reply never came rejects with {@link OutcomeUnknownError}.
   */
  async trySet(value: T, previous: VersionedValue<T>, options: SharedWaitOptions = {}): Promise<boolean> {
    const data = this.#codec.encode(value, this.path);
    const o = checkOptions(options, 'trySet', SHARED_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (previous === null || typeof previous !== 'object' || typeof previous.version !== 'number' || !Number.isInteger(previous.version) || typeof previous.zxid !== 'bigint') {
      throw new InvalidArgumentError(`trySet of ${this.path}: previous must be a VersionedValue (from get(), refresh() or a changed event)`, { path: this.path });
    }
    this.#check('trySet');
    const current = this.#current!;
    if (previous.zxid !== current.zxid || !this.#codec.equals(previous.value, current.value)) return false;
    if (previous.version === -1) {
      throw new IllegalStateError(`trySet of ${this.path}: the node's version wrapped to -1, which ZooKeeper reads as "any version"; use set(), or wait for the next write`, { path: this.path });
    }
    const link = linkSignals([signal, this.#life.signal], timeoutMs);
    try {
      try {
        await this.#write(data, previous.version, link.signal);
        return true;
      } catch (err) {
        if (!(err instanceof BadVersionError) && !(err instanceof NoNodeError)) throw err;
      }
      // Refused, so certainly not applied: the answer is false whatever the re-read does.
      await this.#read(link.signal).catch(() => undefined);
      return false;
    } finally {
      link.dispose();
    }
  }

  /**
   * The values seen from now on, newest last, ending at `close()` or when `signal` aborts. A
   * value is state, not a log: a consumer slower than `bufferSize` changes loses the oldest
   * ones; the newest is always delivered.
   */
  changes(options: SharedIteratorOptions = {}): AsyncIterableIterator<VersionedValue<T>> {
    const o = checkOptions(options, 'changes', SHARED_ITERATOR_OPTION_KEYS);
    const bufferSize = checkInt(o.bufferSize, 'bufferSize', 1, 65536, 16);
    const signal = checkSignal(o.signal);
    if (this.#state === 'closed') throw new ClosedError(`changes of the shared value at ${this.path}: it is closed`, { path: this.path });
    return valueStream<VersionedValue<T>>(bufferSize, signal, this.#streams);
  }

  /** Stops watching (the server-side watch is removed), ends the iterators and drops the listeners. Idempotent. */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#stop();
    this.removeAllListeners();
  }

  /** `await using value = ...` closes it at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #stop(): void {
    this.#state = 'closed';
    this.#session.off('state', this.#onState);
    this.#life.abort(new ClosedError(`the shared value at ${this.path} was closed`, { path: this.path }));
    for (const push of [...this.#streams]) push(null);
  }

  #check(op: string): void {
    if (this.#state === 'closed') throw new ClosedError(`${op} of the shared value at ${this.path}: it is closed`, { path: this.path });
    if (this.#session.closed) throw new ClosedError(`${op} of the shared value at ${this.path}: its session is closed`, { path: this.path });
    if (this.#state !== 'started') throw new IllegalStateError(`${op} of the shared value at ${this.path}: call start() first`, { path: this.path });
  }

  /** Creates the node with the seed unless it exists; a create whose reply was lost is simply tried again (NodeExists then). */
  async #ensureNode(signal: AbortSignal): Promise<void> {
    const parent = parentOf(this.path);
    for (let attempt = 0; ; attempt++) {
      try {
        if (parent !== '/') await this.#session.mkdirp(parent, { container: true, signal, acl: this.#acl });
        await this.#session.create(this.path, { data: this.#seed, signal, acl: this.#acl });
        return;
      } catch (err) {
        if (err instanceof NodeExistsError) return;
        // The parent container may be reaped between the two steps; a lost reply is retried.
        if (!(err instanceof NoNodeError) && !(err instanceof ConnectionLossError)) throw err;
      }
      await delay(backoffDelay(RE_ARM, attempt), signal);
    }
  }

  /**
   * Sends the write and updates the copy from its reply (a late one too). Giving up on a write
   * that was sent cannot take it back: that is an unknown outcome, not the signal's reason.
   */
  #write(data: Buffer, version: number, signal: AbortSignal): Promise<Stat> {
    let answered = false;
    // Lost already (no new session yet): an expiry error then means "not sent".
    const live = this.#session.state !== 'LOST';
    const reply = this.#session.setData(this.path, data, { version, signal }).then(
      (stat) => {
        answered = true;
        this.#update(stat, data);
        return stat;
      },
      (err: unknown) => {
        answered = true;
        // The session ending (lost, closed) rejects what is pending, sent or not: unknown too.
        if ((err instanceof ConnectionLossError && err.sent) || (err instanceof SessionExpiredError && live) || (err instanceof ClosedError && !this.#life.signal.aborted)) {
          throw new OutcomeUnknownError(`write of ${this.path} was sent but its reply was lost: it may or may not have been applied; read the value to know`, { path: this.path, cause: err });
        }
        throw err;
      },
    );
    return new Promise<Stat>((resolve, reject) => {
      // The session rejects a write not yet sent with the reason at once; one sent, it keeps
      // waiting for. Its answer reaches `answered` before a macrotask runs.
      const unsubscribe = onAbort(signal, (reason) => {
        setImmediate(() => {
          if (answered) return;
          reject(new OutcomeUnknownError(`write of ${this.path} was sent, then given up on before its reply came (${reasonText(reason)}): it may or may not be applied; read the value to know`, { path: this.path, cause: reason }));
        });
      });
      reply.then(
        (stat) => {
          unsubscribe();
          resolve(stat);
        },
        (err: unknown) => {
          unsubscribe();
          reject(err);
        },
      );
    });
  }

  /** `sync`, then a read without a watch (the armed watch stays). */
  async #read(signal: AbortSignal | undefined): Promise<void> {
    await this.#session.sync(this.path, { signal });
    const { data, stat } = await this.#session.getData(this.path, { signal });
    this.#update(stat, data);
  }

  /**
   * Reads with a watch, and re-arms when it fires. One watch at a time: on a reconnect the
   * session re-registers it, so only its end (session lost, closed) or firing arms again.
   * `sync` first, except right after the watch fired: the member that fired it has the write,
   * and a reconnect only goes to a member at least as recent as what the session saw. A new
   * session's member may lag behind what the old one saw.
   */
  async #arm(sync = true): Promise<void> {
    if (this.#armed) return;
    this.#armed = true;
    let changed: Promise<unknown>;
    try {
      if (sync) await this.#session.sync(this.path, { signal: this.#life.signal });
      const w = await this.#session.getDataWatch(this.path, { signal: this.#life.signal });
      this.#update(w.result.stat, w.result.data);
      changed = w.changed;
    } catch (err) {
      if (!(err instanceof NoNodeError)) {
        this.#armed = false;
        throw err;
      }
      // Deleted by someone: keep the last value (as Curator does) and wait for it to come back.
      const w = await this.#session.existsWatch(this.path, { signal: this.#life.signal }).catch((e: unknown) => {
        this.#armed = false;
        throw e;
      });
      changed = w.changed;
      if (w.result) {
        const { data, stat } = await this.#session.getData(this.path, { signal: this.#life.signal }).catch(() => ({ data: undefined, stat: undefined }));
        if (stat && data) this.#update(stat, data);
      }
    }
    changed.then(
      () => {
        this.#armed = false;
        this.#rearm(false);
      },
      () => {
        this.#armed = false;
        this.#rearm(true);
      },
    );
  }

  /** Arms again in the background, backing off while the session cannot answer, until closed. */
  #rearm(sync: boolean): void {
    if (this.#life.signal.aborted) return;
    const loop = async (): Promise<void> => {
      for (let attempt = 0; !this.#life.signal.aborted; attempt++) {
        try {
          await this.#arm(sync || attempt > 0);
          return;
        } catch (err) {
          if (err instanceof ClosedError || this.#life.signal.aborted) return;
          if (!(err instanceof ConnectionLossError) && !(err instanceof SessionExpiredError)) this.#report(err);
          // No permission to read it any more: told once, not retried (no retry can cure it).
          if (isPermissionError(err)) return;
        }
        await delay(backoffDelay(RE_ARM, attempt), this.#life.signal).catch(() => undefined);
      }
    };
    void loop();
  }

  #sessionState(s: ConnectionState): void {
    callListeners(this, 'state', [s]);
    // Same session back (perhaps on another member, which ZooKeeper only allows if it is not
    // behind what this session saw): the watch was re-registered, but a write may have come
    // and gone while we were away; re-read, as Curator does.
    if (s === 'RECONNECTED' || s === 'CONNECTED') {
      this.#read(this.#life.signal).catch((err: unknown) => {
        if (!(err instanceof ClosedError) && !(err instanceof ConnectionLossError) && !(err instanceof SessionExpiredError) && !(err instanceof NoNodeError) && !this.#life.signal.aborted) this.#report(err);
      });
      if (!this.#armed) this.#rearm(true);
    }
  }

  #report(err: unknown): void {
    callListeners(this, 'error', [err instanceof Error ? err : new Error(String(err))]);
  }

  /** Keeps the newest value by zxid (CURATOR-688: never by version, which wraps); emits it once. */
  #update(stat: Stat, data: Buffer): void {
    if (this.#current && stat.mzxid <= this.#current.zxid) return;
    let value: T;
    try {
      value = this.#codec.decode(data, this.path);
    } catch (err) {
      if (!this.#current) throw err;
      this.#report(err);
      return;
    }
    this.#current = Object.freeze({ value, version: stat.version, zxid: stat.mzxid });
    if (this.#state !== 'started') return;
    for (const push of this.#streams) push(this.#current);
    callListeners(this, 'changed', [this.#current]);
  }
}

/**
 * A value of raw bytes at one znode, shared by all participants (Curator's `SharedValue`: the
 * node's data is the value as is, so a Curator `SharedValue` on the same path shares it).
 *
 * - `start()` creates the node with the seed if absent (parents as containers) and watches it;
 *   `get()` is the local copy, `refresh()` a read synced with the leader.
 * - `trySet(value, previous)` writes only at `previous`'s version (compare-and-set); `set()`
 *   writes whatever is there.
 * - The copy moves forward only, in zxid order (a version wraps; a zxid does not): a read from a
 *   member that lags never takes it back. Re-read after every reconnect (the node may have
 *   changed meanwhile) and after a new session (with `sync` first: the new session's member may
 *   be behind the old one's).
 * - A node deleted by someone keeps its last value here until it is created again.
 * - A write whose reply was lost rejects with {@link OutcomeUnknownError}: it is not re-sent.
 *
 * Events ({@link SharedValueEvents}): `changed(value)`, `state(state)`, `error(error)`; or
 * iterate {@link SharedBase.changes}.
 *
 * Guide: [Shared values and atomic numbers](../../docs/recipes/shared.md).
 * @group Recipes
 */
export class SharedValue extends SharedBase<Buffer> {
  /** Creates the recipe on `path`; `seed` is the value the node is created with if absent. */
  constructor(session: ZkSession, path: string, seed: Uint8Array | string, options: SharedValueOptions = {}) {
    super(session, path, seed, BYTES, 'SharedValue', options);
  }

  /** Sets the value (bytes, or a string as UTF-8); see {@link SharedBase.set}. */
  override set(value: Uint8Array | string, options?: SharedWaitOptions): Promise<VersionedValue<Buffer>> {
    return super.set(value as Buffer, options);
  }

  /** Compare-and-set (bytes, or a string as UTF-8); see {@link SharedBase.trySet}. */
  override trySet(value: Uint8Array | string, previous: VersionedValue<Buffer>, options?: SharedWaitOptions): Promise<boolean> {
    return super.trySet(value as Buffer, previous, options);
  }
}

/**
 * A signed 32-bit count at one znode (Curator's `SharedCount`: 4 bytes, big-endian), shared by
 * all participants; everything else as {@link SharedValue}. A count outside the 32-bit range is
 * refused with `InvalidArgumentError`; node data of any size but 4 bytes is a `CorruptValueError`.
 *
 * @example
 * ```ts
 * import { SharedCount } from 'zk-recipes';
 *
 * await using count = new SharedCount(session, '/config/workers', 4);
 * await count.start({ timeoutMs: 5000 });
 * const seen = count.get();
 * if (!(await count.trySet(seen.value + 1, seen))) console.log('someone else wrote first:', count.get().value);
 * ```
 * @group Recipes
 */
export class SharedCount extends SharedBase<number> {
  /** Creates the recipe on `path`; `seed` is the count the node is created with if absent. */
  constructor(session: ZkSession, path: string, seed: number, options: SharedValueOptions = {}) {
    super(session, path, seed, COUNT, 'SharedCount', options);
  }

  /** The count last seen (local). */
  get count(): number {
    return this.get().value;
  }
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
}
