/**
 * The one file that touches node-zookeeper-client (pinned at 1.1.3): typed facade, and every
 * patch of its internals, each checked at load time so that a changed client fails loudly.
 *
 * @internal
 * @module
 */
// node-zookeeper-client is CommonJS without an exports map: a default import is its
// module.exports, from the ESM build and (through esModuleInterop) from the CommonJS one.
import nzcModule from 'node-zookeeper-client';
import ExceptionExports from 'node-zookeeper-client/lib/Exception.js';
import juteModule from 'node-zookeeper-client/lib/jute/index.js';
import type { Acl, Op, Stat } from './types.js';
import { CREATE_MODE_FLAGS } from './types.js';
import { batchWatches, SET_WATCHES_BATCH_BYTES } from './encoding.js';
import { WatcherTables } from './watcher-tables.js';
import { addWatchFrame, childrenAndStat, clientPath, createdNode, createdPath, createFrame, createTtlFrame, dataAndStat, deleteFrame, multiFrame, multiResults, nothing, OPCODE, readFrame, Reader, removeWatchesFrame, REPLY, setDataFrame, setWatchesFrame, statOnly, syncFrame, type Decoder, type Frame, type MultiOp, type MultiResult } from './wire.js';

/** Error object node-zookeeper-client hands to callbacks (an `Exception`). */
export interface RawError extends Error {
  code: number;
}

/** A watch notification as node-zookeeper-client delivers it. */
export interface RawEvent {
  type: number;
  name: string;
  path: string;
}

type Watcher = (event: RawEvent) => void;

/** The client's watcher tables as it found them (checked at load; replaced by ours, see {@link createRawClient}). */
interface RawWatcherManager {
  existenceWatchers: object;
  getDataWatcherPaths(): string[];
  getExistenceWatcherPaths(): string[];
  getChildWatcherPaths(): string[];
}

interface RawRequest {
  header: { type: number; xid: number } | null;
  payload: unknown;
  toBuffer(): Buffer;
}

/** Internals of the ConnectionManager that the session layer relies on (asserted at load). */
export interface RawConnectionManager {
  socket: import('node:net').Socket | undefined;
  state: number;
  sessionTimeout: number;
  connectTimeout: number;
  chrootPath: string | undefined;
  watcherManager: RawWatcherManager | WatcherTables;
  queue(request: RawRequest, cb: (err: RawError | null) => void): void;
  packetQueue: { queue: { request: RawRequest }[] };
  /** Requests sent and not answered yet, oldest first. */
  pendingQueue: { request: RawRequest; callback?: (err: RawError | null, value?: unknown) => void }[];
  /** The last zxid the server reported, sent with the next handshake. */
  zxid: Buffer;
  /** The session id (8 bytes) and password sent with the next handshake (SASL adopts them early, `sasl.ts`). */
  sessionId: Buffer;
  sessionPassword: Buffer;
  /** The next request id (xid); see {@link wrapXids}. */
  xid: number;
  /** Bytes of a reply not complete yet (the client never clears them on a new connection). */
  pendingBuffer: Buffer | null;
  onSocketConnected(): void;
  onSocketData(chunk: Buffer): void;
  onSocketTimeout(): void;
  connect(): void;
  setState(state: number): void;
  registerDataWatcher(path: string, watcher: Watcher): void;
  registerChildWatcher(path: string, watcher: Watcher): void;
  registerExistenceWatcher(path: string, watcher: Watcher): void;
  close(): void;
}

/** The subset of node-zookeeper-client's `Client` the session layer uses. */
export interface RawClient {
  connectionManager: RawConnectionManager;
  connect(): void;
  close(): void;
  on(event: 'connected' | 'disconnected' | 'expired' | 'authenticationFailed', fn: () => void): void;
  removeAllListeners(): void;
  addAuthInfo(scheme: string, auth: Buffer): void;
  getSessionId(): Buffer;
  getSessionPassword(): Buffer;
  getSessionTimeout(): number;
}

interface NzcModule {
  createClient(connectString: string, options: Record<string, unknown>): RawClient;
  Exception: { create(code: number, path?: string): RawError; prototype: object };
}

interface JuteModule {
  OP_CODES: Record<string, number>;
}

