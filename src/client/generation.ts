/**
 * One underlying node-zookeeper-client instance and the ZooKeeper session it holds. A
 * {@link ZkSession} replaces its generation after the session is lost, because an expired
 * node-zookeeper-client instance cannot be revived.
 *
 * @internal
 * @module
 */
import type { Socket } from 'node:net';
import { LossClock } from './loss-clock.js';
import { ownedController } from '../util/signals.js';
import { backoffDelay, type Backoff } from './retry.js';
import { CM_STATE, createRawClient, emitChildrenChanged, forgetWatcher, hasOneShotWatcher, sendSync, interceptHandshake, registerWatcher, silence, removeWatches, type RawClient, type RawError, type RawEvent, type RawWatchKind, type WatcherTableName } from './nzc.js';
import { WatchRegistry } from './watch-registry.js';
import { detectTlsPorts, secureConnections, type ResolvedTls, type TlsHooks } from './tls.js';
import type { TlsError } from '../errors.js';
import { saslGate, type ResolvedSasl } from './sasl.js';
import { errorFromCode } from './error-map.js';
import type { AuthFailedError } from '../errors.js';
import type { AuthInfo, WatchEvent, WatchEventType } from './types.js';
import { WatchEntries } from './watch-entries.js';

/** Something waiting on this generation that must be settled when it ends. */
interface Pending {
  reject(reason: unknown): void;
}

/**
 * One watched (kind, path) of a generation, shared by every caller waiting on it: one stable
 * nzc watcher function per (kind, path).
 */
export interface WatchEntry {
  readonly kind: RawWatchKind;
  readonly path: string;
  readonly fn: (event: RawEvent) => void;
  /** Its callers: one alone (the usual case: no Set per watch), or several. */
  listeners: Listeners;
  fired: boolean;
  /** Reads sent with this entry's watcher and not answered yet. */
  inflight: number;
  /** A read set this watch on the server. */
  armed: boolean;
}

/** One caller waiting for a watch to fire. */
export interface WatchListener {
  resolve(event: WatchEvent): void;
  reject(reason: unknown): void;
}

/** A watch's callers: none, one, or a set of two or more. */
type Listeners = WatchListener | Set<WatchListener> | undefined;

/** `ls` with `l` (filed once). */
function withListener(ls: Listeners, l: WatchListener): Listeners {
  if (ls === undefined || ls === l) return l;
  if (ls instanceof Set) return ls.add(l);
  return new Set([ls, l]);
}

/** The callers in `ls`, as a list (a copy: a caller may detach another meanwhile). */
function listenersOf(ls: Listeners): readonly WatchListener[] {
  return ls === undefined ? [] : ls instanceof Set ? [...ls] : [ls];
}

const EVENT_TYPES: Record<number, WatchEventType> = {
  1: 'NODE_CREATED',
  2: 'NODE_DELETED',
  3: 'NODE_DATA_CHANGED',
  4: 'NODE_CHILDREN_CHANGED',
};

/**
 * How long a connection attempt may take from TCP connect to the server's handshake reply. A
 * live server answers in milliseconds, but one that is starting up (ZooKeeper 3.8.0 accepts
 * connections before its database is loaded, then drops them silently) never does: bound the
 * wait by the client's connect timeout, 1/3 of the session timeout (so a retry still fits
 * before the session could expire) and 2 s, whichever is least, but at least 500 ms.
 */
export function handshakeTimeout(connectTimeoutMs: number, sessionTimeoutMs: number): number {
  return Math.max(500, Math.min(connectTimeoutMs, sessionTimeoutMs / 3, 2000));
}

/**
 * The pause before a new connection attempt once attempts die after their handshake without
 * having worked (see {@link Generation}): 100 ms doubling per such attempt, capped at a quarter
 * of the session timeout and 2 s, each jittered between half and all of it (`backoffDelay`).
 */
export function reconnectBackoff(sessionTimeoutMs: number): Backoff {
  const maxDelayMs = Math.max(100, Math.min(2000, Math.floor(sessionTimeoutMs / 4)));
  return { baseDelayMs: 100, maxDelayMs };
}

/**
 * A connection attempt from its handshake reply on. It *works* once the server answered a
 * request sent on it after the handshake (re-registered watches, a call, a heartbeat).
 */
