/**
 * One underlying node-zookeeper-client instance and the ZooKeeper session it holds. A
 * {@link ZkSession} replaces its generation after the session is lost, because an expired
 * node-zookeeper-client instance cannot be revived.
 *
 * @internal
 * @module
 */
import type { Socket } from 'node:net';
import { CM_STATE, createRawClient, forgetWatcher, registerWatcher, removeWatches, type RawClient, type RawEvent, type RawWatchKind, type WatcherTableName } from './nzc.js';
import type { AuthInfo, WatchEvent, WatchEventType } from './types.js';

/** Something waiting on this generation that must be settled when it ends. */
interface Pending {
  reject(reason: unknown): void;
}

/** Listeners of one server-side watch; one stable nzc watcher function per (kind, path). */
interface WatchEntry {
  readonly kind: RawWatchKind;
  readonly path: string;
  readonly fn: (event: RawEvent) => void;
  readonly listeners: Set<WatchListener>;
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

/** Hooks a generation calls into its session. */
export interface GenerationHooks {
  connected(gen: Generation): void;
  disconnected(gen: Generation): void;
  expired(gen: Generation): void;
  authFailed(gen: Generation): void;
  watchFired(): void;
  watchRemoved(): void;
}

/** Options of a generation. */
export interface GenerationOptions {
  connectString: string;
  sessionTimeoutMs: number;
  spinDelayMs: number;
  auth: readonly AuthInfo[];
  sessionId?: Buffer;
  sessionPassword?: Buffer;
}

/** One node-zookeeper-client instance with its own pending calls, watches and watchdog. */
export class Generation {
  readonly raw: RawClient;
  readonly controller = new AbortController();
  /** Set once the session of this generation is over (expired, lost or closed). */
  dead = false;
  everConnected = false;
  /** Monotonic time of the last bytes received from the server. */
  lastReceived = performance.now();
  private readonly pending = new Set<Pending>();
  private readonly watches = new Map<string, WatchEntry>();
  private socket: Socket | undefined;
  private socketSince = performance.now();
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
    for (const a of options.auth) this.raw.addAuthInfo(a.scheme, Buffer.from(a.credentials));
    // Callbacks run inside the client's socket handler: they only update state and settle
    // promises, never throw.
    this.raw.on('connected', () => this.live() && this.hooks.connected(this));
    this.raw.on('disconnected', () => this.live() && this.hooks.disconnected(this));
    this.raw.on('expired', () => this.live() && this.hooks.expired(this));
    this.raw.on('authenticationFailed', () => this.live() && this.hooks.authFailed(this));
  }

  private live(): boolean {
    return !this.dead;
  }

  /** Starts connecting and the receive watchdog. */
  start(): void {
    this.raw.connect();
    const period = Math.max(20, Math.min(250, Math.floor(this.raw.connectionManager.sessionTimeout / 10)));
    this.watchdog = setInterval(() => this.checkLiveness(), period);
    this.watchdog.unref();
  }

  /**
   * node-zookeeper-client has no read timeout and clears its connect timeout on TCP connect, so a
   * silent partition or a hung server goes unnoticed forever. Drop the socket when nothing has
   * been received for 2/3 of the session timeout (the client pings every 1/3), or when a
   * handshake takes too long (see {@link handshakeTimeout}); the client then fails over.
   */
  private checkLiveness(): void {
    const cm = this.raw.connectionManager;
    const now = performance.now();
    if (cm.socket !== this.socket) {
      this.socket = cm.socket;
      this.socketSince = now;
      this.lastReceived = now;
      const socket = this.socket;
      socket?.on('data', () => {
        this.lastReceived = performance.now();
      });
      // Reconnecting to a local port nobody listens on can make the kernel pick that very port as
      // the source: the socket connects to itself and would wait for its own handshake reply.
      const dropSelfConnect = (): void => {
        if (socket && socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress) socket.destroy();
      };
      if (socket?.connecting) socket.once('connect', dropSelfConnect);
      else dropSelfConnect();
    }
    if (!this.socket || this.socket.destroyed) return;
    if (cm.state === CM_STATE.CONNECTED && now - this.lastReceived > (cm.sessionTimeout * 2) / 3) {
      this.socket.destroy();
    } else if (cm.state === CM_STATE.CONNECTING && now - this.socketSince > handshakeTimeout(cm.connectTimeout, cm.sessionTimeout)) {
      this.socket.destroy();
    }
  }

  /** The negotiated session timeout (the requested one before connecting). */
  get timeoutMs(): number {
    return this.raw.connectionManager.sessionTimeout;
  }

  /** The server-assigned session id (0n before the first connect). */
  get sessionId(): bigint {
    return this.raw.getSessionId().readBigUInt64BE(0);
  }