const nzc = nzcModule as NzcModule;
const jute = juteModule as JuteModule;
const ExceptionModule = ExceptionExports as NzcModule['Exception'];

/** Names of server error codes node-zookeeper-client does not know. */
const EXTRA_CODES: Record<number, string> = {
  [-13]: 'NEW_CONFIG_NO_QUORUM',
  [-14]: 'RECONFIG_IN_PROGRESS',
  [-118]: 'SESSION_MOVED',
  [-119]: 'NOT_READONLY',
  [-120]: 'EPHEMERAL_ON_LOCAL_SESSION',
  [-121]: 'NO_WATCHER',
  [-122]: 'REQUEST_TIMEOUT',
  [-123]: 'RECONFIG_DISABLED',
  [-124]: 'SESSION_CLOSED_REQUIRE_SASL_AUTH',
  [-125]: 'QUOTA_EXCEEDED',
  [-127]: 'THROTTLED_OP',
};

// An unknown reply code makes Exception.create throw inside the socket handler, which crashes
// the process (upstream #70). Return an Exception-shaped object instead.
function patchExceptionCreate(): void {
  const original = ExceptionModule.create;
  if ((original as { zkRecipesPatched?: boolean }).zkRecipesPatched) return;
  const patched = (code: number, path?: string): RawError => {
    try {
      return original(code, path);
    } catch {
      return replyError(code);
    }
  };
  (patched as { zkRecipesPatched?: boolean }).zkRecipesPatched = true;
  ExceptionModule.create = patched;
}

/** Names of the codes the client knows (its module exports them as constants), then ours. */
const CODE_NAMES: ReadonlyMap<number, string> = new Map([
  ...Object.entries(ExceptionExports as unknown as Record<string, unknown>).flatMap(([name, code]) => (typeof code === 'number' && /^[A-Z_]+$/.test(name) ? [[code, name] as const] : [])),
  ...Object.entries(EXTRA_CODES).map(([code, name]) => [Number(code), name] as const),
]);

/**
 * The client's `Exception` for a reply's error code, built without what `Exception.create`
 * spends: a search of its code table and a captured stack. A stack taken in the socket's data
 * handler names no caller, and these are built on hot paths (a watch-setting read of a node
 * that just left is routine).
 */
function replyError(code: number): RawError {
  const e = Object.create(ExceptionModule.prototype) as RawError;
  const name = CODE_NAMES.get(code) ?? `UNKNOWN_${code}`;
  const message = `Exception: ${name}[${code}]`;
  Object.assign(e, { code, name, message, stack: message });
  return e;
}

function assertInternals(): void {
  const probe = nzc.createClient('127.0.0.1:1', { sessionTimeout: 1000 });
  const cm = probe.connectionManager as Partial<RawConnectionManager> | undefined;
  const ok =
    cm !== undefined &&
    typeof cm.queue === 'function' &&
    typeof cm.onSocketConnected === 'function' &&
    typeof cm.onSocketData === 'function' &&
    typeof cm.onSocketTimeout === 'function' &&
    typeof cm.connect === 'function' &&
    typeof cm.setState === 'function' &&
    Array.isArray(cm.packetQueue?.queue) &&
    typeof cm.state === 'number' &&
    typeof cm.sessionTimeout === 'number' &&
    typeof cm.connectTimeout === 'number' &&
    typeof cm.watcherManager === 'object' &&
    typeof cm.registerDataWatcher === 'function' &&
    typeof cm.registerChildWatcher === 'function' &&
    typeof cm.registerExistenceWatcher === 'function' &&
    typeof (cm.watcherManager as RawWatcherManager).existenceWatchers === 'object' &&
    typeof cm.watcherManager.getDataWatcherPaths === 'function' &&
    typeof cm.watcherManager.getExistenceWatcherPaths === 'function' &&
    typeof cm.watcherManager.getChildWatcherPaths === 'function' &&
    // The watchers are filed, fired and re-sent through the property (ours replaces it).
    /this\.watcherManager\.registerDataWatcher/.test(String(cm.registerDataWatcher)) &&
    typeof cm.xid === 'number' &&
    jute.OP_CODES.GET_DATA === 4 &&
    jute.OP_CODES.CREATE === 1 &&
    jute.OP_CODES.DELETE === 2 &&
    jute.OP_CODES.EXISTS === 3 &&
    jute.OP_CODES.SET_DATA === 5 &&
    jute.OP_CODES.GET_CHILDREN2 === 12 &&
    Array.isArray(cm.pendingQueue) &&
    Buffer.isBuffer(cm.zxid) &&
    Buffer.isBuffer(cm.sessionId) &&
    Buffer.isBuffer(cm.sessionPassword);
  if (!ok) {
    throw new Error(
      'zk-recipes: node-zookeeper-client internals changed; zk-recipes needs node-zookeeper-client@1.1.3 exactly',
    );
  }
}