interface Attempt {
  readonly handshakeSentAt: number;
  works: boolean;
}

/**
 * The connection is dropped (`SUSPENDED`, and the client fails over) once the loss clock is
 * this fraction of the session timeout old. With a heartbeat every T/6 an idle session's clock
 * trails by at most T/2 plus a watchdog period and a round trip (the heartbeat two back is the
 * latest answered a relay margin before the last one was sent), so this never fires while the
 * leader hears us; and `LOST` (0.95 T) leaves 0.15 T to fail over to another member.
 */
export const SUSPEND_FRACTION = 0.8;

/**
 * A heartbeat `sync` goes out once nothing only the leader answers was answered for T/6. Fewer
 * (T/3) would leave an idle session's clock up to 2T/3 old, and a loaded event loop too little
 * slack before `LOST`; each costs the leader one cheap request.
 */
export const HEARTBEATS_PER_TIMEOUT = 6;

/** Hooks a generation calls into its session. */
export interface GenerationHooks {
  connected(gen: Generation): void;
  disconnected(gen: Generation): void;
  expired(gen: Generation): void;
  /** Authentication failed for good (`err` says how; none: the client's own auth info was refused). */
  authFailed(gen: Generation, err?: AuthFailedError): void;
  watchFired(): void;
  watchRemoved(): void;
  heartbeatSent(): void;
  /** Something failed in a timer of this generation (reported, never thrown). */
  failed(err: unknown): void;
  /** A TLS handshake failed; `inARow` counts the failures since a handshake last completed. */
  tlsFailed(gen: Generation, err: TlsError, inARow: number): void;
}

/** Error codes node-zookeeper-client makes up locally: such a reply proves nothing about the server. */
/** A server before 3.9 answers a removal by a watcher type it does not know so. */
const MARSHALLING_ERROR = -5;

const LOCAL_CODES = new Set([-4 /* CONNECTION_LOSS */, -112 /* SESSION_EXPIRED */, -115 /* AUTH_FAILED */]);

/** Whether a reply (`err` null, or a server error code) came from the server. */
export function answeredByServer(err: RawError | { code?: unknown } | null | undefined): boolean {
  return !err || (typeof err.code === 'number' && !LOCAL_CODES.has(err.code));
}

/** Options of a generation. */
export interface GenerationOptions {
  connectString: string;
  sessionTimeoutMs: number;
  spinDelayMs: number;
  auth: readonly AuthInfo[];
  /** SASL credentials, authenticated on every connection before anything else is sent. */
  sasl?: ResolvedSasl;
  /** Largest request the servers accept: watch re-registration is split under it. */
  maxPacketBytes: number;
  sessionId?: Buffer;
  sessionPassword?: Buffer;
  /** Connect over TLS with these options (tls.ts). */
  tls?: ResolvedTls;
}

