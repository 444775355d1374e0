import { connect, createServer, type Server, type Socket } from 'node:net';
import { InvalidArgumentError } from '../errors.js';
import { checkBoolean, checkDeadline, checkFunction, checkNonEmptyString, checkOptions, checkPort, checkTimeout, describe, optionKeys } from './check.js';
import { FrameReader, isOpName, OpRewriter, opIs, replyXid, requestHeader, type ZkOpName } from './frames.js';
import { freePort, LOOPBACK } from './ports.js';

export type { ZkOpName } from './frames.js';

/** What a {@link ChaosProxy} does with traffic. @group Testing */
export type ChaosMode = 'pass' | 'latency' | 'blackhole';

/** Options of {@link ChaosProxy.start}. @group Testing */
export interface ChaosProxyOptions {
  /** Host to forward to (default 127.0.0.1). */
  targetHost?: string;
  /** Port to forward to. */
  targetPort: number;
  /** Port to listen on (default a free one). */
  port?: number;
  /** Rewrites what each client sends first (the member links' election handshake). @internal */
  rewriteHead?: HeadRewriter;
  /**
   * For this many ms after a client connects, a target that refuses the connection is tried
   * again instead of the client's connection being closed (default 0: closed at once). Why: a
   * client cannot be told "refused" once the proxy accepted it, and a ZooKeeper follower treats
   * a connection closed after it was accepted as a failed leader (it starts a new election),
   * where a refused one is retried: a new leader's followers would otherwise connect before it
   * listens and wait out initLimit for the next election. @internal
   */
  retryRefusedMs?: number;
}

/**
 * Called with the bytes a client has sent so far on a connection, until it returns the bytes to
 * forward in their place (undefined: not enough yet); later bytes pass untouched. @internal
 */
export type HeadRewriter = (head: Buffer) => Buffer | undefined;

/** Which request {@link ChaosProxy.loseReply} lets through and then answers with a dropped connection. @group Testing */
export interface LoseReplyMatch {
  /** The request's operation (`create` also matches create2, `getChildren` getChildren2). Default: any. */
  op?: ZkOpName;
  /** A string the request must contain, e.g. a node path or part of one. Default: any. */
  path?: string;
}

/** Options of {@link ChaosProxy.loseReply}. @group Testing */
export interface LoseReplyOptions {
  /** Reject if no matching request was answered within this many ms. Default 30000. */
  timeoutMs?: number;
}

/** The keys of {@link ChaosProxyOptions}. @internal */
export const CHAOS_PROXY_OPTION_KEYS = optionKeys<ChaosProxyOptions>({ targetHost: true, targetPort: true, port: true, rewriteHead: true, retryRefusedMs: true });

/** How soon a refused target is tried again (see {@link ChaosProxyOptions.retryRefusedMs}). */
const REFUSED_RETRY_MS = 25;
/** The keys of {@link LoseReplyMatch}. @internal */
export const LOSE_REPLY_MATCH_KEYS = optionKeys<LoseReplyMatch>({ op: true, path: true });
/** The keys of {@link LoseReplyOptions}. @internal */
export const LOSE_REPLY_OPTION_KEYS = optionKeys<LoseReplyOptions>({ timeoutMs: true });

/** An armed {@link ChaosProxy.loseReply}: waiting for its request, then for that request's reply. */
interface ReplyLoss {
  readonly op: ZkOpName | undefined;
  readonly path: Buffer | undefined;
  /** The connection and xid of the matched request. */
  bound?: { link: Link; xid: number };
  done(): void;
}

/** Bytes forwarded by a {@link ChaosProxy}, per direction. @group Testing */
export interface ChaosProxyBytes {
  /** From clients to the target. */
  readonly toTarget: number;
  /** From the target to clients. */
  readonly toClient: number;
}

/** An op code no ZooKeeper server has. */
const UNKNOWN_OP = 9999;

/** One direction of one proxied connection: an ordered queue of chunks with due times. */
class Lane {
  readonly #queue: { chunk: Buffer; due: number }[] = [];
  #timer: NodeJS.Timeout | undefined;
  #ended = false;
  /** Close the link once what is queued is out (a reply is being lost). */
  #cutting = false;
  /** Bytes held until `rewrite` says what to forward in their place (undefined: nothing to rewrite). */
  #head: Buffer | undefined;