patchExceptionCreate();
assertInternals();

/** ConnectionManager state numbers (from node-zookeeper-client). */
export const CM_STATE = { DISCONNECTED: 0, CONNECTING: 1, CONNECTED: 2, CLOSING: -1, CLOSED: -2 } as const;

/** Options for a raw client. */
export interface RawClientOptions {
  sessionTimeoutMs: number;
  spinDelayMs: number;
  /** Join an existing session (used by the test kit to force an expiry). */
  sessionId?: Buffer;
  sessionPassword?: Buffer;
}

/** Creates (does not connect) a raw client. Its blind `retries` stays 0: it re-sends creates. */
export function createRawClient(connectString: string, options: RawClientOptions): RawClient {
  const opts: Record<string, unknown> = {
    sessionTimeout: options.sessionTimeoutMs,
    spinDelay: options.spinDelayMs,
    retries: 0,
  };
  if (options.sessionId) opts.sessionId = options.sessionId;
  if (options.sessionPassword) opts.sessionPassword = options.sessionPassword;
  const client = nzc.createClient(connectString, opts);
  wrapXids(client.connectionManager);
  // Its ConnectionManager files, fires and re-registers watchers through this property.
  client.connectionManager.watcherManager = new WatcherTables();
  return client;
}

/** The largest request id; the Java client never uses it and goes on from 1. */
export const MAX_XID = 0x7fffffff;

/**
 * Request ids wrap as the Java client's do: from 2^31 - 2 on to 1 (negative ids are the
 * server's notifications, pings, auth and SetWatches replies). The client's counter is a plain
 * property it increments for every request (ours included: a frame gets its xid from it) and
 * never wraps: past 2^31 - 1 every encode would throw, in a caller or in a timer.
 */
function wrapXids(cm: RawConnectionManager): void {
  let next = cm.xid;
  Object.defineProperty(cm, 'xid', {
    configurable: true,
    enumerable: true,
    get: () => next,
    set: (v: number) => {
      next = Number.isInteger(v) && v >= 1 && v < MAX_XID ? v : 1;
    },
  });
}

/** What {@link interceptHandshake} asks before each connection attempt's handshake. */
export interface HandshakeHooks {
  /** Whether this client may still talk to the server (false once its generation ended). */
  allowed(): boolean;
  /** The ConnectRequest is about to be written: the server hears from us no earlier than now. */
  sending(): void;
  /** How long to wait before the next connection attempt, ms (0: at once). */
  reconnectDelay(): number;
  /** The server answered a SetWatches packet of this connection: the connection works. */
  rewatched(): void;
  /** Largest request the server accepts: watches are re-registered in packets under it. */
  maxPacketBytes: number;
  /** The persistent and recursive watch paths to re-register with this attempt's handshake. */
  persistentWatches(): { persistent: string[]; recursive: string[] };
  /** A watch notification (client path; the zxid that fired it, -1 before 3.9), after the client handed it to its one-shot watchers. */
  notified(type: number, path: string, zxid: bigint): void;
  /** Wraps the client's handling of each whole frame (SASL holds the handshake reply back until it authenticated, `sasl.ts`). */
  gateFrames?(handle: (this: RawConnectionManager, frame: Buffer) => void): (this: RawConnectionManager, frame: Buffer) => void;
  /** A reply said the server requires SASL and closed the session (SESSION_CLOSED_REQUIRE_SASL_AUTH, -124). */
  saslRequired?(): void;
}

const AUTH_OP = 100;
const NO_NODE = -101;
const CONNECTION_LOSS = -4;
const SET_WATCHES_OP = 101;

