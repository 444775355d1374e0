/**
 * {@link ZkSession}: the session layer every recipe stands on.
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import {
  ClosedError,
  InvalidArgumentError,
  NoNodeError,
  NodeExistsError,
  OperationTimeoutError,
  SessionExpiredError,
  ZooKeeperError,
} from '../errors.js';
import { deferred, delay, raceAbort } from '../util/abort.js';
import { errorFromCode, ZK_SESSION_EXPIRED } from './error-map.js';
import { Generation } from './generation.js';
import { create2, MULTI_RESULT_TYPES, rawMulti, toRawAcls, type RawError, type RawEvent, type RawStat, type WatcherTableName } from './nzc.js';
import { resolveRetryPolicy, withRetry, type RetryPolicy } from './retry.js';
import { toStat } from './stat.js';
import type { AuthInfo, ChildrenResult, CreatedNode, ConnectionState, CreateOptions, DataResult, NodeData, Op, OpResult, Stat, WatchEvent, Watched } from './types.js';
import { Acls, CREATE_MODE_FLAGS } from './types.js';
import { checkInt, checkSignal, checkTimeout, describe, joinPath, parentOf, toBuffer, validatePath, validateVersion } from './validate.js';

/** Attaches a watch listener; called synchronously in a successful read's reply callback. */
type Arm = (gen: Generation, tables: readonly WatcherTableName[], sentFn: (event: RawEvent) => void) => void;

/** Options of a {@link ZkSession}. */
export interface SessionOptions {
  /** Requested session timeout, ms; the server clamps it to [2, 20] x its tickTime. Default 10000. */
  sessionTimeoutMs?: number;
  /** How long {@link ZkSession.connect} waits for the first connection, ms. Default 15000. */
  connectTimeoutMs?: number;
  /** Upper bound of the random pause after every server of the list failed, ms. Default 200. */
  spinDelayMs?: number;
  /** Retry policy of idempotent calls on connection loss. */
  retry?: Partial<RetryPolicy>;
  /** Authentication sent on every (re)connect, e.g. `{ scheme: 'digest', credentials: 'user:pw' }`. */
  auth?: readonly AuthInfo[];
  /** Largest node data accepted, bytes. Default 1 000 000 (the server drops the connection near 1 MiB). */
  maxDataBytes?: number;
  /**
   * Start a new session automatically after `LOST`. Default true. When false, `LOST` is final:
   * calls and {@link ZkSession.waitConnected} (so every recipe's waits) reject with
   * {@link SessionExpiredError}.
   */
  renewOnLoss?: boolean;
  /** @internal Join an existing session (the test kit uses it to force an expiry). */
  join?: SessionCredentials;
}

/** A session's id and password: enough to join it from another client. */
export interface SessionCredentials {
  /** The 8-byte session id. */
  sessionId: Buffer;
  /** The 16-byte session password. */
  password: Buffer;
}

/** Information about an established session. */
export interface SessionInfo {
  /** Server-assigned session id. */
  sessionId: bigint;
  /** 1 for the first session of this object, incremented for each new session after `LOST`. */
  generation: number;
  /** Negotiated session timeout, ms. */
  timeoutMs: number;
}

/** Typed events of a {@link ZkSession}. */
export interface SessionEvents {
  /** The connection state changed. */
  state: (state: ConnectionState, previous: ConnectionState) => void;
  /** A session was established: the first, or a new one after `LOST`. */
  session: (info: SessionInfo) => void;
  /** A listener threw, or authentication failed. */
  error: (error: Error) => void;
}

/**
 * Counters of requests sent and watches fired, for tests and benchmarks ("how many reads did a
 * release cause?"). Monotonic over the object's life, across sessions.
 */
