/**
 * {@link ZkSession}: the session layer every recipe stands on. Its lifecycle (states, the loss
 * clock, generations) is in `lifecycle.ts`; this file holds the typed requests.
 *
 * @module
 */
import {
  ClosedError,
  ConnectionLossError,
  InvalidArgumentError,
  NoAuthError,
  NoNodeError,
  NodeExistsError,
  SessionExpiredError,
  UnimplementedError,
  ZooKeeperError,
} from '../errors.js';
import { delay, raceAbort } from '../util/abort.js';
import { onAbort } from '../util/signals.js';
import { multiSize, requestSize, watchSize, type SizedRequest } from './encoding.js';
import { errorFromCode, ZK_CONNECTION_LOSS, ZK_SESSION_EXPIRED } from './error-map.js';
import { answeredByServer, type Generation } from './generation.js';
import { OneShot, type StoppableWatch } from './one-shot.js';
import { SessionLifecycle, type SessionCounters, type SessionOptions } from './lifecycle.js';
import { addWatch, create, create2, createSpecial, exists, flushWrites, getChildren, getData, remove, setData, multi, sendSync, type RawError, type RawEvent, type WatcherTableName } from './nzc.js';
import { encodeAcls, MULTI_RESULT_TYPES, type MultiOp, type MultiResult } from './wire.js';
import { providedAcl, sendGetAcl, sendSetAcl, validateAcl, validateAclProvider, type AclProvider } from './acl.js';
import { resolveRetryPolicy, retryAfter, type RetryPolicy } from './retry.js';
import type { Acl, AclResult, ChildrenResult, CreatedNode, CreateOptions, DataResult, NodeData, Op, OpResult, Stat, WatchEvent, Watched } from './types.js';
import { Acls, CREATE_MODE_FLAGS } from './types.js';
import { checkBoolean, checkInt, checkKeys, checkOptions, checkSignal, describe, joinPath, parentOf, toBuffer, validatePath, validateVersion } from './validate.js';
import { ADD_WATCH_OPTION_KEYS, CALL_OPTION_KEYS, CONNECT_OPTION_KEYS, CREATE_CALL_OPTION_KEYS, MKDIRP_OPTION_KEYS, OP_KEYS, VERSIONED_CALL_OPTION_KEYS, WATCH_OPTION_KEYS } from './option-keys.js';

export type { SessionCounters, SessionCredentials, SessionEvents, SessionInfo, SessionOptions, WaitOptions } from './lifecycle.js';

/** Attaches a watch listener; called synchronously in a successful read's reply callback. */
type Arm = (gen: Generation, tables: readonly WatcherTableName[], sentFn: (event: RawEvent) => void) => void;

import { PersistentWatch } from './persistent-watch.js';
import { traced, tracing, type SessionRequestContext } from '../observability/channels.js';
import { codeOf } from '../observability/trace.js';

/** Options of one request. @group Sessions */
export interface CallOptions {
  /**
   * Gives up on the call: a request not sent yet (waiting for a connection) is never sent and
   * the call rejects with the signal's reason. Once sent, a read is abandoned (its reply is
   * ignored), while a write or a watch-setting read still waits for its reply, which alone tells
   * what happened on the server.
   */
  signal?: AbortSignal;
}

/** Options of {@link ZkSession.mkdirp}. @group Sessions */
export interface MkdirpOptions extends CallOptions {
  /** Data of `path` itself (its ancestors get none). */
  data?: NodeData;
  /** ACL of every node created. */
  acl?: readonly Acl[];
  /** Create them as containers (ZooKeeper 3.5.3+). Default false. */
  container?: boolean;
}

/** Options of {@link ZkSession.addWatch}. @group Sessions */
export interface AddWatchOptions extends CallOptions {
  /** Also watch every node under the path (PERSISTENT_RECURSIVE). Default false. */
  recursive?: boolean;
}

/** Options of {@link ZkSession.create} and {@link ZkSession.createWithStat}. @group Sessions */
export type CreateCallOptions = CreateOptions & CallOptions;