/**
 * Takes over the client's handshake, for six reasons. (1) After reconnecting, the client queues
 * its auth and SetWatches packets behind the requests queued while disconnected, so those go out
 * unauthenticated (NoAuth on ACL'd paths); and every failed attempt leaves one more stale copy
 * (with an outdated watch set). Put this attempt's auth first, then its SetWatches, and drop the
 * stale ones. (2) A pending reconnect timer of an ended generation would still connect and send
 * the old session's id and password, reviving a session we declared lost: refuse, and make
 * `connect` a no-op once not allowed. (3) Its idle ping is replaced by the session's heartbeat.
 * (4) The part of a reply that an earlier connection dropped in the middle of stays buffered, and
 * the next connection's handshake reply is read as its rest: the client never connects again.
 * (5) It sends every watch in one SetWatches packet: over the server's packet limit, the server
 * drops the connection right after the handshake, on every attempt. Send them in packets of at
 * most 128 kB (the Java client's batches, ZOOKEEPER-706) and the packet limit. (6) It reconnects
 * at once after a connection that worked for a moment: pause as `reconnectDelay` says.
 * Returns a function that cancels a reconnect still waiting.
 */
export function interceptHandshake(client: RawClient, hooks: HandshakeHooks): () => void {
  const cm = client.connectionManager;
  const connect = cm.connect;
  const handshake = cm.onSocketConnected;
  let pause: NodeJS.Timeout | undefined;
  cm.connect = function (this: RawConnectionManager): void {
    if (!hooks.allowed() || pause !== undefined) return;
    const ms = hooks.reconnectDelay();
    if (ms <= 0) return connect.call(this);
    pause = setTimeout(() => {
      pause = undefined;
      // Nothing may throw out of a timer; the client's connect only opens a socket.
      try {
        if (hooks.allowed() && this.state !== CM_STATE.CLOSED) connect.call(this);
      } catch {
        this.socket?.destroy();
      }
    }, ms);
  };
  // The session heartbeats on its own schedule (generation.ts); the client's own ping after a
  // third of the timeout of socket idleness would be a second request for the same purpose.
  cm.onSocketTimeout = function (): void {};
  // The client binds these when it opens each socket, so the instance properties are what run.
  const handle = hooks.gateFrames ? hooks.gateFrames(cm.onSocketData) : cm.onSocketData;
  cm.onSocketData = frameReplies(handle, (type, path, zxid) => hooks.notified(type, clientPath(cm.chrootPath ?? '', path), zxid), hooks.saslRequired);
  cm.onSocketConnected = function (this: RawConnectionManager): void {
    if (!hooks.allowed()) {
      this.socket?.destroy();
      return;
    }
    // Nothing of an earlier connection's stream belongs to this one.
    this.pendingBuffer = null;
    if (this.socket) {
      coalesceWrites(this.socket);
      withoutIdleTimer(this.socket);
    }
    const queue = this.packetQueue.queue;
    const before = queue.length;
    hooks.sending();
    handshake.call(this);
    const fresh = queue.splice(before);
    const kind = (p: { request: RawRequest }): number | undefined => p.request.header?.type;
    const rest = queue.filter((p) => kind(p) !== AUTH_OP && kind(p) !== SET_WATCHES_OP);
    queue.length = 0;
    queue.push(...fresh.filter((p) => kind(p) === AUTH_OP), ...rewatch(this, hooks), ...rest);
  };
  return () => {
    clearTimeout(pause);
    pause = undefined;
  };
}

/**
 * The SetWatches packets that re-register every watch of the client's tables (instead of its
 * single one), each at most {@link SET_WATCHES_BATCH_BYTES} and the packet limit, all relative to
 * the last zxid seen. The server answers each once it has set its watches (after sending the
 * notifications for what changed meanwhile).
 */