/** One node-zookeeper-client instance with its own pending calls, watches and watchdog. */
export class Generation {
  readonly raw: RawClient;
  /** Every call, wait and held lock of the session follows its signal: one listener for its whole life. */
  readonly controller = ownedController();
  /** Set once the session of this generation is over (expired, lost or closed). */
  dead = false;
  everConnected = false;
  /**
   * The loss clock: what the ensemble's leader has surely heard of this session (see
   * `loss-clock.ts`). A notification, a late reply or a follower's answer alone proves nothing.
   */
  readonly clock = new LossClock(performance.now());
  /** The connection attempt since its handshake reply (undefined before, and once it closed). */
  private attempt: Attempt | undefined;
  /** Attempts in a row that died after their handshake without having worked. */
  private failedAttempts = 0;
  private readonly stopReconnect: () => void;
  private readonly pending = new Set<Pending>();
  /** Requests waiting for a connection, in call order (they are sent only when connected). */
  private readonly waiting: { send(): void; timer: NodeJS.Timeout }[] = [];
  private readonly watches = new WatchEntries();
  /** Persistent watches (addWatch) of this session. */
  readonly persistent: WatchRegistry;
  /** The servers have no typed removal of persistent watches (before 3.9): remove them with `any`. */
  private untypedRemoval = false;
  /** Serial number of the current connection (one-shot reads ride an addWatch sent on it). */
  private connectionSerial = 0;
  private socket: Socket | undefined;
  /** The session id buffer last decoded, and its value (see sessionId). */
  private idBuffer: Buffer | undefined;
  private decodedId = 0n;
  private socketSince = performance.now();
  private handshakeSentAt = 0;
  private heartbeatInFlight = false;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(
    readonly id: number,
    options: GenerationOptions,
    private readonly hooks: GenerationHooks,
  ) {
    this.raw = createRawClient(options.connectString, {
      sessionTimeoutMs: options.sessionTimeoutMs,
      spinDelayMs: options.spinDelayMs,
      sessionId: options.sessionId,
      sessionPassword: options.sessionPassword,
    });
    this.secure(options.tls);
    for (const a of options.auth) this.raw.addAuthInfo(a.scheme, Buffer.from(a.credentials));
    this.persistent = new WatchRegistry({
      removeOnServer: (path, recursive) => this.removePersistent(path, recursive),
      hasOneShot: (path) => hasOneShotWatcher(this.raw, path),
      childrenChanged: (path) => emitChildrenChanged(this.raw, path),
      connection: () => this.connectionSerial,
    });
    this.stopReconnect = interceptHandshake(this.raw, {
      allowed: () => !this.dead,
      sending: () => {
        this.handshakeSentAt = performance.now();
      },
      reconnectDelay: () => this.reconnectDelay(),
      rewatched: () => this.worked(this.handshakeSentAt),
      maxPacketBytes: options.maxPacketBytes,
      persistentWatches: () => this.persistent.lists(),
      notified: (type, path, zxid) => {
        if (!this.dead) this.persistent.notified(type, path, zxid);
      },
      gateFrames: options.sasl ? (handle) => saslGate(handle, options.sasl as ResolvedSasl, (err) => this.live() && this.hooks.authFailed(this, err)) : undefined,
      saslRequired: () => {
        if (this.live()) this.hooks.authFailed(this, errorFromCode(-124, 'request', undefined) as AuthFailedError);
      },
    });
    // Callbacks run inside the client's socket handler: they only update state and settle
    // promises, never throw.
    this.raw.on('connected', () => {
      if (!this.live()) return;
      this.attempt = { handshakeSentAt: this.handshakeSentAt, works: false };
      this.connectionSerial += 1;
      // Before the state event: its listeners' new calls must go out behind the older ones.
      this.flushUnsent();
      // The handshake re-registered them; their handles hear of the gap (calls they make go out behind).
      this.persistent.reset();
      this.hooks.connected(this);
    });
    this.raw.on('disconnected', () => {
      this.clock.disconnected();
      if (this.live()) this.hooks.disconnected(this);
    });
    this.raw.on('expired', () => this.live() && this.hooks.expired(this));
    this.raw.on('authenticationFailed', () => this.live() && this.hooks.authFailed(this));
  }

  /**
   * Connects over TLS (or, plain, watches for servers that want TLS). A failed handshake counts as an attempt that did not work: the next one
   * waits the reconnect backoff (a refused certificate stays refused; see `reconnectDelay`).
   */
  private secure(tls: ResolvedTls | undefined): void {
    let inARow = 0;
    // A plain session learns that a server wanted TLS (see detectTlsPorts).
    (tls ? (c: RawClient, h: TlsHooks) => secureConnections(c, tls, h) : detectTlsPorts)(this.raw, {
      failed: (err) => {
        if (this.dead) return;
        inARow += 1;
        this.failedAttempts += 1;
        this.hooks.tlsFailed(this, err, inARow);
      },
      secured: () => {
        inARow = 0;
      },
    });
  }

  private live(): boolean {
    return !this.dead;
  }

  /** Starts connecting and the receive watchdog. */
  start(): void {
    this.raw.connect();
    const period = Math.max(20, Math.min(250, Math.floor(this.raw.connectionManager.sessionTimeout / 20)));
    this.watchdog = setInterval(() => {
      try {
        this.checkLiveness();
      } catch (err) {
        // Never out of a timer (an uncaught exception ends the process): report it.
        this.hooks.failed(err);
      }
    }, period);
    this.watchdog.unref();
  }

  /**
   * The server answered a request we sent at `sentAt`; `viaLeader` when only the leader could
   * have answered it (a sync or a successful write).
   */
  answered(sentAt: number, viaLeader: boolean): void {
    this.worked(sentAt);
    this.clock.answered(sentAt, performance.now(), viaLeader, this.timeoutMs);
  }