/** Options of a read that sets a watch. @group Sessions */
export interface WatchOptions {
  /**
   * Aborting removes the watch (locally and on the server) and rejects `changed`; aborted before
   * the read was sent, the read itself rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

/**
 * What one call of the API sent, over all its attempts (and, for `mkdirp` and
 * `deleteRecursive`, over all their requests): `sent: false` on an error must mean that nothing
 * of the call reached the server, not only its last attempt.
 */
interface Ledger {
  sent: boolean;
}

/** How a request behaves when its caller's signal aborts after it was sent. */
interface CallSpec {
  signal?: AbortSignal | undefined;
  /** A read whose reply may be ignored. Writes and watch-setting reads wait for theirs. */
  abandonable?: boolean;
  /** Marked sent when this request goes out. */
  ledger?: Ledger | undefined;
}

/** The open ACL, encoded once (most creates use it). */
const OPEN_ACL_BYTES = encodeAcls(Acls.OPEN);
/** A create's ACL as it goes on the wire (the open one encoded once). */
const aclBytes = (acl: readonly Acl[]): Buffer => (acl === Acls.OPEN ? OPEN_ACL_BYTES : encodeAcls(acl));
const EMPTY = Buffer.alloc(0);

/** Wire code of a throttled request (not applied: safe to send again). */
const THROTTLED = 'THROTTLED_OP';

const noop = (): void => undefined;

export { watchSettled } from './one-shot.js';

const watchOf = (r: { watch: OneShot }): OneShot => r.watch;

/** Requests only the ensemble's leader answers (when they succeed): they move the loss clock. */
const VIA_LEADER: ReadonlySet<keyof SessionCounters> = new Set(['create', 'delete', 'setData', 'multi', 'sync']);

/**
 * A ZooKeeper session: a typed, promise-based adapter over node-zookeeper-client. It owns the
 * connection, reports Curator-style connection states, maps server error codes to typed errors,
 * retries idempotent reads on connection loss, detects silent partitions, and after the session
 * is lost starts a new one. Recipes take a `ZkSession`; only this layer talks to the client.
 *
 * The loss clock counts from what the ensemble's leader heard, not from what we received: only
 * a `sync` or a write proves that the leader (which alone expires sessions) heard us, and it
 * proves so only for requests answered a ping period before it was sent (a follower relays the
 * sessions it saw in its answers to the leader's pings); the reconnect handshake counts, once
 * its connection worked.
 * A heartbeat `sync` goes out once nothing only the leader answers was answered for a sixth of
 * the session timeout T, whatever comes in meanwhile (notifications and a follower's own
 * answers prove nothing about the session). The rule and its assumptions:
 * [the loss clock on an ensemble](../../docs/sessions.md#the-loss-clock-on-an-ensemble).
 *
 * - `SUSPENDED` is raised when the connection drops, or when the loss clock is 0.8 T old (a
 *   silent partition, a hung server, or a member cut off from its leader: the socket is then
 *   dropped and the client fails over).
 * - `LOST` is raised when the server reports expiry, or locally once the loss clock is 0.95 T
 *   old: before the leader can expire the session, so a holder is told before anyone else can
 *   be granted what it held. Then every pending call and watch of that session rejects with
 *   {@link SessionExpiredError}, {@link ZkSession.signal} aborts, nothing more of that session
 *   reaches the server (no reconnect with its id), and a new session starts.
 *
 * One session per process: open it at start, hand it to every recipe, close it at shutdown
 * (its ephemeral nodes, and so its locks and leadership, go at once). Guide:
 * [Sessions and connection states](../../docs/sessions.md).
 *
 * @example
 * ```ts
 * import { ZkSession } from 'zk-recipes';
 *
 * await using zk = await ZkSession.connect('127.0.0.1:2181', { sessionTimeoutMs: 10_000 });
 * zk.on('state', (state, previous) => console.log(`session ${previous} -> ${state}`));
 * await zk.create('/app', { data: 'hello' });
 * ```
 * @group Sessions
 */
export class ZkSession extends SessionLifecycle {
  private readonly retryPolicy: RetryPolicy;
  private readonly maxDataBytes: number;
  /** The chroot of the connect string ('' for none): the server counts it in every path. */
  private readonly chroot: string;
  /** The `aclProvider` option: the ACL of every node created without an explicit one. */
  private readonly aclProvider: AclProvider | undefined;

  /**
   * Creates a session and starts connecting; see {@link ZkSession.connect} to also wait for the
   * connection. `connectString` is `host:port[,host:port...][/chroot]`. Every option is checked
   * before anything starts.
   */
  constructor(connectString: string, options: SessionOptions = {}) {
    super(connectString, options);
    this.maxDataBytes = checkInt(options.maxDataBytes, 'maxDataBytes', 0, 100 * 1024 * 1024, 1_000_000);
    this.chroot = chrootOf(connectString);
    this.aclProvider = validateAclProvider(options.aclProvider);
    this.retryPolicy = resolveRetryPolicy(options.retry);
    this.begin(options.join);
  }

  /**
   * Creates a session and waits until it is connected (at most `connectTimeoutMs`, default
   * 15 s). On failure nothing is left running.
   */
  static async connect(connectString: string, options: SessionOptions & { signal?: AbortSignal } = {}): Promise<ZkSession> {
    // Checked before anything starts: an aborted signal never opens a connection.
    const { signal: given, ...sessionOptions } = checkOptions(options, 'ZkSession.connect', CONNECT_OPTION_KEYS);
    const signal = checkSignal(given);
    signal?.throwIfAborted();
    const session = new ZkSession(connectString, sessionOptions);
    try {
      await session.waitConnected({ timeoutMs: session.connectTimeoutMs, signal });
      return session;
    } catch (err) {
      await session.close();
      throw err;
    }
  }

  /** Request and watch counters (a snapshot). */
  get counters(): Readonly<SessionCounters> {
    return { ...this.stats };
  }

  /** Set once a server said it has no persistent watches: later addWatch calls fail at once. */
  private noPersistentWatches: UnimplementedError | undefined;

  /** Largest node data accepted, bytes. */
  get dataLimit(): number {
    return this.maxDataBytes;
  }

  /** Watches this session currently holds listeners for (leak checks). */
  get activeWatchCount(): number {
    return this.gen.watchCount;
  }

  /**
   * Sends at once the requests made so far in this turn of the event loop, instead of once its
   * promise reactions have run: for a request another participant waits on (a release).
   *
   * @internal
   */
  flushWrites(): void {
    flushWrites(this.gen.raw);
  }

  // ---- calls -----------------------------------------------------------------------------