function rewatch(cm: RawConnectionManager, hooks: HandshakeHooks): { request: RawRequest; callback: (err: RawError | null) => void }[] {
  const wm = cm.watcherManager as WatcherTables;
  const kept = hooks.persistentWatches();
  const set = { data: wm.getDataWatcherPaths(), exist: wm.getExistenceWatcherPaths(), child: wm.getChildWatcherPaths(), ...kept };
  const chroot = cm.chrootPath ?? '';
  const zxid = Buffer.from(cm.zxid);
  return batchWatches(set, chroot, Math.min(SET_WATCHES_BATCH_BYTES, hooks.maxPacketBytes)).map((batch) => ({
    request: new FrameRequest(OPCODE.SET_WATCHES, setWatchesFrame(chroot, zxid, batch), nothing),
    callback: (err: RawError | null) => {
      if (!err) hooks.rewatched();
    },
  }));
}

/**
 * Answers a reply to a request of ours (wire.ts) without the client's generic decoder, doing
 * what its handler does with every reply: take the oldest pending request, which has this xid,
 * and keep the zxid for the next handshake. Returns false for any other frame (the handshake's,
 * a notification, a ping's or auth reply, the reply to one of the client's own requests, an
 * xid out of order), which the client's handler takes as before. A body that does not decode
 * fails its request and drops the connection, as the client does with a reply it cannot match.
 */
function answerFrame(cm: RawConnectionManager, frame: Buffer): boolean {
  if (cm.state === CM_STATE.CONNECTING || frame.length < REPLY.BODY) return false;
  const head = cm.pendingQueue[0];
  if (!head || !(head.request instanceof FrameRequest) || frame.readInt32BE(REPLY.XID) !== head.request.header.xid) return false;
  cm.pendingQueue.shift();
  cm.zxid = Buffer.from(frame.subarray(REPLY.ZXID, REPLY.ERR));
  const err = frame.readInt32BE(REPLY.ERR);
  if (err !== 0 && !head.request.bodyOnError) {
    head.callback?.(replyError(err));
    return true;
  }
  let value: unknown;
  try {
    value = head.request.decode(new Reader(frame, REPLY.BODY));
  } catch {
    // A failed multi whose body does not decode still failed with err.
    head.callback?.(replyError(err !== 0 ? err : CONNECTION_LOSS));
    if (err === 0) cm.socket?.destroy();
    return true;
  }
  head.callback?.(err !== 0 ? replyError(err) : null, value);
  return true;
}

/** The server requires SASL and closes the session (-124). */
const SESSION_CLOSED_REQUIRE_SASL_AUTH = -124;

/** The xid of a watch notification. */
const NOTIFICATION_XID = -1;

/**
 * Splits the stream into whole frames: replies to our frames go to {@link answerFrame}, the
 * rest to the client's handler, one frame at a time (given a chunk of several, it handles the
 * first and copies the rest to recurse, once per reply). What is left of a frame waits in
 * `pendingBuffer`, as before, so a new connection's handshake still discards it. Once the
 * connection is dropped (a reply nobody can match), the rest of the chunk is dropped with it.
 * A watch notification (type, state, server path) also goes to `notified`, after the client's
 * handler gave it to its one-shot watchers. A reply refusing the session for want of SASL
 * (-124) goes to `saslRequired` once its request was answered.
 */
export function frameReplies(handle: (this: RawConnectionManager, chunk: Buffer) => void, notified?: (type: number, path: string, zxid: bigint) => void, saslRequired?: () => void): (this: RawConnectionManager, chunk: Buffer) => void {
  return function (this: RawConnectionManager, chunk: Buffer): void {
    const socket = this.socket;
    const buffer = this.pendingBuffer ? Buffer.concat([this.pendingBuffer, chunk]) : chunk;
    this.pendingBuffer = null;
    let offset = 0;
    while (buffer.length - offset >= 4) {
      const size = buffer.readInt32BE(offset);
      if (size < 0) {
        socket?.destroy();
        return;
      }
      if (buffer.length - offset - 4 < size) break;
      const frame = buffer.subarray(offset, offset + 4 + size);
      // Refused for want of SASL: the server closes the session's connection, and would again.
      const refused = saslRequired !== undefined && this.state !== CM_STATE.CONNECTING && frame.length >= REPLY.BODY && frame.readInt32BE(REPLY.ERR) === SESSION_CLOSED_REQUIRE_SASL_AUTH;
      if (!answerFrame(this, frame)) {
        const notification = this.state !== CM_STATE.CONNECTING && frame.length >= REPLY.BODY + 8 && frame.readInt32BE(REPLY.XID) === NOTIFICATION_XID;
        // A notification for our tables is decoded once, here, not again by the client's generic decoder.
        const tables = notification && this.watcherManager instanceof WatcherTables ? this.watcherManager : undefined;
        if (!tables) handle.call(this, frame);
        if (notification) notifyFrom(this, frame, tables, notified);
      }
      offset += 4 + size;
      if (refused) saslRequired();
      if (this.socket !== socket || socket?.destroyed) return;
    }
    if (offset < buffer.length) this.pendingBuffer = buffer.subarray(offset);
  };
}

