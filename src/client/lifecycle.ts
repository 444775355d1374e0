/**
 * The session's lifecycle: connection states, the loss clock, generations (one
 * node-zookeeper-client instance per ZooKeeper session) and close. When is a session lost? Here.
 * {@link ZkSession} adds the requests on top.
 *
 * @internal
 * @module
 */
import { points } from '../observability/channels.js';
import { EventEmitter } from 'eventemitter3';
import { ClosedError, InvalidArgumentError, OperationTimeoutError, SessionExpiredError } from '../errors.js';
import { deferred, raceAbort } from '../util/abort.js';
import { DEFAULT_MAX_PACKET_BYTES } from './encoding.js';
import { errorFromCode, ZK_SESSION_EXPIRED } from './error-map.js';
import { Generation } from './generation.js';
import type { RetryPolicy } from './retry.js';
import type { AuthInfo, ConnectionState } from './types.js';
import { checkTls, serverCount, type ResolvedTls, type TlsOptions } from './tls.js';
import type { TlsError } from '../errors.js';
import { checkSasl, type ResolvedSasl, type SaslOptions } from './sasl.js';
import type { AuthFailedError } from '../errors.js';
import type { AclProvider } from './acl.js';
import { checkBoolean, checkInt, checkOptions, checkSignal, checkTimeout, describe, optionKeys, validatePath } from './validate.js';
import { ownedController } from '../util/signals.js';

/**
 * Whether a session in `state` can be sent requests now (what `waitConnected` waits for).
 *
 * @internal
 */
export function isConnectedState(state: ConnectionState): boolean {
  return state === 'CONNECTED' || state === 'RECONNECTED' || state === 'READ_ONLY';
}

/**
 * `LOST` is raised once the loss clock (what the ensemble's leader surely heard, see
 * `loss-clock.ts`) is this fraction of the session timeout old. The leader cannot expire the
 * session before the full timeout from that instant (and it rounds up to its next tick); the
 * rest is slack for our timer firing late on a busy event loop.
 */
const LOSS_FRACTION = 0.95;

/** When the session may be expired by the server at the earliest, minus the slack. */
function lossDeadline(gen: Generation): number {
  return gen.lastHeard + gen.timeoutMs * LOSS_FRACTION;
}

/** Options of a {@link ZkSession}. @group Sessions */
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
  /**
   * SASL credentials (DIGEST-MD5 only), authenticated on every connection before any other
   * request; a refusal rejects {@link ZkSession.connect} (and ends the session) with
   * {@link AuthFailedError}. Guide: [SASL](../../docs/security.md#sasl).
   */
  sasl?: SaslOptions;
  /** Largest node data accepted, bytes. Default 1 000 000 (the server drops the connection near 1 MiB). */
  maxDataBytes?: number;
  /**
   * Largest request accepted, bytes, as the server counts it against its `jute.maxbuffer`
   * (default 1 048 575): a bigger one is refused with {@link InvalidArgumentError} before it is
   * sent, because the server would drop the connection. Raise it only together with the
   * servers' `jute.maxbuffer`.
   */
  maxPacketBytes?: number;
  /**
   * Start a new session automatically after `LOST`. Default true. When false, `LOST` is final:
   * calls and {@link ZkSession.waitConnected} (so every recipe's waits) reject with
   * {@link SessionExpiredError}.
   */
  renewOnLoss?: boolean;
  /**
   * The ACL of every node created without an explicit `acl` (what recipes and `mkdirp` create,
   * parents included), per path if needed; the open ACL without it. A recipe's own `acl`
   * option comes first. See {@link AclProvider} and [Security](../../docs/security.md).
   */
  aclProvider?: AclProvider;
  /** @internal Join an existing session (the test kit uses it to force an expiry). */
  join?: SessionCredentials;
  /**
   * Connect over TLS (to the servers' `secureClientPort`), with these `node:tls` options; see
   * {@link TlsOptions} and {@link tlsFromFiles}. Before the first connection, a handshake refused
   * by every server of the connect string twice in a row fails the session with a
   * {@link TlsError} (`connect` rejects with it); later, failed handshakes are retried with the
   * reconnect backoff and reported as `error` events, until the session is lost or closed.
   */
  tls?: TlsOptions;
}