  /**
   * Sends one request on the current generation. The returned promise always settles: with the
   * reply, or with {@link SessionExpiredError} / {@link ClosedError} if the session ends first.
   */
  private call<T>(
    op: keyof SessionCounters,
    path: string | undefined,
    send: (gen: Generation, done: (err: RawError | ZooKeeperError | null, value?: T) => void) => void,
    spec: CallSpec = {},
  ): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError(`${op} on ${path ?? '?'}: session to ${this.connectString} is closed`, { path }));
    const { signal, abandonable = false, ledger } = spec;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const gen = this.gen;
    // After LOST without renewal: nothing can be sent on that session any more.
    if (gen.dead) return Promise.reject(new SessionExpiredError('SESSION_EXPIRED', `${op} on ${path ?? '?'}: the session ended`, { zkCode: ZK_SESSION_EXPIRED, path, op }));
    if (!traced(tracing.sessionRequest)) return this.send(gen, op, path, send, signal, abandonable, ledger, undefined);
    const ctx: SessionRequestContext = { op, path, sessionId: gen.sessionId, server: gen.server };
    return tracing.sessionRequest.tracePromise(() => this.send(gen, op, path, send, signal, abandonable, ledger, ctx), ctx);
  }

  /** The body of {@link call}: `ctx` (a trace's context) gets the outcome. */
  private send<T>(
    gen: Generation,
    op: keyof SessionCounters,
    path: string | undefined,
    send: (gen: Generation, done: (err: RawError | ZooKeeperError | null, value?: T) => void) => void,
    signal: AbortSignal | undefined,
    abandonable: boolean,
    ledger: Ledger | undefined,
    ctx: SessionRequestContext | undefined,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let sent = false;
      let withdraw: (() => void) | undefined;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        untrack();
        withdraw?.();
        unsubscribe();
        fn();
      };
      if (ctx) {
        const done = { resolve, reject };
        const startedAt = performance.now();
        resolve = (value) => {
          ctx.outcome = 'ok';
          ctx.durationMs = performance.now() - startedAt;
          done.resolve(value);
        };
        reject = (reason: unknown) => {
          ctx.outcome = 'error';
          ctx.errorCode = codeOf(reason);
          ctx.durationMs = performance.now() - startedAt;
          done.reject(reason);
        };
      }
      const untrack = gen.track({ reject: (reason) => settle(() => reject(reason)) });
      // One listener per signal however many calls share it (a caller's, a recipe's).
      const unsubscribe = signal
        ? onAbort(signal, (reason) => {
            if (!sent || abandonable) settle(() => reject(reason));
          })
        : noop;
      const dispatch = (): void => {
        if (settled) return;
        sent = true;
        if (ledger) ledger.sent = true;
        if (ctx) (ctx as { server: string | undefined }).server = gen.server;
        this.stats[op] += 1;
        const sentAt = performance.now();
        try {
          send(gen, (err, value) => {
            if (!(err instanceof ZooKeeperError) && answeredByServer(err)) gen.answered(sentAt, err === null && VIA_LEADER.has(op));
            settle(() => {
              if (!err) resolve(value as T);
              // An expired client reports CONNECTION_LOSS for everything: say what really happened.
              else if (gen.dead) reject(new SessionExpiredError('SESSION_EXPIRED', `${op} on ${path}: the session ended`, { zkCode: ZK_SESSION_EXPIRED, path, op }));
              else if (err instanceof ZooKeeperError) reject(err);
              else reject(errorFromCode(err.code, op, path, { cause: err }));
            });
          });
        } catch (err) {
          settle(() => reject(new InvalidArgumentError(`${op} on ${path}: rejected by the client: ${(err as Error).message}`, { path, cause: err })));
        }
      };
      const waitMs = this.connectTimeoutMs;
      withdraw = gen.whenConnected(dispatch, waitMs, () =>
        settle(() =>
          reject(
            new ConnectionLossError('CONNECTION_LOSS', `${op} on ${path ?? '?'} was not sent: no connection to ${this.connectString} within the connect timeout (${waitMs} ms)`, {
              zkCode: ZK_CONNECTION_LOSS,
              op,
              path,
              sent: false,
            }),
          ),
        ),
      );
    });
  }

  /**
   * Retries `fn` under the retry policy: reads on connection loss and transient server codes
   * (THROTTLED_OP, REQUEST_TIMEOUT); writes only when they were certainly not applied
   * (throttled). The pause between attempts ends early on close or the caller's abort.
   */
  private retrying<T>(fn: (ledger: Ledger) => Promise<T>, signal: AbortSignal | undefined, kind: 'read' | 'write', ledger: Ledger = { sent: false }): Promise<T> {
    const start = performance.now();
    const retryable = kind === 'read' ? isTransient : notApplied;
    // The first attempt goes out now, with nothing of the retry loop around it (see retryAfter).
    return fn(ledger).then(undefined, (err: unknown) => {
      // Not to be retried (NoNode, NodeExists, ...): rejected in this very reaction, as a reply is
      // resolved, so answers reach their callers in the order the server sent them, whether
      // they succeeded or failed (a cache's reads of two nodes apply in that order).
      if (!retryable(err) || this.retryPolicy.maxRetries < 1) throw truthful(err, ledger);
      // Not AbortSignal.any: Node 20 keeps each composite in both sources until they are gone.
      return retryAfter(this.retryPolicy, err, () => fn(ledger), (ms) => delay(ms, this.closeController.signal, signal), retryable, start).catch((last: unknown) => {
        throw truthful(last, ledger);
      });
    });
  }

  /**
   * Refuses a request the server would answer by dropping the connection (and a re-send would
   * do it again): its encoded size in bytes, chroot included, over the packet limit.
   */
  private checkSize(req: SizedRequest, op: string): void {
    this.checkPacket(requestSize(req, this.chroot), op, req.path, 'the request is');
  }

  /**
   * Refuses a watch-setting read whose watch could not be re-registered after a reconnect: the
   * SetWatches packet of that one path would be over the packet limit. Also checks the read.
   */
  private checkWatch(req: SizedRequest & { type: 'exists' | 'getData' | 'getChildren' }): void {
    this.checkSize(req, req.type);
    this.checkPacket(watchSize(req.path, this.chroot), req.type, req.path, 're-registering its watch after a reconnect takes');
  }

  private checkPacket(size: number, op: string, path: string, what: string): void {
    if (size <= this.maxPacketBytes) return;
    throw new InvalidArgumentError(
      `${op} on ${describe(path)}: ${what} ${size} bytes, over the server's packet limit of ${this.maxPacketBytes} bytes (its jute.maxbuffer; the maxPacketBytes option): the server would drop the connection. Send less at once (a shorter path, fewer transaction ops, smaller data), or raise jute.maxbuffer on every server and maxPacketBytes here`,
      { path },
    );
  }

  /**
   * Creates a node and resolves to its actual path (with the sequence suffix for sequential
   * modes). Not retried on connection loss: whether it was applied is unknown, so the error is
   * thrown (recipes use protected names to recover).
   */
  create(path: string, options: CreateCallOptions = {}): Promise<string> {
    return this.guard(() => this.createNode(path, options, { sent: false }));
  }

  private createNode(path: string, options: CreateCallOptions, ledger: Ledger): Promise<string> {
    const { data, acls, flags, special, ttlMs, signal } = this.prepareCreate(path, options);
    return this.retrying(
      () =>
        this.call<string>(
          'create',
          path,
          (g, done) => (special ? createSpecial(g.raw, path, data, acls, flags, ttlMs, (err, created) => done(err, created?.path)) : create(g.raw, path, data, acls, flags, done)),
          { signal, ledger },
        ),
      signal,
      'write',
      ledger,
    );
  }

  private prepareCreate(path: string, options: CreateCallOptions): { data: Buffer | undefined; acls: Buffer; flags: number; special: boolean; ttlMs: number | undefined; signal: AbortSignal | undefined } {
    validatePath(path);
    checkOptions(options, 'create', CREATE_CALL_OPTION_KEYS);
    const signal = checkSignal(options.signal);
    const data = toBuffer(options.data, this.maxDataBytes, path);
    const mode = checkMode(options.mode, 'mode');
    const ttlMs = checkTtl(options.ttlMs, mode, path);
    const acl = options.acl === undefined ? providedAcl(this.aclProvider, path) : validateAcl(options.acl);
    this.checkSize({ type: 'create', path, data, acl, ttl: ttlMs !== undefined }, 'create');
    return { data, acls: aclBytes(acl), flags: CREATE_MODE_FLAGS[mode], special: SPECIAL_MODES.has(mode), ttlMs, signal };
  }

  /**
   * Like {@link create}, and also resolves to the new node's {@link Stat} (ZooKeeper's create2),
   * in the same round trip. Not retried on connection loss.
   */
  createWithStat(path: string, options: CreateCallOptions = {}): Promise<CreatedNode> {
    return this.guard(() => {
      const { data, acls, flags, special, ttlMs, signal } = this.prepareCreate(path, options);
      return this.retrying(
        (ledger) =>
          this.call<CreatedNode>(
            'create',
            path,
            (g, done) => {
              const made = (err: RawError | null, created?: { path: string; stat: Stat }): void => done(err, created && { type: 'create', path: created.path, stat: created.stat });
              if (special) createSpecial(g.raw, path, data, acls, flags, ttlMs, made);
              else create2(g.raw, path, data, acls, flags, made);
            },
            { signal, ledger },
          ),
        signal,
        'write',
      );
    });
  }

  /**
   * Deletes a node (only at `version` if given; -1 = any). Retried on connection loss; a NoNode
   * on a retry is taken as success, since the lost attempt may have deleted it.
   */
  delete(path: string, options: { version?: number } & CallOptions = {}): Promise<void> {
    return this.guard(() => {
      validatePath(path);
      checkOptions(options, 'delete', VERSIONED_CALL_OPTION_KEYS);
      validateVersion(options.version, path);
      return this.deleteNode(path, options.version ?? -1, checkSignal(options.signal), { sent: false });
    });
  }

  private deleteNode(path: string, version: number, signal: AbortSignal | undefined, ledger: Ledger): Promise<void> {
    this.checkSize({ type: 'delete', path }, 'delete');
    let sends = 0;
    return this.retrying(
      async () => {
        try {
          await this.call<void>(
            'delete',
            path,
            (g, done) => {
              sends += 1;
              remove(g.raw, path, version, done);
            },
            { signal, ledger },
          );
        } catch (err) {
          // An earlier attempt that was sent may have deleted it.
          if (sends > 1 && err instanceof NoNodeError) return;
          throw err;
        }
      },
      signal,
      'read',
      ledger,
    );
  }

  /**
   * Brings the server this session is connected to up to date with the leader, as Curator's
   * `sync()` and kazoo's `sync()` do: reads sent after it resolves see every write committed
   * before it was sent. A member answers reads from its own copy, which may lag behind; sync
   * before deciding from a read whether a write happened, e.g. after a lost reply and a
   * reconnect to another member. `path` need not exist. Retried on connection loss, like reads.
   */
  sync(path: string, options: CallOptions = {}): Promise<void> {
    return this.guard(() => {
      validatePath(path);
      const signal = callSignal(options, 'sync');
      this.checkSize({ type: 'sync', path }, 'sync');
      return this.retrying((ledger) => this.call<void>('sync', path, (g, done) => sendSync(g.raw, path, (err) => done(err)), { signal, abandonable: true, ledger }), signal, 'read');
    });
  }

  /** The node's {@link Stat}, or `null` when it does not exist. Retried on connection loss. */
  exists(path: string, options: CallOptions = {}): Promise<Stat | null> {
    return this.guard(() => {
      validatePath(path);
      const signal = callSignal(options, 'exists');
      this.checkSize({ type: 'exists', path }, 'exists');
      return this.retrying((ledger) => this.call<Stat | null>('exists', path, (g, done) => exists(g.raw, path, undefined, done), { signal, abandonable: true, ledger }), signal, 'read');
    });
  }

  /** The node's data and {@link Stat}. Retried on connection loss. */
  getData(path: string, options: CallOptions = {}): Promise<DataResult> {
    return this.guard(() => {
      validatePath(path);
      const signal = callSignal(options, 'getData');
      this.checkSize({ type: 'getData', path }, 'getData');
      return this.retrying((ledger) => this.rawGetData(path, { signal, abandonable: true, ledger }), signal, 'read');
    });
  }

  /** Sets the node's data (only at `version` if given) and resolves to the new {@link Stat}. */
  setData(path: string, data: NodeData, options: { version?: number } & CallOptions = {}): Promise<Stat> {
    return this.guard(() => {
      validatePath(path);
      checkOptions(options, 'setData', VERSIONED_CALL_OPTION_KEYS);
      validateVersion(options.version, path);
      const signal = checkSignal(options.signal);
      if (data === undefined) throw new InvalidArgumentError(`setData of ${path}: data must be a Uint8Array or a string, got undefined`, { path });
      const buf = toBuffer(data, this.maxDataBytes, path);
      this.checkSize({ type: 'setData', path, data: buf ?? EMPTY }, 'setData');
      const version = options.version ?? -1;
      return this.retrying((ledger) => this.call<Stat>('setData', path, (g, done) => setData(g.raw, path, buf, version, done), { signal, ledger }), signal, 'write');
    });
  }

  /** The node's children (names) and its {@link Stat}. Retried on connection loss. */
  getChildren(path: string, options: CallOptions = {}): Promise<ChildrenResult> {
    return this.guard(() => {
      validatePath(path);
      return this.listChildren(path, callSignal(options, 'getChildren'), { sent: false });
    });
  }

  private listChildren(path: string, signal: AbortSignal | undefined, ledger: Ledger): Promise<ChildrenResult> {
    this.checkSize({ type: 'getChildren', path }, 'getChildren');
    return this.retrying(() => this.rawGetChildren(path, { signal, abandonable: true, ledger }), signal, 'read', ledger);
  }

  /**
   * Reads data and sets a data watch atomically. `changed` settles on the next change or
   * deletion. Prefer this over {@link existsWatch} to wait for a node to go away: a NoNode here
   * means "gone already" and leaves no watch behind.
   */
  getDataWatch(path: string, options: WatchOptions = {}): Promise<Watched<DataResult>> {
    return this.watched('getData', path, options, (w, spec) => this.rawGetData(path, spec, w));
  }

  /** Lists children and sets a child watch atomically. */
  getChildrenWatch(path: string, options: WatchOptions = {}): Promise<Watched<ChildrenResult>> {
    return this.watched('getChildren', path, options, (w, spec) => this.rawGetChildren(path, spec, w));
  }

  /**
   * Checks existence and sets a watch atomically; `changed` fires on creation, change or
   * deletion. The watch on a missing node stays on the server until the node is created or the
   * watch is aborted.
   */
  existsWatch(path: string, options: WatchOptions = {}): Promise<Watched<Stat | null>> {
    return this.watched('exists', path, options, (w, spec) =>
      this.call<Stat | null>(
        'exists',
        path,
        (g, done) => {
          const fn = g.watcherFor('data', path);
          const ride = riding(g, path);
          exists(
            g.raw,
            path,
            fn,
            (err, stat) => {
              if (err) g.unsent('data', path, fn);
              // Where the server set it: a data watch on an existing node (it fires on deletion
              // too), an existence watch on a missing one. Filed in that one table only: an
              // existence watch re-sent for an existing node is answered with NODE_CREATED.
              else w(g, stat ? ['data'] : ['exists'], fn);
              if (ride) g.persistent.riderDone(path);
              done(err, stat);
            },
            !ride,
          );
        },
        spec,
      ),
    );
  }

  /**
   * Sets a persistent watch on `path` (ZooKeeper 3.6+): it stays set after it fires and across
   * reconnects, until its {@link PersistentWatch.close} or the end of the session (the handle
   * then ends with the session's error). `recursive` also covers every node under `path`.
   * The node need not exist. Handles of one session on one path share one server watch.
   *
   * After a reconnect the handle yields `RESET`: what changed while disconnected is not replayed
   * by the server, so re-read what you keep (caches do).
   *
   * @throws UnimplementedError when the server is older than 3.6 (it is remembered: later calls
   *   of this session fail at once).
   */
  addWatch(path: string, options: AddWatchOptions = {}): Promise<PersistentWatch> {
    return this.guard(async () => {
      validatePath(path);
      const o = checkOptions(options, 'addWatch', ADD_WATCH_OPTION_KEYS);
      const recursive = checkBoolean(o.recursive, 'recursive', false);
      const signal = checkSignal(o.signal);
      signal?.throwIfAborted();
      this.checkSize({ type: 'addWatch', path }, 'addWatch');
      this.checkPacket(watchSize(path, this.chroot, true), 'addWatch', path, 're-registering the watch after a reconnect takes');
      if (this.noPersistentWatches) throw this.noPersistentWatches;
      const gen = this.gen;
      if (gen.dead) throw new SessionExpiredError('SESSION_EXPIRED', `addWatch on ${path}: the session ended`, { zkCode: ZK_SESSION_EXPIRED, path, op: 'addWatch' });
      const registry = gen.persistent;
      let attached = false;
      try {
        if (registry.need(path, recursive)) {
          await this.retrying(
            (ledger) =>
              this.call<void>(
                'addWatch',
                path,
                (g, done) => {
                  if (g !== gen) return done(new SessionExpiredError('SESSION_EXPIRED', `addWatch on ${path}: the session ended`, { zkCode: ZK_SESSION_EXPIRED, path, op: 'addWatch' }));
                  registry.sent(path);
                  addWatch(g.raw, path, registry.modeOf(path), (err) => {
                    registry.answered(path, err === null);
                    done(err);
                  });
                },
                // Abandoned on abort: a late reply still arms the registration, which then goes.
                { signal, ledger, abandonable: true },
              ),
            signal,
            'read',
          );
        }
        signal?.throwIfAborted();
        if (gen.dead || !registry.armed(path)) throw new SessionExpiredError('SESSION_EXPIRED', `addWatch on ${path}: the session ended`, { zkCode: ZK_SESSION_EXPIRED, path, op: 'addWatch' });
        const watch = new PersistentWatch(path, recursive, () => {
          registry.detach(watch);
          return Promise.resolve();
        });
        registry.attach(path, watch);
        attached = true;
        return watch;
      } catch (err) {
        if (err instanceof UnimplementedError) this.noPersistentWatches = err;
        throw err;
      } finally {
        if (!attached) registry.attach(path, undefined);
      }
    });
  }

  /**
   * Sets a data watch with a read, like {@link getDataWatch}, for a caller that only needs the
   * watch (the read's data is not kept), keeps it long and drops it with `stop()` instead of a
   * signal: a lock waiter, with no AbortController and no listener per watch. Rejects with
   * `NoNodeError` when the node is gone (no watch is left then). The read itself is not bounded.
   *
   * @internal
   */
  dataWatch(path: string): Promise<StoppableWatch> {
    return this.guard(() => {
      validatePath(path);
      return this.setWatch('getData', path, undefined, (w, spec) => this.rawGetData(path, spec, w)).then(watchOf);
    });
  }

  /**
   * Runs a watch-setting read. `read` gets an `arm` function that its reply callback must call
   * synchronously on success: a notification can follow the reply in the same socket chunk.
   */
  private watched<T>(op: 'exists' | 'getData' | 'getChildren', path: string, options: WatchOptions, read: (arm: Arm, spec: CallSpec) => Promise<T>): Promise<Watched<T>> {
    return this.guard(async () => {
      validatePath(path);
      const signal = callSignal(options, `${op}Watch`, WATCH_OPTION_KEYS);
      const { result, watch } = await this.setWatch(op, path, signal, read);
      return { result, changed: watch.changed };
    });
  }

  /**
   * The watch-setting read behind {@link watched} and {@link dataWatch}. The read is not
   * abandoned once sent (its reply says whether the watch is set), but the caller is not kept
   * past `signal`: a late reply arms the watch and removes it at once.
   */
  private setWatch<T>(op: 'exists' | 'getData' | 'getChildren', path: string, signal: AbortSignal | undefined, read: (arm: Arm, spec: CallSpec) => Promise<T>): Promise<{ result: T; watch: OneShot }> {
    signal?.throwIfAborted();
    this.checkWatch({ type: op, path });
    const kind = op === 'getChildren' ? 'child' : 'data';
    const watch = new OneShot();
    const arm: Arm = (g, tables, fn) => watch.arm(g, kind, path, tables, fn);
    const reply = this.retrying((ledger) => read(arm, { signal, ledger }), signal, 'read').then((result) => {
      if (signal?.aborted) watch.stop(signal.reason);
      // Not once it fired (the notification can come with the reply): nothing would unsubscribe.
      else if (signal && !watch.settled) watch.unsubscribe = onAbort(signal, (reason) => watch.stop(reason));
      return { result, watch };
    });
    return raceAbort(reply, signal);
  }

  private rawGetData(path: string, spec: CallSpec, arm?: Arm): Promise<DataResult> {
    return this.rawRead('getData', 'data', getData, path, spec, arm);
  }

  private rawGetChildren(path: string, spec: CallSpec, arm?: Arm): Promise<ChildrenResult> {
    return this.rawRead('getChildren', 'child', getChildren, path, spec, arm);
  }

  /** A getData or getChildren, setting a one-shot watch when armed (riding a persistent one there if any). */
  private rawRead<T>(
    op: 'getData' | 'getChildren',
    kind: 'data' | 'child',
    send: (client: Generation['raw'], path: string, watcher: ((e: RawEvent) => void) | undefined, cb: (err: RawError | null, value?: T) => void, serverWatch: boolean) => void,
    path: string,
    spec: CallSpec,
    arm?: Arm,
  ): Promise<T> {
    return this.call<T>(op, path, (g, done) => {
      const fn = arm ? g.watcherFor(kind, path) : undefined;
      const ride = fn !== undefined && riding(g, path);
      send(
        g.raw,
        path,
        fn,
        (err, result) => {
          if (fn) {
            if (err) g.unsent(kind, path, fn);
            else arm?.(g, [kind], fn);
          }
          if (ride) g.persistent.riderDone(path);
          done(err, result);
        },
        fn !== undefined && !ride,
      );
    }, spec);
  }

  /**
   * Runs operations as one atomic transaction. On failure rejects with the typed error of the
   * first failing op, whose `opIndex` says which. Expected version 0 is honoured (the client's
   * own builder silently turns it into "any version"). Not retried on connection loss.
   */
  multi(ops: readonly Op[], options: CallOptions = {}): Promise<OpResult[]> {
    return this.guard(() => {
      const prepared = this.prepareMulti(ops);
      const signal = callSignal(options, 'multi');
      return this.retrying((ledger) => this.sendMulti(prepared, signal, ledger), signal, 'write');
    });
  }

  /**
   * Checks a transaction as {@link multi} does before sending it (each op, data sizes, the
   * packet limit), without sending anything: throws the {@link InvalidArgumentError} that
   * `multi(ops)` would reject with. For a caller that pipelines other requests behind a
   * transaction and must not send them when the transaction is refused.
   */
  validateOps(ops: readonly Op[]): void {
    this.prepareMulti(ops);
  }

  private prepareMulti(ops: readonly Op[]): (Op & { data?: Buffer })[] {
    if (!Array.isArray(ops) || ops.length === 0) throw new InvalidArgumentError(`ops must be a non-empty array, got ${describe(ops)}`);
    const prepared = ops.map((op, i) => this.prepareOp(op, i));
    const first = prepared[0]?.path ?? '/';
    this.checkPacket(multiSize(prepared, this.chroot), `multi of ${prepared.length} ops`, first, 'the transaction is');
    return prepared;
  }

  private sendMulti(prepared: (Op & { data?: Buffer })[], signal: AbortSignal | undefined, ledger: Ledger): Promise<OpResult[]> {
    return this.call<OpResult[]>(
      'multi',
      prepared[0]?.path,
      (g, done) =>
        multi(g.raw, this.encodeMulti(prepared), (err, results) => {
          // The failing op is the first result with a code other than OK or "rolled back" (the
          // server may answer a failed transaction with 0 in the header).
          const index = results ? results.findIndex((r) => r.type === MULTI_RESULT_TYPES.ERROR && r.err !== 0 && r.err !== -2) : -1;
          const failed = index < 0 ? undefined : results?.[index];
          if (failed?.err !== undefined) return done(errorFromCode(failed.err, 'multi', prepared[index]?.path, { opIndex: index, cause: err ?? undefined }));
          if (err !== null) return done(err);
          done(null, (results ?? []).map(toOpResult));
        }),
      { signal, ledger },
    );
  }

  /** The prepared ops as the wire encodes them: a create's ACL and mode as bytes and flags. */
  private encodeMulti(prepared: readonly (Op & { data?: Buffer })[]): MultiOp[] {
    return prepared.map((op): MultiOp => {
      switch (op.type) {
        case 'create':
          return { type: 'create', path: op.path, data: op.data, acls: aclBytes(op.acl ?? Acls.OPEN), flags: CREATE_MODE_FLAGS[op.mode ?? 'PERSISTENT'] };
        case 'setData':
          return { type: 'setData', path: op.path, data: op.data, version: op.version ?? -1 };
        default:
          return { type: op.type, path: op.path, version: op.version ?? -1 };
      }
    });
  }

  private prepareOp(op: Op, i: number): Op & { data?: Buffer } {
    if (op === null || typeof op !== 'object') throw new InvalidArgumentError(`ops[${i}] must be an object, got ${describe(op)}`);
    validatePath(op.path, `ops[${i}].path`);
    if (Object.hasOwn(OP_KEYS, op.type)) checkKeys(op, `ops[${i}] (${op.type})`, OP_KEYS[op.type], 'key');
    switch (op.type) {
      case 'create': {
        const mode = checkMode(op.mode, `ops[${i}].mode`);
        if (SPECIAL_MODES.has(mode)) throw new InvalidArgumentError(`ops[${i}].mode ${mode} is not supported in a transaction: create it on its own`, { path: op.path });
        return { type: 'create', path: op.path, data: toBuffer(op.data, this.maxDataBytes, op.path), mode, acl: op.acl === undefined ? providedAcl(this.aclProvider, op.path) : validateAcl(op.acl, `ops[${i}].acl`) };
      }
      case 'delete':
      case 'check':
        validateVersion(op.version, op.path);
        return { type: op.type, path: op.path, version: op.version ?? -1 };
      case 'setData':
        validateVersion(op.version, op.path);
        if (op.data === undefined) throw new InvalidArgumentError(`ops[${i}].data must be a Uint8Array or a string, got undefined`, { path: op.path });
        return { type: 'setData', path: op.path, data: toBuffer(op.data, this.maxDataBytes, op.path) ?? Buffer.alloc(0), version: op.version ?? -1 };
      default:
        throw new InvalidArgumentError(`ops[${i}].type must be create, delete, setData or check, got ${describe((op as { type: unknown }).type)}`);
    }
  }

  /**
   * The ACL a node created at `path` gets when the create names none: the `aclProvider`
   * option's answer for the path, its `defaultAcl`, or {@link Acls.OPEN} without a provider.
   * Recipes' own `acl` option comes before this.
   */
  aclFor(path: string): readonly Acl[] {
    validatePath(path);
    return providedAcl(this.aclProvider, path);
  }

  /** The node's ACL and {@link Stat} (its `aversion` is the ACL's version). Retried on connection loss. */
  getAcl(path: string, options: CallOptions = {}): Promise<AclResult> {
    return this.guard(() => {
      validatePath(path);
      const signal = callSignal(options, 'getAcl');
      this.checkSize({ type: 'getData', path }, 'getAcl');
      return this.retrying((ledger) => this.call<AclResult>('getAcl', path, (g, done) => sendGetAcl(g.raw, path, done), { signal, abandonable: true, ledger }), signal, 'read');
    });
  }

  /**
   * Replaces the node's ACL (only at ACL version `version`, the Stat's `aversion`, if given;
   * -1 = any) and resolves to the new {@link Stat}. Needs the ADMIN permission on the node.
   * Retried on connection loss (setting the same ACL again is harmless; with a `version`, a
   * retry of an applied attempt fails with `BadVersionError`).
   */
  setAcl(path: string, acl: readonly Acl[], options: { version?: number } & CallOptions = {}): Promise<Stat> {
    return this.guard(() => {
      validatePath(path);
      checkOptions(options, 'setAcl', VERSIONED_CALL_OPTION_KEYS);
      validateVersion(options.version, path);
      const signal = checkSignal(options.signal);
      const checked = validateAcl(acl);
      this.checkSize({ type: 'create', path, acl: checked }, 'setAcl');
      const version = options.version ?? -1;
      return this.retrying((ledger) => this.call<Stat>('setAcl', path, (g, done) => sendSetAcl(g.raw, path, checked, version, done), { signal, ledger }), signal, 'read');
    });
  }

  /**
   * Creates `path` and any missing ancestors, as persistent nodes or, with `container`, as
   * containers (Curator's `creatingParentContainersIfNeeded`: the server deletes each some time
   * after its last child is gone); existing ones are fine (also where we may not create: a
   * NoAuth for a node that exists is not an error). Each node created gets `acl`, or the
   * `aclProvider`'s ACL for its path.
   */
  mkdirp(path: string, options: MkdirpOptions = {}): Promise<void> {
    return this.guard(() => {
      validatePath(path);
      checkOptions(options, 'mkdirp', MKDIRP_OPTION_KEYS);
      checkBoolean(options.container, 'container', false);
      return this.makeDirs(path, options, { sent: false });
    });
  }

  private async makeDirs(path: string, options: MkdirpOptions, ledger: Ledger): Promise<void> {
    if (path === '/') return;
    const mode = options.container === true ? 'CONTAINER' : 'PERSISTENT';
    try {
      await this.createNode(path, { data: options.data, acl: options.acl, mode, signal: options.signal }, ledger);
    } catch (err) {
      if (err instanceof NodeExistsError) return;
      // The server checks the parent's CREATE permission before whether the node exists: a node
      // that is there already is fine, as with Curator's mkdirs (which looks first).
      if (err instanceof NoAuthError && (await this.exists(path, { signal: options.signal }).catch(() => null)) !== null) return;
      if (!(err instanceof NoNodeError)) throw err;
      await this.makeDirs(parentOf(path), { acl: options.acl, container: options.container, signal: options.signal }, ledger);
      await this.makeDirs(path, options, ledger);
    }
  }

  /** Deletes `path` and everything below it; a node already gone is fine. */
  deleteRecursive(path: string, options: CallOptions = {}): Promise<void> {
    return this.guard(() => {
      validatePath(path);
      const signal = callSignal(options, 'deleteRecursive');
      if (path === '/') throw new InvalidArgumentError('refusing to delete the root node');
      return this.deleteTree(path, signal, { sent: false });
    });
  }

  private async deleteTree(path: string, signal: AbortSignal | undefined, ledger: Ledger): Promise<void> {
    let children: string[];
    try {
      children = (await this.listChildren(path, signal, ledger)).children;
    } catch (err) {
      if (err instanceof NoNodeError) return;
      throw err;
    }
    for (const c of children) await this.deleteTree(joinPath(path, c), signal, ledger);
    try {
      await this.deleteNode(path, -1, signal, ledger);
    } catch (err) {
      if (err instanceof NoNodeError) return;
      // A child appeared meanwhile: go again.
      if ((err as ZooKeeperError).code === 'NOT_EMPTY') return this.deleteTree(path, signal, ledger);
      throw err;
    }
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

function toOpResult(r: MultiResult): OpResult {
  switch (r.type) {
    case MULTI_RESULT_TYPES.CREATE:
      return { type: 'create', path: r.path ?? '' };
    case MULTI_RESULT_TYPES.DELETE:
      return { type: 'delete' };
    case MULTI_RESULT_TYPES.SET_DATA:
      return { type: 'setData', stat: r.stat as Stat };
    default:
      return { type: 'check' };
  }
}

/** A create mode: one of {@link CREATE_MODE_FLAGS}' own keys (undefined: PERSISTENT). */
/** Modes with a create request of their own (createContainer, createTTL). */
const SPECIAL_MODES: ReadonlySet<string> = new Set(['CONTAINER', 'PERSISTENT_WITH_TTL', 'PERSISTENT_SEQUENTIAL_WITH_TTL']);

/** The largest time to live ZooKeeper takes (40 bits of the node's ephemeral owner). */
const MAX_TTL_MS = 0xff_ffff_ffff;

/** `ttlMs`: required by the TTL modes, refused by the others. */
function checkTtl(ttl: unknown, mode: string, path: string): number | undefined {
  const needs = mode.endsWith('_WITH_TTL');
  if (ttl === undefined) {
    if (needs) throw new InvalidArgumentError(`create ${describe(path)}: mode ${mode} needs ttlMs (a time to live, ms)`, { path });
    return undefined;
  }
  if (!needs) throw new InvalidArgumentError(`create ${describe(path)}: ttlMs is only for PERSISTENT_WITH_TTL and PERSISTENT_SEQUENTIAL_WITH_TTL, not ${mode}`, { path });
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_MS) throw new InvalidArgumentError(`create ${describe(path)}: ttlMs must be an integer from 1 to ${MAX_TTL_MS}, got ${describe(ttl)}`, { path });
  return ttl;
}