/**
 * Decodes a notification's body (type, state, path) for our watcher `tables` (their one-shot
 * watchers, as the client's decoder would have told them; undefined when that decoder had the
 * frame) and then for `notified`; a malformed one is dropped.
 */
function notifyFrom(cm: RawConnectionManager, frame: Buffer, tables: WatcherTables | undefined, notified: ((type: number, path: string, zxid: bigint) => void) | undefined): void {
  let type: number;
  let path: string;
  try {
    const r = new Reader(frame, REPLY.BODY);
    type = r.int();
    r.int();
    path = r.str();
  } catch {
    return;
  }
  tables?.notified(type, clientPath(cm.chrootPath ?? '', path));
  notified?.(type, path, frame.readBigInt64BE(REPLY.ZXID));
}

/**
 * The client writes each request to the socket on its own (a system call each); requests made
 * in one turn of the event loop go out in one write instead: the socket is corked at the first
 * and uncorked before the loop turns (nothing waits for I/O in between).
 */
function coalesceWrites(socket: import('node:net').Socket): void {
  const write = socket.write;
  let corked = false;
  const uncork = (): void => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  flushers.set(socket, uncork);
  socket.write = function (this: import('node:net').Socket, ...args: Parameters<typeof write>): boolean {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  } as typeof write;
}

const flushers = new WeakMap<import('node:net').Socket, () => void>();

/**
 * Sends now what this turn of the event loop has written so far, instead of once the turn's
 * promise reactions have run (tens of microseconds in a busy process): for a request someone
 * else waits on, a release. What is written later in the turn goes out in a write of its own.
 */
export function flushWrites(client: RawClient): void {
  const socket = client.connectionManager.socket;
  if (socket) flushers.get(socket)?.();
}

/**
 * The client arms a socket idle timeout for its own pings when the handshake is answered. The
 * session heartbeats on its own schedule (that timeout's handler is a no-op), and an armed
 * timeout is refreshed on every read and write: this connection's socket never arms one.
 */
function withoutIdleTimer(socket: import('node:net').Socket): void {
  socket.setTimeout = function (this: import('node:net').Socket): import('node:net').Socket {
    return this;
  } as typeof socket.setTimeout;
}

/**
 * Stops a client without a word to the server: no closeSession, no reconnect (with
 * {@link interceptHandshake} refusing), queued requests never sent.
 */
export function silence(client: RawClient): void {
  const cm = client.connectionManager;
  cm.setState(CM_STATE.CLOSED);
  // A reset discards what is still unsent; a close would let the kernel deliver it later.
  cm.socket?.resetAndDestroy();
}

/**
 * multi (opcode 14): the ops in one transaction, and their results, also those of a failed
 * transaction (its reply's header may say 0: the failing op's result says why).
 */
export function multi(client: RawClient, ops: readonly MultiOp[], cb: (err: RawError | null, results?: MultiResult[]) => void): void {
  const chroot = clientChroot(client);
  sendFrame(client, OPCODE.MULTI, multiFrame(chroot, ops), multiResults(chroot), cb, true);
}

/**
 * Which server-side watches `removeWatches` clears: `any` every watch of the session on the
 * path, persistent ones included; `persistent` and `recursive` only that one (3.9+).
 */
export type RawWatchKind = 'child' | 'data' | 'any' | 'persistent' | 'recursive';

const REMOVE_TYPES: Record<RawWatchKind, 1 | 2 | 3 | 4 | 5> = { child: 1, data: 2, any: 3, persistent: 4, recursive: 5 };