/** The keys of {@link SessionOptions} (a misspelled one is refused). @internal */
export const SESSION_OPTION_KEYS = optionKeys<SessionOptions>({
  sessionTimeoutMs: true,
  connectTimeoutMs: true,
  spinDelayMs: true,
  retry: true,
  auth: true,
  sasl: true,
  maxDataBytes: true,
  maxPacketBytes: true,
  renewOnLoss: true,
  aclProvider: true,
  join: true,
  tls: true,
});

/** A session's id and password: enough to join it from another client. @group Sessions */
export interface SessionCredentials {
  /** The 8-byte session id. */
  sessionId: Buffer;
  /** The 16-byte session password. */
  password: Buffer;
}

/** Information about an established session. @group Sessions */
export interface SessionInfo {
  /** Server-assigned session id. */
  sessionId: bigint;
  /** 1 for the first session of this object, incremented for each new session after `LOST`. */
  generation: number;
  /** Negotiated session timeout, ms. */
  timeoutMs: number;
}

/** Typed events of a {@link ZkSession}. @group Sessions */
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
 * @group Sessions
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
  /** `sync` requests sent (each retry counts). */
  sync: number;
  /** `addWatch` requests sent (persistent watches; each retry counts). */
  addWatch: number;
  /** `getAcl` requests sent (each retry counts). */
  getAcl: number;
  /** `setAcl` requests sent (each retry counts). */
  setAcl: number;
  /** Watch notifications delivered to this session. */
  watchEvents: number;
  /** Heartbeats sent (a `sync`, which only the ensemble's leader answers, once nothing only it answers was answered for a sixth of the timeout). */
  heartbeat: number;
}

/** Options of a blocking wait. @group Sessions */
export interface WaitOptions {
  /** Give up after this many ms. */
  timeoutMs?: number;
  /** Give up when this aborts (rejects with its reason). */
  signal?: AbortSignal;
}

/** The keys of {@link WaitOptions}. @internal */
export const WAIT_OPTION_KEYS = optionKeys<WaitOptions>({ timeoutMs: true, signal: true });

/**
 * Connection states and the loss clock of a {@link ZkSession} (its base class): see the class
 * documentation of {@link ZkSession} for when `SUSPENDED` and `LOST` are raised.
 *
 * @internal
 */
export abstract class SessionLifecycle extends EventEmitter<SessionEvents> {
  protected gen!: Generation;
  private generationCount = 0;
  private currentState: ConnectionState = 'CONNECTING';
  private lostTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private readonly requestedTimeoutMs: number;
  private readonly spinDelayMs: number;
  private readonly auth: readonly AuthInfo[];
  private readonly sasl: ResolvedSasl | undefined;
  /** Why the session ended, when authentication failed. */
  private authFailure: AuthFailedError | undefined;
  private readonly renewOnLoss: boolean;
  private readonly tls: ResolvedTls | undefined;
  /** Why the session was closed by itself (a refused TLS handshake), for waits still pending. */
  private refusal: Error | undefined;
  /**
   * How long a call waits for a connection before it rejects unsent with
   * {@link ConnectionLossError} (`sent: false`), and how long {@link ZkSession.connect} waits, ms
   * (the `connectTimeoutMs` option).
   */
  readonly connectTimeoutMs: number;
  /** Largest request the servers accept, bytes (the `maxPacketBytes` option). */
  protected readonly maxPacketBytes: number;
  /** Aborts on close. */
  protected readonly closeController = ownedController();
  /** Request and watch counters. */
  protected readonly stats: SessionCounters = {
    create: 0,
    delete: 0,
    exists: 0,
    getData: 0,
    setData: 0,
    getChildren: 0,
    multi: 0,
    removeWatches: 0,
    sync: 0,
    addWatch: 0,
    getAcl: 0,
    setAcl: 0,
    watchEvents: 0,
    heartbeat: 0,
  };