  /** The loss clock's reading: the leader heard of this session no earlier than this. */
  get lastHeard(): number {
    return this.clock.heard;
  }

  /**
   * The server answered a request sent at `sentAt`: if sent on this connection, it works, and
   * its handshake (the leader revalidated or created the session then) counts on the loss clock
   * at its send time. Only then: a server that answers every handshake and then drops the
   * connection (a request it cannot read, say) keeps the session alive on its side, but the
   * session is of no use, so such attempts do not refresh the clock and the session ends `LOST`
   * at its usual deadline instead of reconnecting forever.
   */
  private worked(sentAt: number): void {
    const a = this.attempt;
    if (!a || a.works || sentAt < a.handshakeSentAt) return;
    a.works = true;
    this.failedAttempts = 0;
    this.clock.handshake(a.handshakeSentAt);
  }

  /**
   * Asked before every reconnect: no pause while no attempt died after its handshake since a
   * connection last worked (attempts that fail before the handshake are paced by the client,
   * which pauses after trying every server), but a jittered, capped backoff while attempts keep
   * dying after their handshake: a failure the server reports by dropping the connection (a
   * request it cannot read, a reply we cannot decode) would otherwise repeat as fast as the
   * network allows.
   */
  private reconnectDelay(): number {
    const a = this.attempt;
    this.attempt = undefined;
    if (a && !a.works) this.failedAttempts += 1;
    if (this.failedAttempts === 0) return 0;
    return backoffDelay(reconnectBackoff(this.timeoutMs), this.failedAttempts - 1);
  }

  /** The server this generation's socket is connected to, `host:port` (undefined between connections). */
  get server(): string | undefined {
    const socket = this.raw.connectionManager.socket;
    return socket?.remoteAddress === undefined ? undefined : `${socket.remoteAddress}:${socket.remotePort}`;
  }

  /**
   * Runs every T/20 (at most 250 ms). node-zookeeper-client pings only after a third of the
   * session timeout of silence *in both directions*, and its pings are answered by whichever
   * member we are connected to, so they prove nothing to the leader: send our own heartbeat, a
   * `sync` (which only the leader answers), once no leader-proving request was answered for
   * T/6. The client also has no read timeout and clears its connect timeout on TCP connect, so a
   * silent partition, a hung server or a member cut off from its leader goes unnoticed: drop the
   * socket once the loss clock is {@link SUSPEND_FRACTION} T old, or when a handshake takes too
   * long (see {@link handshakeTimeout}); the client then fails over.
   */
  private checkLiveness(): void {
    const cm = this.raw.connectionManager;
    const now = performance.now();
    if (cm.socket !== this.socket) {
      this.socket = cm.socket;
      this.socketSince = now;
      const socket = this.socket;
      // Reconnecting to a local port nobody listens on can make the kernel pick that very port as
      // the source: the socket connects to itself and would wait for its own handshake reply.
      const dropSelfConnect = (): void => {
        if (socket && socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress) socket.destroy();
      };
      if (socket?.connecting) socket.once('connect', dropSelfConnect);
      else dropSelfConnect();
    }
    if (!this.socket || this.socket.destroyed) return;
    if (cm.state === CM_STATE.CONNECTED) {
      // A reset, not a close: a close leaves our unsent requests in the kernel, which would
      // deliver them once the network heals and so touch the session after we counted it lost.
      // This connection's own answered handshake counts here even before it worked: the kill
      // is about the connection, the loss clock about the session.
      if (now - Math.max(this.clock.heard, this.attempt?.handshakeSentAt ?? -Infinity) > cm.sessionTimeout * SUSPEND_FRACTION) this.socket.resetAndDestroy();
      else if (now - this.clock.proven >= cm.sessionTimeout / HEARTBEATS_PER_TIMEOUT) this.heartbeat();
    } else if (cm.state === CM_STATE.CONNECTING && now - this.socketSince > handshakeTimeout(cm.connectTimeout, cm.sessionTimeout)) {
      this.socket.destroy();
    }
  }

  /** One `sync`, which only the leader answers, to advance the loss clock (one at a time). */
  private heartbeat(): void {
    if (this.heartbeatInFlight) return;
    this.heartbeatInFlight = true;
    const sentAt = performance.now();
    this.hooks.heartbeatSent();
    sendSync(this.raw, '/', (err) => {
      this.heartbeatInFlight = false;
      if (answeredByServer(err)) this.answered(sentAt, err === null);
    });
  }