/** A request encoded by hand (wire.ts), whose reply wire.ts decodes too. */
class FrameRequest implements RawRequest {
  readonly header: { type: number; xid: number };
  // No payload: the client prefixes the chroot to a payload's path, and the frame has it already.
  readonly payload = null;
  constructor(
    op: number,
    private readonly frame: Frame,
    readonly decode: Decoder<unknown>,
    /** The reply has a body when its header carries an error too (multi's per-op results). */
    readonly bodyOnError = false,
  ) {
    this.header = { type: op, xid: 0 };
  }
  toBuffer(): Buffer {
    return this.frame.seal(this.header.xid);
  }
}

/** Reply callback of a frame: an error (the client's Exception), or the decoded body. */
type FrameCallback<T> = (err: RawError | null, value?: T) => void;

/** Queues a frame; `decode` reads the body of a successful reply (see {@link frameReplies}). */
export function sendFrame<T>(client: RawClient, op: number, frame: Frame, decode: Decoder<T>, cb: FrameCallback<T>, bodyOnError = false): void {
  client.connectionManager.queue(new FrameRequest(op, frame, decode, bodyOnError), cb as (err: RawError | null) => void);
}

/** The chroot the client prefixes to paths ('' for none). */
function clientChroot(client: RawClient): string {
  return client.connectionManager.chrootPath ?? '';
}

/**
 * Removes this session's server-side watches of `kind` on `path` (ZooKeeper 3.5+). A reply of
 * NO_WATCHER (-121) means the watch already fired or was never set.
 */
export function removeWatches(client: RawClient, path: string, kind: RawWatchKind, cb: (err: RawError | null) => void): void {
  sendFrame(client, OPCODE.REMOVE_WATCHES, removeWatchesFrame(clientChroot(client), path, REMOVE_TYPES[kind]), nothing, cb);
}

/** addWatch (opcode 106, ZooKeeper 3.6+): a persistent watch, recursive or not. */
export function addWatch(client: RawClient, path: string, recursive: boolean, cb: (err: RawError | null) => void): void {
  sendFrame(client, OPCODE.ADD_WATCH, addWatchFrame(clientChroot(client), path, recursive), nothing, cb);
}

/** create (opcode 1): resolves to the created path. */
export function create(client: RawClient, path: string, data: Buffer | undefined, acls: Buffer, flags: number, cb: FrameCallback<string>): void {
  const chroot = clientChroot(client);
  sendFrame(client, OPCODE.CREATE, createFrame(OPCODE.CREATE, chroot, path, data, acls, flags), createdPath(chroot), cb);
}

/**
 * create2 (opcode 15): a create whose reply also carries the new node's Stat, so the creator
 * learns its czxid without another round trip.
 */
export function create2(client: RawClient, path: string, data: Buffer | undefined, acls: Buffer, flags: number, cb: FrameCallback<{ path: string; stat: Stat }>): void {
  const chroot = clientChroot(client);
  sendFrame(client, OPCODE.CREATE2, createFrame(OPCODE.CREATE2, chroot, path, data, acls, flags), createdNode(chroot), cb);
}

/**
 * The create of a mode that needs its own request: createContainer (opcode 19) for a
 * container, createTTL (21) for a node with a time to live. Both answer as create2.
 */
export function createSpecial(client: RawClient, path: string, data: Buffer | undefined, acls: Buffer, flags: number, ttlMs: number | undefined, cb: FrameCallback<{ path: string; stat: Stat }>): void {
  const chroot = clientChroot(client);
  const frame = ttlMs === undefined ? createFrame(OPCODE.CREATE_CONTAINER, chroot, path, data, acls, flags) : createTtlFrame(chroot, path, data, acls, flags, ttlMs);
  sendFrame(client, ttlMs === undefined ? OPCODE.CREATE_CONTAINER : OPCODE.CREATE_TTL, frame, createdNode(chroot), cb);
}

/** delete (opcode 2). */
export function remove(client: RawClient, path: string, version: number, cb: (err: RawError | null) => void): void {
  sendFrame(client, OPCODE.DELETE, deleteFrame(clientChroot(client), path, version), nothing, cb);
}

/**
 * sync (opcode 9): the server answers once it has caught up with the leader, so reads sent after
 * the reply see every write committed before the sync was sent.
 */
export function sendSync(client: RawClient, path: string, cb: (err: RawError | null) => void): void {
  sendFrame(client, OPCODE.SYNC, syncFrame(clientChroot(client), path), nothing, cb);
}