export interface SessionCounters {
  /** `create` requests sent. */
  create: number;
  /** `delete` requests sent (each retry counts). */
  delete: number;
  /** `exists` requests sent. */
  exists: number;
  /** `getData` requests sent. */
  getData: number;
  /** `setData` requests sent. */
  setData: number;
  /** `getChildren` requests sent. */
  getChildren: number;
  /** `multi` (transaction) requests sent. */
  multi: number;
  /** Server-side watch removals sent (after a watch was aborted). */
  removeWatches: number;
  /** Watch notifications delivered to this session. */
  watchEvents: number;
}

/** Options of a blocking wait. */
export interface WaitOptions {
  /** Give up after this many ms. */
  timeoutMs?: number;
  /** Give up when this aborts (rejects with its reason). */
  signal?: AbortSignal;
}

/** Options of a read that sets a watch. */
export interface WatchOptions {
  /** Aborting removes the watch (locally and on the server) and rejects `changed`. */
  signal?: AbortSignal;
}

/**
 * A ZooKeeper session: a typed, promise-based adapter over node-zookeeper-client. It owns the
 * connection, reports Curator-style connection states, maps server error codes to typed errors,
 * retries idempotent reads on connection loss, detects silent partitions, and after the session
 * is lost starts a new one. Recipes take a `ZkSession`; only this layer talks to the client.
 *
 * - `SUSPENDED` is raised when the connection drops, or when nothing was received for 2/3 of the
 *   session timeout (a silent partition).
 * - `LOST` is raised when the server reports expiry, or locally once nothing has been heard from
 *   the server for the whole session timeout (node-zookeeper-client only learns of expiry after
 *   reconnecting). Then every pending call and watch of that session rejects with
 *   {@link SessionExpiredError}, {@link ZkSession.signal} aborts, and a new session starts.
 *
 * @example
 * ```ts
 * await using session = await ZkSession.connect('127.0.0.1:2181');
 * await session.create('/app', { data: 'hello' });
 * ```
 */
export class ZkSession extends EventEmitter<SessionEvents> {
  private gen: Generation;
  private generationCount = 0;
  private currentState: ConnectionState = 'CONNECTING';
  private lostTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private readonly retryPolicy: RetryPolicy;
  private readonly maxDataBytes: number;
  private readonly requestedTimeoutMs: number;
  private readonly spinDelayMs: number;
  private readonly auth: readonly AuthInfo[];
  private readonly renewOnLoss: boolean;
  private readonly closeController = new AbortController();
  private readonly stats: SessionCounters = {
    create: 0,
    delete: 0,
    exists: 0,
    getData: 0,
    setData: 0,
    getChildren: 0,
    multi: 0,
    removeWatches: 0,
    watchEvents: 0,
  };

  /**
   * Creates a session and starts connecting; see {@link ZkSession.connect} to also wait for the
   * connection. `connectString` is `host:port[,host:port...][/chroot]`.
   */
  constructor(
    /** The connect string this session was created with. */
    readonly connectString: string,
    options: SessionOptions = {},
  ) {
    super();
    validateConnectString(connectString);
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError(`options must be an object, got ${describe(options)}`);
    this.requestedTimeoutMs = checkInt(options.sessionTimeoutMs, 'sessionTimeoutMs', 100, 24 * 3600_000, 10_000);
    checkTimeout(options.connectTimeoutMs, 'connectTimeoutMs');
    this.spinDelayMs = checkInt(options.spinDelayMs, 'spinDelayMs', 0, 60_000, 200);
    this.maxDataBytes = checkInt(options.maxDataBytes, 'maxDataBytes', 0, 100 * 1024 * 1024, 1_000_000);
    this.retryPolicy = resolveRetryPolicy(options.retry);
    this.auth = validateAuth(options.auth);
    this.renewOnLoss = options.renewOnLoss ?? true;
    this.gen = this.startGeneration(options.join);
  }

  /**
   * Creates a session and waits until it is connected (at most `connectTimeoutMs`, default
   * 15 s). On failure nothing is left running.
   */
  static async connect(connectString: string, options: SessionOptions & { signal?: AbortSignal } = {}): Promise<ZkSession> {
    const session = new ZkSession(connectString, options);
    try {
      await session.waitConnected({ timeoutMs: options.connectTimeoutMs ?? 15_000, signal: options.signal });
      return session;
    } catch (err) {
      await session.close();
      throw err;
    }
  }