  /** The negotiated session timeout (the requested one before connecting). */
  get timeoutMs(): number {
    return this.raw.connectionManager.sessionTimeout;
  }

  /** The server-assigned session id (0n before the first connect). */
  get sessionId(): bigint {
    // Read on every grant: decoded once per id. A handshake (the client's, or SASL's) puts a new
    // buffer in place, never writes into the old one, so the buffer names the id.
    const buf = this.raw.connectionManager.sessionId;
    if (buf !== this.idBuffer) {
      this.idBuffer = buf;
      this.decodedId = buf.readBigUInt64BE(0);
    }
    return this.decodedId;
  }

  /** Whether the underlying connection is up. */
  get connected(): boolean {
    return this.raw.connectionManager.state === CM_STATE.CONNECTED;
  }

  /**
   * Runs `send` now if connected, or once connected, in call order. A request is never handed
   * to node-zookeeper-client while disconnected (it would sit in its queue, and could be sent
   * long after its caller gave up): `notSent` runs instead if no connection came up within
   * `waitMs`. Returns a function that withdraws a request not sent yet.
   */
  whenConnected(send: () => void, waitMs: number, notSent: () => void): () => void {
    if (this.connected && this.waiting.length === 0) {
      send();
      return () => undefined;
    }
    const entry = {
      send,
      timer: setTimeout(() => {
        withdraw();
        notSent();
      }, waitMs),
    };
    const withdraw = (): void => {
      clearTimeout(entry.timer);
      const i = this.waiting.indexOf(entry);
      if (i >= 0) this.waiting.splice(i, 1);
    };
    this.waiting.push(entry);
    return withdraw;
  }

  private flushUnsent(): void {
    while (this.connected && !this.dead) {
      const next = this.waiting.shift();
      if (!next) return;
      clearTimeout(next.timer);
      next.send();
    }
  }

  /** Tracks a call so that it is rejected if this generation ends before it settles. */
  track(p: Pending): () => void {
    this.pending.add(p);
    return () => this.pending.delete(p);
  }

  /** The nzc watcher function to pass with a read that sets a watch of `kind` on `path`. */
  watcherFor(kind: RawWatchKind, path: string): (event: RawEvent) => void {
    const entry = this.watches.get(kind, path) ?? this.newEntry(kind, path);
    entry.inflight += 1;
    return entry.fn;
  }

  private newEntry(kind: RawWatchKind, path: string): WatchEntry {
    const e: WatchEntry = {
      kind,
      path,
      listeners: undefined,
      fired: false,
      inflight: 0,
      armed: false,
      // nzc can call one function twice for one event (data and existence tables): fire once.
      fn: (raw: RawEvent) => {
        if (e.fired) return;
        e.fired = true;
        this.watches.delete(e);
        this.hooks.watchFired();
        const event: WatchEvent = { type: EVENT_TYPES[raw.type] ?? 'NODE_DATA_CHANGED', path: raw.path };
        for (const l of listenersOf(e.listeners)) l.resolve(event);
      },
    };
    this.watches.set(e);
    return e;
  }

  /**
   * Adds a listener to the watch a successful read just set. Must run synchronously in the
   * read's reply callback: a notification can follow the reply in the same socket chunk.
   * `sentFn` is the watcher sent with the read; if its entry fired meanwhile (an earlier watch on
   * the same path), the server still set a new watch with our read, so a fresh entry takes it.
   * Returns the entry the listener is filed under (for {@link detach}).
   */
  attach(kind: RawWatchKind, path: string, tables: readonly WatcherTableName[], sentFn: (event: RawEvent) => void, listener: WatchListener): WatchEntry {
    let entry = this.watches.get(kind, path);
    if (entry && entry.fn === sentFn) entry.inflight -= 1;
    else {
      for (const t of tables) forgetWatcher(this.raw, t, path, sentFn);
      entry ??= this.newEntry(kind, path);
      for (const t of tables) registerWatcher(this.raw, t, path, entry.fn);
    }
    entry.armed = true;
    entry.listeners = withListener(entry.listeners, listener);
    return entry;
  }