/**
 * exists (opcode 3). A NoNode is an answer (null), not an error. A `watcher` is filed as the
 * client files its own: under data watches if the node exists, existence watches if not.
 */
export function exists(client: RawClient, path: string, watcher: Watcher | undefined, cb: FrameCallback<Stat | null>, serverWatch = watcher !== undefined): void {
  sendFrame(client, OPCODE.EXISTS, readFrame(OPCODE.EXISTS, clientChroot(client), path, serverWatch), statOnly, (err, stat) => {
    if (err && err.code !== NO_NODE) return cb(err);
    if (watcher) registerWatcher(client, err ? 'exists' : 'data', path, watcher);
    cb(null, stat ?? null);
  });
}

/** getData (opcode 4); a `watcher` is filed under data watches once the reply came. */
export function getData(client: RawClient, path: string, watcher: Watcher | undefined, cb: FrameCallback<{ data: Buffer; stat: Stat }>, serverWatch = watcher !== undefined): void {
  sendFrame(client, OPCODE.GET_DATA, readFrame(OPCODE.GET_DATA, clientChroot(client), path, serverWatch), dataAndStat, (err, result) => {
    if (!err && watcher) registerWatcher(client, 'data', path, watcher);
    cb(err, result);
  });
}

/** getChildren2 (opcode 12); a `watcher` is filed under child watches once the reply came. */
export function getChildren(client: RawClient, path: string, watcher: Watcher | undefined, cb: FrameCallback<{ children: string[]; stat: Stat }>, serverWatch = watcher !== undefined): void {
  sendFrame(client, OPCODE.GET_CHILDREN2, readFrame(OPCODE.GET_CHILDREN2, clientChroot(client), path, serverWatch), childrenAndStat, (err, result) => {
    if (!err && watcher) registerWatcher(client, 'child', path, watcher);
    cb(err, result);
  });
}

/** setData (opcode 5): resolves to the new Stat. */
export function setData(client: RawClient, path: string, data: Buffer | undefined, version: number, cb: FrameCallback<Stat>): void {
  sendFrame(client, OPCODE.SET_DATA, setDataFrame(clientChroot(client), path, data, version), statOnly, cb);
}

/** The client's three watcher tables. */
export type WatcherTableName = 'child' | 'data' | 'exists';

/** Files a watcher in one of the client's tables (re-sent in SetWatches on reconnect). */
export function registerWatcher(client: RawClient, table: WatcherTableName, path: string, watcher: Watcher): void {
  const cm = client.connectionManager;
  if (table === 'child') cm.registerChildWatcher(path, watcher);
  else if (table === 'data') cm.registerDataWatcher(path, watcher);
  else cm.registerExistenceWatcher(path, watcher);
}

/** The watcher tables of `client` (ours: see {@link createRawClient}). */
function tablesOf(client: RawClient): WatcherTables {
  const wm = client.connectionManager.watcherManager;
  if (!(wm instanceof WatcherTables)) throw new Error('zk-recipes: a raw client without its watcher tables');
  return wm;
}

/** Drops the client-side record of a watcher so it is not re-sent in SetWatches on reconnect. */
export function forgetWatcher(client: RawClient, table: WatcherTableName, path: string, watcher: Watcher): void {
  const t = tablesOf(client);
  // An empty entry left in the table would still count as a watcher (hasOneShotWatcher: a
  // persistent registration on the path was then never removed); the table drops it.
  (table === 'child' ? t.child : table === 'data' ? t.data : t.exist).remove(path, watcher);
}

/** Whether the client's tables hold a one-shot watcher on `path` (re-sent in SetWatches). */
export function hasOneShotWatcher(client: RawClient, path: string): boolean {
  const t = tablesOf(client);
  return t.data.has(path) || t.child.has(path) || t.exist.has(path);
}

/**
 * Gives the client's one-shot child watchers of `path` a NODE_CHILDREN_CHANGED the server did
 * not send: under a recursive watch of the same path it sends none, only the children's
 * created and deleted events.
 */
export function emitChildrenChanged(client: RawClient, path: string): void {
  tablesOf(client).emit({ type: 4, path });
}