  /** Whether the underlying connection is up. */
  get connected(): boolean {
    return this.raw.connectionManager.state === CM_STATE.CONNECTED;
  }

  /** Tracks a call so that it is rejected if this generation ends before it settles. */
  track(p: Pending): () => void {
    this.pending.add(p);
    return () => this.pending.delete(p);
  }

  /** The nzc watcher function to pass with a read that sets a watch of `kind` on `path`. */
  watcherFor(kind: RawWatchKind, path: string): (event: RawEvent) => void {
    const entry = this.watches.get(`${kind}:${path}`) ?? this.newEntry(kind, path);
    entry.inflight += 1;
    return entry.fn;
  }

  private newEntry(kind: RawWatchKind, path: string): WatchEntry {
    const key = `${kind}:${path}`;
    const e: WatchEntry = {
      kind,
      path,
      listeners: new Set(),
      fired: false,
      inflight: 0,
      armed: false,
      // nzc can call one function twice for one event (data and existence tables): fire once.
      fn: (raw: RawEvent) => {
        if (e.fired) return;
        e.fired = true;
        if (this.watches.get(key) === e) this.watches.delete(key);
        this.hooks.watchFired();
        const event: WatchEvent = { type: EVENT_TYPES[raw.type] ?? 'NODE_DATA_CHANGED', path: raw.path };
        for (const l of e.listeners) l.resolve(event);
      },
    };
    this.watches.set(key, e);
    return e;
  }

  /**
   * Adds a listener to the watch a successful read just set. Must run synchronously in the
   * read's reply callback: a notification can follow the reply in the same socket chunk.
   * `sentFn` is the watcher sent with the read; if its entry fired meanwhile (an earlier watch on
   * the same path), the server still set a new watch with our read, so a fresh entry takes it.
   */
  attach(kind: RawWatchKind, path: string, tables: readonly WatcherTableName[], sentFn: (event: RawEvent) => void, listener: WatchListener): () => void {
    let entry = this.watches.get(`${kind}:${path}`);
    if (entry && entry.fn === sentFn) entry.inflight -= 1;
    else {
      for (const t of tables) forgetWatcher(this.raw, t, path, sentFn);
      entry ??= this.newEntry(kind, path);
      for (const t of tables) registerWatcher(this.raw, t, path, entry.fn);
    }
    const e = entry;
    e.armed = true;
    e.listeners.add(listener);
    return () => this.unlisten(e, listener);
  }

  /** A read sent with `sentFn` failed: it set no watch. */
  unsent(kind: RawWatchKind, path: string, sentFn: (event: RawEvent) => void): void {
    const entry = this.watches.get(`${kind}:${path}`);
    if (!entry || entry.fn !== sentFn) return;
    entry.inflight -= 1;
    if (entry.listeners.size === 0 && entry.inflight === 0) this.retire(entry, entry.armed);
  }

  private unlisten(entry: WatchEntry, listener: WatchListener): void {
    if (!entry.listeners.delete(listener) || entry.fired || entry.listeners.size > 0 || entry.inflight > 0) return;
    this.retire(entry, true);
  }

  /** Removes a watch nobody waits for: locally, and on the server if one was set. */
  private retire(entry: WatchEntry, serverSide: boolean): void {
    if (this.watches.get(`${entry.kind}:${entry.path}`) === entry) this.watches.delete(`${entry.kind}:${entry.path}`);
    entry.fired = true;
    if (entry.kind === 'child') forgetWatcher(this.raw, 'child', entry.path, entry.fn);
    else for (const t of ['data', 'exists'] as const) forgetWatcher(this.raw, t, entry.path, entry.fn);
    if (serverSide && !this.dead) {
      // Best effort: NO_WATCHER (already fired) or a lost connection are both fine here; after a
      // reconnect the watch is no longer in SetWatches, so the server forgets it then.
      this.hooks.watchRemoved();
      removeWatches(this.raw, entry.path, entry.kind, () => undefined);
    }
  }

  /** Number of watches with listeners (for leak checks in tests). */
  get watchCount(): number {
    return this.watches.size;
  }

  /**
   * Ends this generation: rejects every pending call and watch with `reason`, aborts its
   * signal, and tears the underlying client down (closing the session when `closeSession`).
   */
  end(reason: unknown): void {
    if (this.dead) return;
    this.dead = true;
    clearInterval(this.watchdog);
    this.controller.abort(reason);
    for (const p of [...this.pending]) p.reject(reason);
    this.pending.clear();
    for (const entry of this.watches.values()) for (const l of entry.listeners) l.reject(reason);
    this.watches.clear();
    this.raw.removeAllListeners();
    try {
      this.raw.close();
    } catch {
      // close() before the first connect attempt throws inside the client; nothing to close.
    }
    this.raw.connectionManager.socket?.destroy();
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