  /** Validates the lifecycle's options; {@link SessionLifecycle.begin} starts connecting. */
  protected constructor(
    /** The connect string this session was created with. */
    readonly connectString: string,
    options: SessionOptions,
  ) {
    super();
    validateConnectString(connectString);
    checkOptions(options, 'new ZkSession', SESSION_OPTION_KEYS);
    this.requestedTimeoutMs = checkInt(options.sessionTimeoutMs, 'sessionTimeoutMs', 100, 24 * 3600_000, 10_000);
    this.connectTimeoutMs = checkTimeout(options.connectTimeoutMs, 'connectTimeoutMs') ?? 15_000;
    this.spinDelayMs = checkInt(options.spinDelayMs, 'spinDelayMs', 0, 60_000, 200);
    this.auth = validateAuth(options.auth);
    this.sasl = checkSasl(options.sasl);
    this.renewOnLoss = checkBoolean(options.renewOnLoss, 'renewOnLoss', true);
    this.maxPacketBytes = checkInt(options.maxPacketBytes, 'maxPacketBytes', 1024, 100 * 1024 * 1024, DEFAULT_MAX_PACKET_BYTES);
    this.tls = checkTls(options.tls);
  }

  /** Starts the first generation, once every option was validated (nothing runs before). */
  protected begin(join: SessionCredentials | undefined): void {
    this.gen = this.startGeneration(join);
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

  /**
   * @internal The loss clock's reading, in `performance.now()` ms: the ensemble's leader heard of
   * the current session no earlier than this, so the server cannot expire it before this plus
   * {@link timeoutMs}. Meaningful once connected (the zkr command line tool times its kills by it).
   */
  get lossClock(): number {
    return this.gen.lastHeard;
  }

  /** Whether a new session is started after `LOST` (the `renewOnLoss` option). */
  get renewsOnLoss(): boolean {
    return this.renewOnLoss;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** @internal The current session's id and password (for the test kit's forced expiry). */
  credentials(): SessionCredentials {
    return { sessionId: this.gen.raw.getSessionId(), password: this.gen.raw.getSessionPassword() };
  }

  /**
   * @internal What a second client needs to connect as this one does (for the test kit's forced
   * expiry): its SASL login, auth and TLS options. A server that requires SASL refuses a client
   * without it, and a TLS port one without TLS.
   */
  identity(): Pick<SessionOptions, 'sasl' | 'auth' | 'tls'> {
    return { ...(this.sasl && { sasl: this.sasl }), auth: this.auth, ...(this.tls && { tls: this.tls as TlsOptions }) };
  }

  /**
   * Resolves once connected (`CONNECTED` or `RECONNECTED`); rejects on close, timeout or abort,
   * and with {@link SessionExpiredError} once the session is `LOST` and `renewOnLoss` is off
   * (it will never connect again).
   */
  async waitConnected(opts: WaitOptions = {}): Promise<void> {
    const o = checkOptions(opts, 'waitConnected', WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    this.assertOpen();
    // An aborted signal is a rejection, connected or not (as the platform's APIs do).
    signal?.throwIfAborted();
    if (this.isConnected()) return;
    const done = deferred<void>();
    const onState = (): void => {
      if (this.isConnected()) done.resolve();
      else if (this.currentState === 'CLOSED') done.reject(this.refusal ?? this.authFailure ?? new ClosedError('session closed while waiting to connect'));
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

  protected isConnected(): boolean {
    return isConnectedState(this.currentState);
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
        sasl: this.sasl,
        maxPacketBytes: this.maxPacketBytes,
        sessionId: join?.sessionId,
        sessionPassword: join?.password,
        tls: this.tls,
      },
      {
        connected: (g) => this.onConnected(g),
        disconnected: (g) => this.onDisconnected(g),
        expired: (g) => this.onLost(g, 'the server reported the session expired'),
        authFailed: (g, err) => this.onAuthFailed(g, err),
        watchFired: () => {
          this.stats.watchEvents += 1;
        },
        watchRemoved: () => {
          this.stats.removeWatches += 1;
        },
        heartbeatSent: () => {
          this.stats.heartbeat += 1;
        },
        failed: (err) => this.report(err),
        tlsFailed: (g, err, inARow) => this.onTlsFailed(g, err, inARow),
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
    const remaining = Math.max(0, lossDeadline(gen) - performance.now());
    this.lostTimer = setTimeout(() => {
      try {
        this.onLost(gen, `nothing proved for ${Math.round(gen.timeoutMs * LOSS_FRACTION)} ms that the ensemble's leader heard of the session (session timeout ${gen.timeoutMs} ms)`);
      } catch (err) {
        // Never out of a timer (an uncaught exception ends the process): report it.
        this.report(err);
      }
    }, remaining);
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

  private onAuthFailed(gen: Generation, failure?: AuthFailedError): void {
    if (gen !== this.gen || this.closed) return;
    const err = failure ?? (errorFromCode(-115, 'authenticate', undefined) as AuthFailedError);
    this.authFailure = err;
    this.safeEmit('error', err);
    gen.end(err);
    void this.close();
  }

  /**
   * A TLS handshake failed. Before this object ever connected, a configuration error (a CA,
   * certificate or host name that does not match) is the likely cause and retrying cannot fix it:
   * once every server refused twice in a row, the session closes and its waits reject with the
   * error. Later (a certificate rotated to one we refuse), it may be fixed while we run: the
   * generation retries with its backoff; the first failure of a streak is reported.
   */
  private onTlsFailed(gen: Generation, err: TlsError, inARow: number): void {
    if (gen !== this.gen || this.closed) return;
    if (gen.id === 1 && !gen.everConnected) {
      if (inARow < 2 * serverCount(this.connectString)) return;
      this.refusal = err;
      this.safeEmit('error', err);
      gen.end(err);
      void this.close();
    } else if (inARow === 1) {
      this.report(err);
    }
  }

  private setState(next: ConnectionState): void {
    const prev = this.currentState;
    if (prev === next) return;
    this.currentState = next;
    if (points.sessionState.hasSubscribers) points.sessionState.publish({ sessionId: this.gen.sessionId, state: next, previous: prev, connectString: this.connectString });
    this.safeEmit('state', next, prev);
  }

  /** Reports a failure of the session's own machinery (never thrown: it runs in timers). */
  private report(err: unknown): void {
    if (this.listenerCount('error') > 0) this.safeEmit('error', err instanceof Error ? err : new Error(String(err)));
    else process.emitWarning(`zk-recipes: ZkSession to ${this.connectString}: ${String(err)}`);
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

  protected assertOpen(): void {
    if (this.closing) throw new ClosedError(`session to ${this.connectString} is closed; create a new ZkSession`, { cause: this.authFailure });
  }
}

function validateConnectString(s: unknown): void {
  if (typeof s !== 'string' || s.trim() === '') throw new InvalidArgumentError(`connectString must be a non-empty "host:port[,host:port][/chroot]" string, got ${describe(s)}`);
  const slash = s.indexOf('/');
  const hosts = slash >= 0 ? s.slice(0, slash) : s;
  if (slash >= 0) {
    if (s.length === slash + 1) throw new InvalidArgumentError(`connectString ${describe(s)} ends with "/": give a chroot path after it, or none`);
    validatePath(s.slice(slash), 'chroot');
  }
  // As node-zookeeper-client reads it: host, then an optional port after the one ':' (so no
  // IPv6 literals); anything else would connect elsewhere or crash inside the client.
  for (const h of hosts.split(',')) {
    const m = /^([^:\s[\]]+)(?::(\d{1,5}))?$/.exec(h);
    const port = m?.[2] === undefined ? 2181 : Number(m[2]);
    if (!m || port < 1 || port > 65535) {
      throw new InvalidArgumentError(`connectString has an invalid server "${h}": expected host or host:port with a port from 1 to 65535 (IPv6 literals are not supported), in ${describe(s)}`);
    }
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