  /** The current connection state. */
  get state(): ConnectionState {
    return this.currentState;
  }

  /** The current session id (`0n` until connected). */
  get sessionId(): bigint {
    return this.gen.everConnected ? this.gen.sessionId : 0n;
  }

  /** 1 for the first session, incremented for every new session after `LOST`. */
  get generation(): number {
    return this.gen.id;
  }

  /** The negotiated session timeout, ms (the requested one until connected). */
  get timeoutMs(): number {
    return this.gen.everConnected ? this.gen.timeoutMs : this.requestedTimeoutMs;
  }

  /**
   * Aborts when the current session ends: with {@link SessionExpiredError} on `LOST`, with
   * {@link ClosedError} on close. After `LOST` a new session has a new signal: capture this at
   * the moment you start relying on the session (e.g. when a lock is granted).
   */
  get signal(): AbortSignal {
    return this.gen.controller.signal;
  }

  /** Whether a new session is started after `LOST` (the `renewOnLoss` option). */
  get renewsOnLoss(): boolean {
    return this.renewOnLoss;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Request and watch counters (a snapshot). */
  get counters(): Readonly<SessionCounters> {
    return { ...this.stats };
  }

  /** Largest node data accepted, bytes. */
  get dataLimit(): number {
    return this.maxDataBytes;
  }

  /** Watches this session currently holds listeners for (leak checks). */
  get activeWatchCount(): number {
    return this.gen.watchCount;
  }

  /** @internal The current session's id and password (for the test kit's forced expiry). */
  credentials(): SessionCredentials {
    return { sessionId: this.gen.raw.getSessionId(), password: this.gen.raw.getSessionPassword() };
  }

  /**
   * Resolves once connected (`CONNECTED` or `RECONNECTED`); rejects on close, timeout or abort,
   * and with {@link SessionExpiredError} once the session is `LOST` and `renewOnLoss` is off
   * (it will never connect again).
   */
  async waitConnected(opts: WaitOptions = {}): Promise<void> {
    const timeoutMs = checkTimeout(opts.timeoutMs);
    const signal = checkSignal(opts.signal);
    this.assertOpen();
    if (this.isConnected()) return;
    const done = deferred<void>();
    const onState = (): void => {
      if (this.isConnected()) done.resolve();
      else if (this.currentState === 'CLOSED') done.reject(new ClosedError('session closed while waiting to connect'));
      else if (this.currentState === 'LOST' && !this.renewOnLoss) done.reject(this.finallyLost());
    };
    onState();
    this.on('state', onState);
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(
            () => done.reject(new OperationTimeoutError(`could not connect to ${this.connectString} within ${timeoutMs} ms; is ZooKeeper running there?`)),
            timeoutMs,
          );
    try {
      await raceAbort(done.promise, signal);
    } finally {
      clearTimeout(timer);
      this.off('state', onState);
    }
  }

  private finallyLost(): SessionExpiredError {
    return new SessionExpiredError('SESSION_EXPIRED', `session 0x${this.gen.sessionId.toString(16)} to ${this.connectString} was lost and renewOnLoss is off: it will not connect again; create a new ZkSession`, {
      zkCode: ZK_SESSION_EXPIRED,
      cause: this.gen.controller.signal.reason,
    });
  }

  private isConnected(): boolean {
    return this.currentState === 'CONNECTED' || this.currentState === 'RECONNECTED' || this.currentState === 'READ_ONLY';
  }

  // ---- lifecycle -------------------------------------------------------------------------

  private startGeneration(join?: SessionCredentials): Generation {
    this.generationCount += 1;
    const gen = new Generation(
      this.generationCount,
      {
        connectString: this.connectString,
        sessionTimeoutMs: this.requestedTimeoutMs,
        spinDelayMs: this.spinDelayMs,
        auth: this.auth,
        sessionId: join?.sessionId,
        sessionPassword: join?.password,
      },
      {
        connected: (g) => this.onConnected(g),
        disconnected: (g) => this.onDisconnected(g),
        expired: (g) => this.onLost(g, 'the server reported the session expired'),
        authFailed: (g) => this.onAuthFailed(g),
        watchFired: () => {
          this.stats.watchEvents += 1;
        },
        watchRemoved: () => {
          this.stats.removeWatches += 1;
        },
      },
    );
    gen.start();
    return gen;
  }

  private onConnected(gen: Generation): void {
    if (gen !== this.gen || this.closed) return;
    clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
    if (!gen.everConnected) {
      gen.everConnected = true;
      this.setState('CONNECTED');
      this.safeEmit('session', { sessionId: gen.sessionId, generation: gen.id, timeoutMs: gen.timeoutMs });
    } else {
      this.setState('RECONNECTED');
    }
  }

  private onDisconnected(gen: Generation): void {
    if (gen !== this.gen || this.closed || !gen.everConnected || this.currentState === 'SUSPENDED') return;
    this.setState('SUSPENDED');
    // The server expires the session one timeout after it last heard from us; we cannot know
    // that instant, so count from the last bytes we received.
    const remaining = Math.max(0, gen.lastReceived + gen.timeoutMs - performance.now());
    this.lostTimer = setTimeout(() => this.onLost(gen, `no contact with the server for the session timeout (${gen.timeoutMs} ms)`), remaining);
    this.lostTimer.unref();
  }

  private onLost(gen: Generation, why: string): void {
    if (gen !== this.gen || gen.dead || this.closed) return;
    clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
    gen.end(new SessionExpiredError('SESSION_EXPIRED', `session 0x${gen.sessionId.toString(16)} lost: ${why}`, { zkCode: ZK_SESSION_EXPIRED }));
    this.setState('LOST');
    if (this.renewOnLoss) this.gen = this.startGeneration();
  }

  private onAuthFailed(gen: Generation): void {
    if (gen !== this.gen || this.closed) return;
    const err = errorFromCode(-115, 'authenticate', undefined);
    this.safeEmit('error', err);
    gen.end(err);
    void this.close();
  }

  private setState(next: ConnectionState): void {
    const prev = this.currentState;
    if (prev === next) return;
    this.currentState = next;
    this.safeEmit('state', next, prev);
  }

  // Listeners run inside the client's socket handler: a throw there would crash the process.
  private safeEmit<E extends keyof SessionEvents>(event: E, ...args: Parameters<SessionEvents[E]>): void {
    try {
      (this.emit as (e: E, ...a: Parameters<SessionEvents[E]>) => boolean)(event, ...args);
    } catch (err) {
      if (event !== 'error' && this.listenerCount('error') > 0) this.safeEmit('error', err instanceof Error ? err : new Error(String(err)));
      else process.emitWarning(`zk-recipes: a ZkSession '${String(event)}' listener threw: ${String(err)}`);
    }
  }

  /**
   * Closes the session: ZooKeeper deletes its ephemeral nodes at once (when connected; if not,
   * they live until the server expires the session). Calls in flight get their replies if they
   * arrive within a short bound; later calls reject with {@link ClosedError}. Idempotent.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      clearTimeout(this.lostTimer);
      this.closeController.abort(new ClosedError('session closed'));
      const gen = this.gen;
      await gen.closeSession(Math.min(2000, gen.timeoutMs));
      gen.end(new ClosedError(`session closed (${this.connectString})`));
      this.setState('CLOSED');
      this.removeAllListeners();
    })();
    return this.closing;
  }

  /** Same as {@link ZkSession.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private assertOpen(): void {
    if (this.closing) throw new ClosedError(`session to ${this.connectString} is closed; create a new ZkSession`);
  }

  // ---- calls -----------------------------------------------------------------------------

  /**
   * Sends one request on the current generation. The returned promise always settles: with the
   * reply, or with {@link SessionExpiredError} / {@link ClosedError} if the session ends first.
   */
  private call<T>(op: keyof SessionCounters, path: string | undefined, send: (gen: Generation, done: (err: RawError | ZooKeeperError | null, value?: T) => void) => void): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError(`${op} on ${path ?? '?'}: session to ${this.connectString} is closed`, { path }));
    const gen = this.gen;
    this.stats[op] += 1;
    return new Promise<T>((resolve, reject) => {
      const untrack = gen.track({ reject });
      try {
        send(gen, (err, value) => {
          untrack();
          if (!err) resolve(value as T);
          // An expired client reports CONNECTION_LOSS for everything: say what really happened.
          else if (gen.dead) reject(new SessionExpiredError('SESSION_EXPIRED', `${op} on ${path}: the session ended`, { zkCode: ZK_SESSION_EXPIRED, path, op }));
          else if (err instanceof ZooKeeperError) reject(err);
          else reject(errorFromCode(err.code, op, path, { cause: err }));
        });
      } catch (err) {
        untrack();
        reject(new InvalidArgumentError(`${op} on ${path}: rejected by the client: ${(err as Error).message}`, { path, cause: err }));
      }
    });
  }

  private retrying<T>(fn: (attempt: number) => Promise<T>): Promise<T> {
    return withRetry(this.retryPolicy, fn, (ms) => delay(ms, this.closeController.signal));
  }

  /**
   * Creates a node and resolves to its actual path (with the sequence suffix for sequential
   * modes). Not retried on connection loss: whether it was applied is unknown, so the error is
   * thrown (recipes use protected names to recover).
   */
  create(path: string, options: CreateOptions = {}): Promise<string> {
    return this.guard(() => {
      const { data, acls, flags } = this.prepareCreate(path, options);
      return this.call<string>('create', path, (g, done) => g.raw.create(path, data, acls, flags, done));
    });
  }

  private prepareCreate(path: string, options: CreateOptions): { data: Buffer | undefined; acls: ReturnType<typeof toRawAcls>; flags: number } {
    validatePath(path);
    const data = toBuffer(options.data, this.maxDataBytes, path);
    const mode = options.mode ?? 'PERSISTENT';
    if (!(mode in CREATE_MODE_FLAGS)) throw new InvalidArgumentError(`mode must be one of ${Object.keys(CREATE_MODE_FLAGS).join(', ')}, got ${describe(mode)}`);
    return { data, acls: toRawAcls(checkAcl(options.acl)), flags: CREATE_MODE_FLAGS[mode] };
  }

  /**
   * Like {@link create}, and also resolves to the new node's {@link Stat} (ZooKeeper's create2),
   * in the same round trip. Not retried on connection loss.
   */
  createWithStat(path: string, options: CreateOptions = {}): Promise<CreatedNode> {
    return this.guard(() => {
      const { data, acls, flags } = this.prepareCreate(path, options);
      return this.call<CreatedNode>('create', path, (g, done) =>
        create2(g.raw, path, data, acls, flags, (err, created, stat) =>
          done(err, err || !created || !stat ? undefined : { type: 'create', path: created, stat: toStat(stat) }),
        ),
      );
    });
  }

  /**
   * Deletes a node (only at `version` if given; -1 = any). Retried on connection loss; a NoNode
   * on a retry is taken as success, since the lost attempt may have deleted it.
   */
  delete(path: string, options: { version?: number } = {}): Promise<void> {
    return this.guard(() => {
      validatePath(path);
      validateVersion(options.version, path);
      const version = options.version ?? -1;
      return this.retrying(async (attempt) => {
        try {
          await this.call<void>('delete', path, (g, done) => g.raw.remove(path, version, done));
        } catch (err) {
          if (attempt > 0 && err instanceof NoNodeError) return;
          throw err;
        }
      });
    });
  }

  /** The node's {@link Stat}, or `null` when it does not exist. Retried on connection loss. */
  exists(path: string): Promise<Stat | null> {
    return this.guard(() => {
      validatePath(path);
      return this.retrying(() => this.call<RawStat | null>('exists', path, (g, done) => g.raw.exists(path, undefined, done))).then((s) => (s ? toStat(s) : null));
    });
  }

  /** The node's data and {@link Stat}. Retried on connection loss. */
  getData(path: string): Promise<DataResult> {
    return this.guard(() => {
      validatePath(path);
      return this.retrying(() => this.rawGetData(path));
    });
  }

  /** Sets the node's data (only at `version` if given) and resolves to the new {@link Stat}. */
  setData(path: string, data: NodeData, options: { version?: number } = {}): Promise<Stat> {
    return this.guard(() => {
      validatePath(path);
      validateVersion(options.version, path);
      const buf = toBuffer(data, this.maxDataBytes, path) ?? null;
      return this.call<RawStat>('setData', path, (g, done) => g.raw.setData(path, buf, options.version ?? -1, done)).then(toStat);
    });
  }

  /** The node's children (names) and its {@link Stat}. Retried on connection loss. */
  getChildren(path: string): Promise<ChildrenResult> {
    return this.guard(() => {
      validatePath(path);
      return this.retrying(() => this.rawGetChildren(path));
    });
  }

  /**
   * Reads data and sets a data watch atomically. `changed` settles on the next change or
   * deletion. Prefer this over {@link existsWatch} to wait for a node to go away: a NoNode here
   * means "gone already" and leaves no watch behind.
   */
  getDataWatch(path: string, options: WatchOptions = {}): Promise<Watched<DataResult>> {
    return this.watched('data', path, options, (w) => this.rawGetData(path, w));
  }

  /** Lists children and sets a child watch atomically. */
  getChildrenWatch(path: string, options: WatchOptions = {}): Promise<Watched<ChildrenResult>> {
    return this.watched('child', path, options, (w) => this.rawGetChildren(path, w));
  }

  /**
   * Checks existence and sets a watch atomically; `changed` fires on creation, change or
   * deletion. The watch on a missing node stays on the server until the node is created or the
   * watch is aborted.
   */
  existsWatch(path: string, options: WatchOptions = {}): Promise<Watched<Stat | null>> {
    return this.watched('data', path, options, (w) =>
      this.call<RawStat | null>('exists', path, (g, done) => {
        const fn = g.watcherFor('data', path);
        g.raw.exists(path, fn, (err, stat) => {
          if (err) g.unsent('data', path, fn);
          // The client files exists-watches on existing nodes in a table it never fires on
          // deletion; file them under data watches instead so NODE_DELETED reaches us.
          else w(g, stat ? ['exists', 'data'] : ['exists'], fn);
          done(err, stat);
        });
      }).then((st) => (st ? toStat(st) : null)),
    );
  }

  /**
   * Runs a watch-setting read. `read` gets an `arm` function that its reply callback must call
   * synchronously on success: a notification can follow the reply in the same socket chunk.
   */
  private watched<T>(kind: 'data' | 'child', path: string, options: WatchOptions, read: (arm: Arm) => Promise<T>): Promise<Watched<T>> {
    return this.guard(async () => {
      validatePath(path);
      const signal = checkSignal(options.signal);
      signal?.throwIfAborted();
      const changed = deferred<WatchEvent>();
      let remove: (() => void) | undefined;
      const onAbort = (): void => {
        remove?.();
        changed.reject(signal?.reason);
      };
      const listener = {
        resolve: (e: WatchEvent) => {
          signal?.removeEventListener('abort', onAbort);
          changed.resolve(e);
        },
        reject: (e: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          changed.reject(e);
        },
      };
      const arm: Arm = (g, tables, fn) => {
        remove = g.attach(kind, path, tables, fn, listener);
      };
      const result = await this.retrying(() => read(arm));
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      return { result, changed: changed.promise };
    });
  }

  private rawGetData(path: string, arm?: Arm): Promise<DataResult> {
    return this.call<DataResult>('getData', path, (g, done) => {
      const fn = arm ? g.watcherFor('data', path) : undefined;
      g.raw.getData(path, fn, (err, data, stat) => {
        if (fn) {
          if (err) g.unsent('data', path, fn);
          else arm?.(g, ['data'], fn);
        }
        done(err, err ? undefined : { data: data ?? Buffer.alloc(0), stat: toStat(stat) });
      });
    });
  }

  private rawGetChildren(path: string, arm?: Arm): Promise<ChildrenResult> {
    return this.call<ChildrenResult>('getChildren', path, (g, done) => {
      const fn = arm ? g.watcherFor('child', path) : undefined;
      g.raw.getChildren(path, fn, (err, children, stat) => {
        if (fn) {
          if (err) g.unsent('child', path, fn);
          else arm?.(g, ['child'], fn);
        }
        done(err, err ? undefined : { children, stat: toStat(stat) });
      });
    });
  }

  /**
   * Runs operations as one atomic transaction. On failure rejects with the typed error of the
   * first failing op, whose `opIndex` says which. Expected version 0 is honoured (the client's
   * own builder silently turns it into "any version"). Not retried on connection loss.
   */
  multi(ops: readonly Op[]): Promise<OpResult[]> {
    return this.guard(() => {
      if (!Array.isArray(ops) || ops.length === 0) throw new InvalidArgumentError(`ops must be a non-empty array, got ${describe(ops)}`);
      const prepared = ops.map((op, i) => this.prepareOp(op, i));
      return this.call<OpResult[]>('multi', prepared[0]?.path, (g, done) =>
        rawMulti(g.raw, prepared, (err, results) => {
          if (err === null) return done(null, results.map(toOpResult));
          // The failing op is the first result with a code other than OK or "rolled back".
          const index = Array.isArray(results) ? results.findIndex((r) => r.type === MULTI_RESULT_TYPES.ERROR && r.err !== 0 && r.err !== -2) : -1;
          const failed = index < 0 ? undefined : results[index];
          if (failed?.err === undefined) return done(err);
          done(errorFromCode(failed.err, 'multi', prepared[index]?.path, { opIndex: index, cause: err }));
        }),
      );
    });
  }

  private prepareOp(op: Op, i: number): Op & { data?: Buffer } {
    if (op === null || typeof op !== 'object') throw new InvalidArgumentError(`ops[${i}] must be an object, got ${describe(op)}`);
    validatePath(op.path, `ops[${i}].path`);
    switch (op.type) {
      case 'create': {
        const mode = op.mode ?? 'PERSISTENT';
        if (!(mode in CREATE_MODE_FLAGS)) throw new InvalidArgumentError(`ops[${i}].mode is invalid: ${describe(mode)}`);
        return { type: 'create', path: op.path, data: toBuffer(op.data, this.maxDataBytes, op.path), mode, acl: checkAcl(op.acl) };
      }
      case 'delete':
      case 'check':
        validateVersion(op.version, op.path);
        return { type: op.type, path: op.path, version: op.version ?? -1 };
      case 'setData':
        validateVersion(op.version, op.path);
        return { type: 'setData', path: op.path, data: toBuffer(op.data, this.maxDataBytes, op.path) ?? Buffer.alloc(0), version: op.version ?? -1 };
      default:
        throw new InvalidArgumentError(`ops[${i}].type must be create, delete, setData or check, got ${describe((op as { type: unknown }).type)}`);
    }
  }

  /** Creates `path` and any missing ancestors as persistent nodes; existing ones are fine. */
  mkdirp(path: string, options: { data?: NodeData; acl?: readonly import('./types.js').Acl[] } = {}): Promise<void> {
    return this.guard(async () => {
      validatePath(path);
      if (path === '/') return;
      try {
        await this.create(path, { data: options.data, acl: options.acl });
      } catch (err) {
        if (err instanceof NodeExistsError) return;
        if (!(err instanceof NoNodeError)) throw err;
        await this.mkdirp(parentOf(path), { acl: options.acl });
        await this.mkdirp(path, options);
      }
    });
  }

  /** Deletes `path` and everything below it; a node already gone is fine. */
  deleteRecursive(path: string): Promise<void> {
    return this.guard(async () => {
      validatePath(path);
      if (path === '/') throw new InvalidArgumentError('refusing to delete the root node');
      let children: string[];
      try {
        children = (await this.getChildren(path)).children;
      } catch (err) {
        if (err instanceof NoNodeError) return;
        throw err;
      }
      for (const c of children) await this.deleteRecursive(joinPath(path, c));
      try {
        await this.delete(path);
      } catch (err) {
        if (err instanceof NoNodeError) return;
        // A child appeared meanwhile: go again.
        if ((err as ZooKeeperError).code === 'NOT_EMPTY') return this.deleteRecursive(path);
        throw err;
      }
    });
  }

  // Argument errors are thrown synchronously by the checks; surface them as rejections.
  private guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      this.assertOpen();
      return fn();
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