  constructor(
    private readonly proxy: ChaosProxy,
    private readonly from: Socket,
    private readonly to: () => Socket | undefined,
    private readonly count: (bytes: number) => void,
    private readonly fail: () => void,
    /** Sees every chunk first; returns how many of its bytes to forward before cutting the link. */
    tap: (chunk: Buffer) => number | undefined,
    private readonly rewrite?: HeadRewriter,
    /** Rewrites what passes (after the head): the request lane's op codes. */
    transform?: (chunk: Buffer) => Buffer,
  ) {
    if (rewrite) this.#head = Buffer.alloc(0);
    from.on('data', (received: Buffer) => {
      const head = this.#rewriteHead(received);
      if (head === undefined) return;
      const data = transform ? transform(head) : head;
      if (data.length === 0) return;
      const cut = tap(data);
      const chunk = cut === undefined ? data : data.subarray(0, cut);
      // Due times never go backwards, so order holds even when the latency shrinks.
      const last = this.#queue.at(-1)?.due ?? 0;
      if (chunk.length > 0) this.#queue.push({ chunk, due: Math.max(last, performance.now() + proxy.latencyMs) });
      if (cut !== undefined) this.#cutting = true;
      this.flush();
    });
    // A FIN travels like data: after what came before it, and not through a blackhole.
    from.on('end', () => {
      // A head cut short by the client goes as it came.
      if (this.#head !== undefined && this.#head.length > 0) this.#queue.push({ chunk: this.#head, due: performance.now() + proxy.latencyMs });
      this.#head = undefined;
      this.#ended = true;
      this.flush();
    });
  }

  #rewriteHead(data: Buffer): Buffer | undefined {
    if (this.#head === undefined || this.rewrite === undefined) return data;
    const head = Buffer.concat([this.#head, data]);
    const out = this.rewrite(head);
    this.#head = out === undefined ? head : undefined;
    return out;
  }

  /** Sends what is due, unless the proxy blackholes; schedules the rest. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const to = this.to();
    if (to?.destroyed) return this.fail();
    if (this.proxy.mode === 'blackhole' || to === undefined) {
      // Hold the data (TCP would retransmit it once the partition heals) and stop reading.
      this.from.pause();
      return;
    }
    const now = performance.now();
    let head = this.#queue[0];
    while (head !== undefined && head.due <= now) {
      this.#queue.shift();
      this.count(head.chunk.length);
      to.write(head.chunk);
      head = this.#queue[0];
    }
    if (head !== undefined) {
      this.#timer = setTimeout(() => this.flush(), head.due - now);
    } else if (this.#cutting) {
      this.fail();
    } else if (this.#ended) {
      to.end();
    } else {
      this.from.resume();
    }
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#queue.length = 0;
  }
}

/** What every connection of one proxy forwards to, and how (fixed when the proxy starts). */
interface LinkTarget {
  readonly proxy: ChaosProxy;
  readonly host: string;
  readonly port: number;
  /** The proxy's byte counts, added to by every link. */
  readonly counts: { toTarget: number; toClient: number };
  readonly taps: { request(link: Link, chunk: Buffer): undefined; reply(link: Link, chunk: Buffer): number | undefined };
  readonly rewriteHead: HeadRewriter | undefined;
  /** See {@link ChaosProxyOptions.retryRefusedMs} (0: never). */
  readonly retryRefusedMs: number;
}

/** A client connection and its upstream connection. */
class Link {
  upstream: Socket | undefined;
  readonly lanes: Lane[] = [];
  readonly requests = new FrameReader();
  readonly ops = new OpRewriter();
  // A reply's xid is all a loss needs: skip bodies (a listing can be megabytes).
  readonly replies = new FrameReader(8);
  #done = false;
  /** Until when a refused target is tried again (monotonic ms; undefined: never). */
  readonly #retryUntil: number | undefined;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly client: Socket,
    private readonly target: LinkTarget,
    private readonly onDone: (link: Link) => void,
  ) {
    this.#retryUntil = target.retryRefusedMs > 0 ? performance.now() + target.retryRefusedMs : undefined;
    client.on('error', () => this.destroy());
    client.on('close', () => this.#closed());
  }

  /** Connects to the target (deferred while blackholed: a partition lets no SYN through). */
  open(): void {
    if (this.upstream || this.#done) return;
    const { host, port } = this.target;
    const upstream = connect({ host, port, allowHalfOpen: true, noDelay: true });
    this.upstream = upstream;
    if (this.#retryUntil !== undefined && this.lanes.length === 0) {
      // Nothing is read from the client until the target accepts: its bytes wait in its socket.
      const refused = (err: NodeJS.ErrnoException): void => {
        upstream.destroy();
        this.upstream = undefined;
        if (err.code !== 'ECONNREFUSED' || performance.now() >= (this.#retryUntil ?? 0) || this.client.destroyed) return this.destroy();
        this.#retryTimer = setTimeout(() => {
          // Blackholed meanwhile: going back to pass opens it (a partition lets no SYN through).
          if (this.target.proxy.mode !== 'blackhole') this.open();
        }, REFUSED_RETRY_MS);
        // As the listener: a forgotten proxy must not keep the process alive.
        this.#retryTimer.unref();
      };
      upstream.once('error', refused);
      upstream.once('connect', () => {
        upstream.off('error', refused);
        this.#wire(upstream);
      });
      return;
    }
    this.#wire(upstream);
  }

  /** Forwards between the client and `upstream` (connected or connecting). */
  #wire(upstream: Socket): void {
    const { proxy, counts, taps, rewriteHead } = this.target;
    upstream.on('error', () => this.destroy());
    upstream.on('close', () => this.#closed());
    upstream.on('connect', () => this.lanes.forEach((lane) => lane.flush()));
    const fail = (): void => this.destroy();
    this.lanes.push(
      new Lane(proxy, this.client, () => (upstream.connecting ? undefined : upstream), (n) => (counts.toTarget += n), fail, (c) => taps.request(this, c), rewriteHead, (c) => this.ops.feed(c, proxy.opRewriter())),
      new Lane(proxy, upstream, () => this.client, (n) => (counts.toClient += n), fail, (c) => taps.reply(this, c)),
    );
  }

  /** Closes both sides at once. */
  destroy(): void {
    clearTimeout(this.#retryTimer);
    this.lanes.forEach((lane) => lane.stop());
    this.client.destroy();
    this.upstream?.destroy();
    this.#finish();
  }

  #closed(): void {
    if (!this.client.destroyed) return;
    // No upstream: never opened (blackholed), or between refused tries.
    if (this.upstream === undefined) this.destroy();
    else if (this.upstream.destroyed) this.#finish();
    else if (this.upstream.connecting) this.destroy();
  }

  /** Whether both sides are closed. */
  get closed(): boolean {
    return this.#done;
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.onDone(this);
  }
}

/**
 * A fault-injecting TCP proxy on 127.0.0.1 in front of one target (e.g. a ZooKeeper server).
 * Point a client at `proxy.connectString`, then delay, drop, refuse or blackhole its traffic
 * while the server itself stays healthy.
 * @group Testing
 */
export class ChaosProxy {
  /** Listening port. */
  readonly port: number;
  /** Host traffic is forwarded to. */
  readonly targetHost: string;
  /** Port traffic is forwarded to. */
  readonly targetPort: number;
  /** Current mode; change it with pass(), latency(), blackhole(). */
  mode: ChaosMode = 'pass';
  /** Delay added to every chunk, in milliseconds (0 unless mode is 'latency'). */
  latencyMs = 0;

  readonly #server: Server;
  readonly #links = new Set<Link>();
  readonly #bytes = { toTarget: 0, toClient: 0 };
  #rejecting = false;
  readonly #losses = new Set<ReplyLoss>();
  readonly #taps = {
    request: (link: Link, chunk: Buffer): undefined => this.#onRequests(link, chunk),
    reply: (link: Link, chunk: Buffer): number | undefined => this.#onReplies(link, chunk),
  };
  readonly #target: LinkTarget;
  #healTimer: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;
  #unknownOps = new Set<number>();

  private constructor(server: Server, port: number, targetHost: string, targetPort: number, rewriteHead: HeadRewriter | undefined, retryRefusedMs: number) {
    this.#server = server;
    this.port = port;
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.#target = { proxy: this, host: targetHost, port: targetPort, counts: this.#bytes, taps: this.#taps, rewriteHead, retryRefusedMs };
    server.on('connection', (socket) => this.#accept(socket));
  }

  /** Starts a proxy in pass mode. @throws InvalidArgumentError for a bad option (nothing is started). */
  static async start(options: ChaosProxyOptions): Promise<ChaosProxy> {
    if (options === undefined) throw new InvalidArgumentError('ChaosProxy.start needs options { targetPort, targetHost?, port? }');
    checkOptions(options, 'ChaosProxy.start', CHAOS_PROXY_OPTION_KEYS);
    checkPort(options.targetPort, 'targetPort');
    checkPort(options.port, 'port', true);
    if (options.targetHost !== undefined) checkNonEmptyString(options.targetHost, 'targetHost');
    if (options.rewriteHead !== undefined) checkFunction(options.rewriteHead, 'rewriteHead');
    const retryRefusedMs = checkTimeout(options.retryRefusedMs, 'retryRefusedMs') ?? 0;
    const server = createServer({ noDelay: true, allowHalfOpen: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      void (async () => server.listen({ host: LOOPBACK, port: options.port ?? (await freePort()) }, () => resolve()))().catch(reject);
    });
    // Why unref: a forgotten proxy must not keep the test process alive.
    server.unref();
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
    return new ChaosProxy(server, address.port, options.targetHost ?? LOOPBACK, options.targetPort, options.rewriteHead, retryRefusedMs);
  }

  /** `127.0.0.1:PORT` of the proxy, for a client. */
  get connectString(): string {
    return `${LOOPBACK}:${this.port}`;
  }

  /** Number of open client connections. */
  get connections(): number {
    return this.#links.size;
  }

  /** Bytes forwarded so far. */
  get bytes(): ChaosProxyBytes {
    return { ...this.#bytes };
  }

  /**
   * Makes the server behind see requests of these op codes (e.g. 106, addWatch) with an op code
   * no server knows, as a server too old for them would: it answers UNIMPLEMENTED and closes the
   * connection. For testing what a client does against an older server. `[]` stops it.
   */
  unknownOps(codes: readonly number[]): void {
    if (!Array.isArray(codes) || !codes.every((c) => Number.isInteger(c) && c > 0 && c < UNKNOWN_OP)) throw new InvalidArgumentError(`unknownOps: codes must be an array of positive op codes, got ${describe(codes)}`);
    this.#unknownOps = new Set(codes);
  }

  /** What rewrites request op codes now (undefined: nothing is, and no byte is held). @internal */
  opRewriter(): ((op: number) => number | undefined) | undefined {
    if (this.#unknownOps.size === 0) return undefined;
    const ops = this.#unknownOps;
    return (op) => (ops.has(op) ? UNKNOWN_OP : undefined);
  }

  /** Forwards traffic untouched (and releases what a blackhole or latency held). */
  pass(): void {
    this.#set('pass', 0);
  }

  /** Delays every chunk by `ms` (0 to 2^31-1) in both directions, keeping order. */
  latency(ms: number): void {
    if (ms === undefined) throw new InvalidArgumentError('latency needs a number of ms');
    this.#set('latency', checkTimeout(ms, 'latency ms') as number);
  }

  /**
   * Forwards nothing in either direction, on open and new connections, without closing
   * anything (no FIN, no RST): a network partition. Held data flows once back to pass.
   */
  blackhole(): void {
    this.#set('blackhole', 0);
  }

  /** Blackholes for `ms` (0 to 2^31-1), then goes back to pass. */
  blackholeFor(ms: number): void {
    if (ms === undefined) throw new InvalidArgumentError('blackholeFor needs a number of ms');
    checkTimeout(ms, 'blackholeFor ms');
    this.blackhole();
    this.#healTimer = setTimeout(() => this.pass(), ms);
    this.#healTimer.unref();
  }

  /** Destroys every open connection now; new connections are still accepted. */
  dropAll(): void {
    for (const link of [...this.#links]) link.destroy();
  }

  /** While on, accepts new connections and resets them at once (connection refused, roughly). */
  reject(on: boolean): void {
    if (on === undefined) throw new InvalidArgumentError('reject needs a boolean');
    this.#rejecting = checkBoolean(on, 'reject(on)', false);
  }

  /**
   * Lets the next request that matches through to the server, then drops its reply and closes
   * that connection, as a network failure right after the request arrived would: the request is
   * applied, and the client sees a connection loss instead of the answer. Replies to earlier
   * requests are delivered. Resolves once the reply was dropped; rejects after `timeoutMs`.
   *
   * @example
   * ```ts
   * import assert from 'node:assert/strict';
   * import { ConnectionLossError } from 'zk-recipes';
   * import type { ChaosProxy } from 'zk-recipes/testing';
   * declare const proxy: ChaosProxy; // in front of the server `session` is connected through
   *
   * const lost = proxy.loseReply({ op: 'create', path: '/locks/a' });
   * await assert.rejects(session.create('/locks/a/x'), ConnectionLossError);
   * await lost; // and the node exists
   * ```
   */
  loseReply(match: LoseReplyMatch = {}, options: LoseReplyOptions = {}): Promise<void> {
    checkOptions(match, 'loseReply (its match)', LOSE_REPLY_MATCH_KEYS);
    if (match.op !== undefined && (typeof match.op !== 'string' || !isOpName(match.op))) throw new InvalidArgumentError(`loseReply: unknown op ${describe(match.op)}`);
    if (match.path !== undefined) checkNonEmptyString(match.path, 'loseReply: path');
    const timeoutMs = checkDeadline(checkOptions(options, 'loseReply', LOSE_REPLY_OPTION_KEYS).timeoutMs, 'loseReply: timeoutMs', 30_000);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#losses.delete(loss);
        reject(new Error(`loseReply: no reply to a matching request (${JSON.stringify(match)}) within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      const loss: ReplyLoss = {
        op: match.op,
        path: match.path === undefined ? undefined : Buffer.from(match.path),
        done: () => {
          clearTimeout(timer);
          this.#losses.delete(loss);
          resolve();
        },
      };
      this.#losses.add(loss);
    });
  }

  #onRequests(link: Link, chunk: Buffer): undefined {
    for (const frame of link.requests.push(chunk)) {
      const header = frame.handshake ? undefined : requestHeader(frame.bytes);
      if (header === undefined) continue;
      for (const loss of this.#losses) {
        if (loss.bound && !loss.bound.link.closed) continue;
        if (loss.op !== undefined && !opIs(header.op, loss.op)) continue;
        if (loss.path !== undefined && !frame.bytes.includes(loss.path)) continue;
        loss.bound = { link, xid: header.xid };
        break;
      }
    }
    return undefined;
  }

  #onReplies(link: Link, chunk: Buffer): number | undefined {
    const frames = link.replies.push(chunk);
    for (const loss of this.#losses) {
      if (loss.bound?.link !== link) continue;
      const xid = loss.bound.xid;
      const reply = frames.find((f) => !f.handshake && replyXid(f.bytes) === xid);
      if (reply === undefined) continue;
      loss.done();
      return Math.max(0, reply.start);
    }
    return undefined;
  }

  /** Closes the listener and every connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      clearTimeout(this.#healTimer);
      this.#server.close(() => resolve());
      this.dropAll();
    });
    return this.#closing;
  }

  /** Same as {@link ChaosProxy.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #set(mode: ChaosMode, latencyMs: number): void {
    clearTimeout(this.#healTimer);
    this.#healTimer = undefined;
    this.mode = mode;
    this.latencyMs = latencyMs;
    for (const link of this.#links) {
      if (mode !== 'blackhole') link.open();
      link.lanes.forEach((lane) => lane.flush());
    }
  }

  #accept(socket: Socket): void {
    if (this.#rejecting || this.#closing) {
      socket.on('error', () => {});
      socket.resetAndDestroy();
      return;
    }
    const link = new Link(socket, this.#target, (l) => this.#links.delete(l));
    this.#links.add(link);
    if (this.mode !== 'blackhole') link.open();
    else socket.pause();
  }
}