  /** A read sent with `sentFn` failed: it set no watch. */
  unsent(kind: RawWatchKind, path: string, sentFn: (event: RawEvent) => void): void {
    const entry = this.watches.get(kind, path);
    if (!entry || entry.fn !== sentFn) return;
    entry.inflight -= 1;
    if (entry.listeners === undefined && entry.inflight === 0) this.retire(entry, entry.armed);
  }

  /** `listener` (attached to `entry`) no longer waits: the watch goes once nobody waits for it. */
  detach(entry: WatchEntry, listener: WatchListener): void {
    const ls = entry.listeners;
    if (ls === listener) entry.listeners = undefined;
    else if (ls instanceof Set && ls.delete(listener)) entry.listeners = ls.size > 0 ? ls : undefined;
    else return;
    if (entry.fired || entry.listeners !== undefined || entry.inflight > 0) return;
    this.retire(entry, true);
  }

  /** Removes a watch nobody waits for: locally, and on the server if one was set. */
  private retire(entry: WatchEntry, serverSide: boolean): void {
    this.watches.delete(entry);
    entry.fired = true;
    if (entry.kind === 'child') forgetWatcher(this.raw, 'child', entry.path, entry.fn);
    else for (const t of ['data', 'exists'] as const) forgetWatcher(this.raw, t, entry.path, entry.fn);
    // A persistent registration on the path serves it: removing a one-shot watch there would remove half of that one.
    if (serverSide && !this.dead && this.persistent.mayRemoveOneShot(entry.path)) {
      // Best effort: NO_WATCHER (already fired) or a lost connection are both fine here; after a
      // reconnect the watch is no longer in SetWatches, so the server forgets it then.
      this.hooks.watchRemoved();
      removeWatches(this.raw, entry.path, entry.kind, () => undefined);
    }
    this.persistent.oneShotGone(entry.path);
  }

  /**
   * Removes a persistent watch on the server: by its own type where the server has it (3.9+),
   * else (a server before 3.9 answers MARSHALLING_ERROR, and this generation remembers) by
   * `any`, which the registry only sends once no one-shot watch of the path is left.
   */
  private removePersistent(path: string, recursive: boolean): void {
    if (this.dead) return;
    this.hooks.watchRemoved();
    if (this.untypedRemoval) return removeWatches(this.raw, path, 'any', () => undefined);
    removeWatches(this.raw, path, recursive ? 'recursive' : 'persistent', (err) => {
      if (err?.code !== MARSHALLING_ERROR || this.dead) return;
      this.untypedRemoval = true;
      // Watched again meanwhile (an addWatch or a one-shot read sent after the refused removal,
      // which the server applied to the watch still there): `any` now would remove that too.
      if (!this.persistent.mayRemoveOneShot(path) || hasOneShotWatcher(this.raw, path)) return;
      this.removePersistent(path, recursive);
    });
  }

  /** Number of watches with listeners (for leak checks in tests). */
  get watchCount(): number {
    return this.watches.size + this.persistent.size;
  }

  /**
   * Ends this generation: rejects every pending call and watch with `reason`, aborts its
   * signal, and tears the underlying client down (closing the session when `closeSession`).
   */
  end(reason: unknown): void {
    if (this.dead) return;
    this.dead = true;
    clearInterval(this.watchdog);
    this.stopReconnect();
    this.controller.abort(reason);
    for (const u of this.waiting.splice(0)) clearTimeout(u.timer);
    for (const p of [...this.pending]) p.reject(reason);
    this.pending.clear();
    for (const entry of this.watches.takeAll()) for (const l of listenersOf(entry.listeners)) l.reject(reason);
    this.persistent.endAll(reason);
    this.raw.removeAllListeners();
    // Nothing of an ended generation may reach the server: a closeSession is sent by
    // closeSession() beforehand when the session is closed on purpose, never after a loss.
    silence(this.raw);
  }

  /**
   * Closes the session politely: sends closeSession (so the server deletes our ephemerals at
   * once) and waits up to `waitMs` for the connection to close.
   */
  async closeSession(waitMs: number): Promise<void> {
    if (this.dead) return;
    const cm = this.raw.connectionManager;
    if (cm.state === CM_STATE.CONNECTED) {
      clearInterval(this.watchdog);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.raw.on('disconnected', () => {
          clearTimeout(timer);
          resolve();
        });
        this.raw.close();
      });
    }
  }
}