function toOpResult(r: { type: number; path?: string; stat?: RawStat }): OpResult {
  switch (r.type) {
    case MULTI_RESULT_TYPES.CREATE:
      return { type: 'create', path: r.path ?? '' };
    case MULTI_RESULT_TYPES.DELETE:
      return { type: 'delete' };
    case MULTI_RESULT_TYPES.SET_DATA:
      return { type: 'setData', stat: toStat(r.stat as RawStat) };
    default:
      return { type: 'check' };
  }
}

function checkAcl(acl: unknown): readonly import('./types.js').Acl[] {
  if (acl === undefined) return Acls.OPEN;
  if (!Array.isArray(acl) || acl.length === 0) throw new InvalidArgumentError(`acl must be a non-empty array, got ${describe(acl)}`);
  for (const [i, a] of acl.entries()) {
    const e = a as Partial<import('./types.js').Acl>;
    if (typeof e !== 'object' || typeof e.scheme !== 'string' || typeof e.id !== 'string' || typeof e.perms !== 'number' || e.perms < 0 || e.perms > 31) {
      throw new InvalidArgumentError(`acl[${i}] must be { perms: 0..31, scheme: string, id: string }, got ${describe(a)}`);
    }
  }
  return acl as readonly import('./types.js').Acl[];
}