function checkMode(mode: unknown, what: string): keyof typeof CREATE_MODE_FLAGS {
  if (mode === undefined) return 'PERSISTENT';
  if (typeof mode !== 'string' || !Object.hasOwn(CREATE_MODE_FLAGS, mode)) throw new InvalidArgumentError(`${what} must be one of ${Object.keys(CREATE_MODE_FLAGS).join(', ')}, got ${describe(mode)}`);
  return mode as keyof typeof CREATE_MODE_FLAGS;
}

/** The validated signal of a call's options (`what`: the call). */
function callSignal(options: CallOptions | undefined, what: string, keys: readonly string[] = CALL_OPTION_KEYS): AbortSignal | undefined {
  return checkSignal(checkOptions(options, what, keys).signal);
}

/**
 * Whether a one-shot watch-setting read of `path` sent now goes without the server's watch flag,
 * fed by the session's persistent registration there (see `watch-registry.ts`); counted if so.
 */
function riding(g: Generation, path: string): boolean {
  if (!g.persistent.rides(path)) return false;
  g.persistent.riderSent(path);
  return true;
}

/** The chroot of a connect string ('' when none). */
function chrootOf(connectString: string): string {
  const slash = connectString.indexOf('/');
  return slash >= 0 && connectString.length > slash + 1 ? connectString.slice(slash) : '';
}

/**
 * A lost connection, or a server code that asks to try again: worth another attempt of a read.
 * A request that was never sent already waited the whole connect timeout: not retried.
 */
function isTransient(err: unknown): boolean {
  if (err instanceof ConnectionLossError) return err.sent;
  return err instanceof ZooKeeperError && (err.code === THROTTLED || err.code === 'REQUEST_TIMEOUT');
}

/** Throttled, so certainly not applied: worth another attempt of a write. */
function notApplied(err: unknown): boolean {
  return err instanceof ZooKeeperError && err.code === THROTTLED;
}

/**
 * The error a call rejects with, made truthful about what was sent: a last attempt that could
 * not be sent (`sent: false`) after an earlier one was, leaves the call's outcome unknown.
 */
function truthful(err: unknown, ledger: Ledger): unknown {
  if (!(err instanceof ConnectionLossError) || err.sent || !ledger.sent) return err;
  return new ConnectionLossError('CONNECTION_LOSS', `${err.message}; an earlier attempt of the call was sent and may have been applied`, {
    zkCode: err.zkCode,
    op: err.op,
    path: err.path,
    sent: true,
    cause: err,
  });
}