function validateConnectString(s: unknown): void {
  if (typeof s !== 'string' || s.trim() === '') throw new InvalidArgumentError(`connectString must be a non-empty "host:port[,host:port][/chroot]" string, got ${describe(s)}`);
  const slash = s.indexOf('/');
  const hosts = slash >= 0 ? s.slice(0, slash) : s;
  if (slash >= 0 && s.length > slash + 1) validatePath(s.slice(slash), 'chroot');
  for (const h of hosts.split(',')) {
    const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(h.trim());
    const port = m?.[2] === undefined ? 2181 : Number(m[2]);
    if (!m || port < 1 || port > 65535) throw new InvalidArgumentError(`connectString has an invalid host "${h}": expected host:port`);
  }
}

function validateAuth(auth: unknown): readonly AuthInfo[] {
  if (auth === undefined) return [];
  if (!Array.isArray(auth)) throw new InvalidArgumentError(`auth must be an array of { scheme, credentials }, got ${describe(auth)}`);
  return auth.map((a: unknown, i) => {
    const e = a as { scheme?: unknown; credentials?: unknown };
    if (typeof e?.scheme !== 'string' || e.scheme === '' || typeof e.credentials !== 'string') {
      throw new InvalidArgumentError(`auth[${i}] must be { scheme: string, credentials: string }, got ${describe(a)}`);
    }
    return { scheme: e.scheme, credentials: e.credentials };
  });
}
