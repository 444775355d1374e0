/**
 * A node that stays there: Curator's `PersistentNode`.
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import type { ZkSession } from '../client/session.js';
import { watchSettled } from '../client/session.js';
import type { Acl, NodeData, WatchEvent } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { copyPermissionError } from '../util/permission.js';
import { backoffDelay, resolveBackoff, type Backoff } from '../client/retry.js';
import { checkBoolean, checkOptions, checkSignal, checkTimeout, describe, joinPath, optionKeys, parentOf, toBuffer, validatePath } from '../client/validate.js';
import { BadVersionError, ClosedError, ConnectionLossError, InvalidArgumentError, isPermissionError, NodeExistsError, NoNodeError, OperationTimeoutError, SessionExpiredError, UnimplementedError } from '../errors.js';
import { delay, raceAbort } from '../util/abort.js';
import { linkSignals, onAbort, ownedController } from '../util/signals.js';
import { protectedPrefix } from '../driver/names.js';

/** Modes of a {@link PersistentNode}, as Curator's `CreateMode`s. @group Nodes */
export type PersistentNodeMode = 'PERSISTENT' | 'EPHEMERAL' | 'PERSISTENT_SEQUENTIAL' | 'EPHEMERAL_SEQUENTIAL';

/** Options of a {@link PersistentNode}. @group Nodes */
export interface PersistentNodeOptions {
  /** Creation mode; `EPHEMERAL` by default. */
  mode?: PersistentNodeMode;
  /**
   * Curator's protection: the name carries `_c_<uuid>-` so that a create whose reply was lost
   * is found again instead of created twice. Default false. Without it, a sequential create
   * whose reply was lost may leave an unowned extra node (as in Curator).
   */
  protection?: boolean;
  /** Initial data (at most the session's data limit). Default: empty. */
  data?: NodeData;
  /**
   * The pause after a failed attempt (a parent that cannot have children, a lost connection;
   * not a permission refusal, `NoAuthError` or `InvalidAclError`, which stops the node): jittered, doubling from `baseDelayMs` up to
   * `maxDelayMs`. Default `{ baseDelayMs: 100, maxDelayMs: 5000 }`.
   */
  errorBackoff?: {
    /** The first pause, ms (an integer from 0 to 2^31-1). Default 100. */
    baseDelayMs?: number;
    /** The longest pause, ms (an integer from `baseDelayMs` to 2^31-1). Default 5000. */
    maxDelayMs?: number;
  };
  /**
   * ACL of the node and of the parents it creates; default: the session's `aclProvider` (the
   * open ACL without one). See [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** Options of {@link PersistentNode.waitForInitialCreate}, {@link PersistentNode.setData} and {@link PersistentNode.close}. @group Nodes */
export interface PersistentNodeWaitOptions {
  /** Give up after this many ms with {@link OperationTimeoutError}. Default: no limit (close: 10000). */
  timeoutMs?: number;
  /** Give up when this aborts, rejecting with its reason. */
  signal?: AbortSignal;
}

/** The keys of {@link PersistentNodeOptions}. @internal */
export const PERSISTENT_NODE_OPTION_KEYS = optionKeys<PersistentNodeOptions>({ mode: true, protection: true, data: true, errorBackoff: true, acl: true });
/** The keys of {@link PersistentNodeWaitOptions}. @internal */
export const PERSISTENT_NODE_WAIT_OPTION_KEYS = optionKeys<PersistentNodeWaitOptions>({ timeoutMs: true, signal: true });

/** Events of a {@link PersistentNode}. @group Nodes */
export interface PersistentNodeEvents {
  /** The node was created (first time or again), or an existing one adopted, at `path`. */
  created: (path: string) => void;
  /** The node was seen deleted (by someone else, or with its session); it is being re-created. */
  deleted: (path: string) => void;
  /**
   * A create, write or watch failed; the node retries with backoff, except after a permission
   * refusal (`NoAuthError`, `InvalidAclError`): the node then stops for good (waits reject with
   * that error; `close()` still cleans up).
   */
  error: (error: Error) => void;
}

const MODES: ReadonlySet<string> = new Set(['PERSISTENT', 'EPHEMERAL', 'PERSISTENT_SEQUENTIAL', 'EPHEMERAL_SEQUENTIAL']);
const DEFAULT_BACKOFF: Backoff = { baseDelayMs: 100, maxDelayMs: 5000 };
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;
const noop = (): void => undefined;

/** A create under way, kept until its outcome is known (a lost reply is looked up by it). */
interface Pending {
  readonly parent: string;
  /** `_c_<uuid>-` with protection, else empty. */
  readonly prefix: string;
  readonly target: string;
  /** A create of it was sent and its reply lost: it may exist. */
  unsure: boolean;
}

/**
 * A node kept at `path` across reconnects, session loss and deletion by someone else: it is
 * watched, and re-created with the latest data given to {@link setData}. Sequential modes get a
 * new name on each re-create ({@link actualPath}); Curator re-uses the old name, which would put
 * a re-created node ahead of newer siblings. `close()` deletes it.
 *
 * Layout: Curator's: `path` itself, or with protection `<parent>/_c_<uuid>-<name>` (and the
 * sequence suffix in sequential modes); missing parents are created as containers.
 *
 * - **Lost create reply**: the node is looked up (after a `sync`) before creating again: with
 *   protection by its uuid, so there is never a second one; at a plain non-sequential path by
 *   its path. An unprotected sequential name cannot be found again (as in Curator).
 * - **Existing node** at a non-sequential path (someone else's, or the previous session's
 *   ephemeral still held by the leader): adopted as Curator does, our data written to it and
 *   watched; when it goes, ours is created.
 * - **New session**: an ephemeral of the previous session may still be visible (the leader has
 *   not expired it yet, or a lagging member still shows it): it is watched until it goes, then
 *   the node is created again, so there is one at a time, never two.
 * - **Reconnect** (same session): the watch, re-sent by the client, reports a deletion that
 *   happened meanwhile.
 * - Failed attempts back off (jittered, capped); the loop ends on close, on close of the
 *   session, or when a lost session is not renewed.
 * @group Nodes
 */
export class PersistentNode extends EventEmitter<PersistentNodeEvents> {
  readonly #session: ZkSession;
  readonly #path: string;
  readonly #mode: PersistentNodeMode;
  readonly #protection: boolean;
  readonly #backoff: Backoff;
  #data: Buffer;
  /** The data known to be on the server node (the buffer last written or created with). */
  #written: Buffer | undefined;
  #actual: string | undefined;
  #pending: Pending | undefined;
  #started = false;
  readonly #stop = ownedController();
  /** Aborts when the loop ended with its session (closed, or lost and not renewed). */
  readonly #over = ownedController();
  /** The `acl` option (undefined: the session's provider). */
  readonly #acl: readonly Acl[] | undefined;
  #loop: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #created = false;
  readonly #firstWaiters = new Set<() => void>();
  #wake: (() => void) | undefined;
  /** The watch of the node when close began: left for the delete to fire (see #finish). */
  #parked: { readonly changed: Promise<WatchEvent>; readonly ctl: AbortController } | undefined;
  /** Whether close's work is over: a watch the loop leaves after that is removed at once. */
  #finished = false;
  readonly #onSession = (): void => this.#wake?.();

  /** A node at `path`; call {@link start}. */
  constructor(session: ZkSession, path: string, options: PersistentNodeOptions = {}) {
    super();
    if (session === null || typeof session !== 'object' || typeof session.create !== 'function') throw new InvalidArgumentError(`PersistentNode: a ZkSession is required, got ${describe(session)}`);
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError('PersistentNode: path must not be the root');
    const o = checkOptions(options, 'new PersistentNode', PERSISTENT_NODE_OPTION_KEYS);
    const mode = o.mode ?? 'EPHEMERAL';
    if (typeof mode !== 'string' || !MODES.has(mode)) throw new InvalidArgumentError(`PersistentNode: mode must be one of ${[...MODES].join(', ')}, got ${describe(mode)}`);
    this.#protection = checkBoolean(o.protection, 'protection', false);
    this.#backoff = resolveBackoff(o.errorBackoff, 'errorBackoff', DEFAULT_BACKOFF);
    this.#session = session;
    this.#path = path;
    this.#mode = mode;
    this.#data = this.#toData(o.data);
    this.#acl = optionalAcl(o.acl, 'PersistentNode');
    if (this.#protection) validatePath(this.#targetOf(protectedPrefix()), 'protected path');
  }

  /** The path given (with protection and sequential modes, the node's actual name differs). */
  get path(): string {
    return this.#path;
  }

  /** The node's actual path (with protection prefix and sequence), or undefined while it is not there (before the first create, or being re-created). */
  get actualPath(): string | undefined {
    return this.#actual;
  }

  /** The latest data. */
  get data(): Buffer {
    return this.#data;
  }

  /** Starts keeping the node. Once only; throws {@link ClosedError} after close. */
  start(): void {
    if (this.#stop.signal.aborted) throw new ClosedError(`PersistentNode ${this.#path}: closed`);
    if (this.#started) throw new InvalidArgumentError(`PersistentNode ${this.#path}: already started`);
    this.#started = true;
    this.#session.on('session', this.#onSession);
    this.#loop = this.#run();
  }

  /**
   * Resolves once the node was first created (or adopted); rejects with
   * {@link OperationTimeoutError} after `timeoutMs`, with the signal's reason on abort, with
   * {@link ClosedError} on close.
   */
  async waitForInitialCreate(options: PersistentNodeWaitOptions = {}): Promise<void> {
    const o = checkOptions(options, 'waitForInitialCreate', PERSISTENT_NODE_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.#stop.signal.aborted) throw this.#stop.signal.reason as Error;
    if (this.#over.signal.aborted) throw this.#overReason();
    if (!this.#started) throw new InvalidArgumentError(`PersistentNode ${this.#path}: not started`);
    if (this.#created) return;
    const link = linkSignals([signal, this.#stop.signal, this.#over.signal], timeoutMs);
    let done: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        if (link.signal.aborted) return reject(this.#reason(link, timeoutMs, 'not created'));
        done = resolve;
        this.#firstWaiters.add(resolve);
        link.signal.addEventListener('abort', () => reject(this.#reason(link, timeoutMs, 'not created')), { once: true });
      });
    } finally {
      if (done) this.#firstWaiters.delete(done);
      link.dispose();
    }
  }

  /**
   * Sets the data: written now if the node is there (retried over connection losses until the
   * deadline), and used by every re-create; if a create is under way, the node gets it as soon
   * as it is there. Throws {@link ClosedError} after close, {@link InvalidArgumentError} for data
   * that is not a string or bytes or over the session's limit.
   */
  async setData(data: NodeData, options: PersistentNodeWaitOptions = {}): Promise<void> {
    if (this.#stop.signal.aborted) throw new ClosedError(`PersistentNode ${this.#path}: closed`);
    const o = checkOptions(options, 'setData', PERSISTENT_NODE_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    const buf = this.#toData(data);
    this.#data = buf;
    const link = linkSignals([signal, this.#stop.signal], timeoutMs);
    try {
      for (let attempt = 0; ; attempt++) {
        const at = this.#actual;
        // Not there (yet): the create under way or the next one carries it (see #confirm).
        if (at === undefined || this.#written === buf || this.#data !== buf) return;
        try {
          // Not waited for past the deadline (every re-create writes the latest data anyway).
          await raceAbort(this.#session.setData(at, buf, { signal: link.signal }), link.signal);
          if (this.#actual === at && this.#data === buf) this.#written = buf;
          return;
        } catch (err) {
          if (link.signal.aborted) throw this.#reason(link, timeoutMs, 'data not written');
          if (err instanceof NoNodeError) return; // gone: re-created with this data
          if (!(err instanceof ConnectionLossError || err instanceof SessionExpiredError)) throw err;
        }
        await delay(backoffDelay(this.#backoff, Math.min(attempt, 20)), link.signal).catch(() => undefined);
        if (link.signal.aborted) throw this.#reason(link, timeoutMs, 'data not written');
      }
    } finally {
      link.dispose();
    }
  }

  /** Keeps the node until close (or the session's end). */
  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    let attempt = 0;
    let refused: Error | undefined;
    while (!stop.aborted && !this.#sessionOver()) {
      try {
        if (this.#actual === undefined) await this.#create();
        if (stop.aborted) break;
        if (await this.#watchOnce()) attempt = 0;
      } catch (err) {
        if (stop.aborted || this.#sessionOver()) break;
        this.emit('error', err as Error);
        // No permission: no retry can cure it, so stop rather than cost requests forever.
        if (isPermissionError(err)) {
          refused = err;
          break;
        }
        await this.#pause(backoffDelay(this.#backoff, Math.min(attempt++, 20)));
      }
    }
    if (!stop.aborted && refused) this.#over.abort(refused);
    else if (!stop.aborted) {
      const s = this.#session.signal;
      this.#over.abort(s.aborted ? s.reason : new ClosedError(`PersistentNode ${this.#path}: its session is closed`));
    }
  }

  /** Whether the session is closed, or lost for good. */
  #sessionOver(): boolean {
    return this.#session.closed || (this.#session.state === 'LOST' && !this.#session.renewsOnLoss);
  }

  /** A backoff pause that a new session or close cuts short. */
  async #pause(ms: number): Promise<void> {
    const wake = new AbortController();
    this.#wake = () => wake.abort();
    try {
      await delay(ms, this.#stop.signal, wake.signal).catch(noop);
    } finally {
      this.#wake = undefined;
    }
  }

  /**
   * Watches the node once: resolves when it was deleted (then cleared for a re-create), its
   * data changed, or a new session came (then the loop looks again). Resolves true when the node
   * was confirmed ours (or adopted).
   */
  async #watchOnce(): Promise<boolean> {
    const path = this.#actual as string;
    const stop = this.#stop.signal;
    // Our own controller: a watch we stop waiting on is removed, not left on the server.
    const ctl = new AbortController();
    // Close gives up the request; once the watch is set, close deletes the node first, which
    // fires the watch (no removal to send), and only then drops a watch still set (#finish).
    const unsubscribe = onAbort(stop, (r) => ctl.abort(r));
    let changed: Promise<WatchEvent> | undefined;
    try {
      const w = await this.#session.existsWatch(path, { signal: ctl.signal });
      unsubscribe();
      changed = w.changed;
      changed.catch(noop);
      if (w.result === null) {
        this.#lost(path);
        return false;
      }
      const ephemeral = this.#mode.startsWith('EPHEMERAL');
      const foreign = ephemeral && w.result.ephemeralOwner !== this.#session.sessionId;
      // Curator adopts a node at a non-sequential path: our data onto it (below), and watched.
      // A sequential name of a previous session (still held by the leader, or still shown by a
      // lagging member) is only watched until it goes, then ours is created: one at a time.
      const confirmed = !foreign || !this.#mode.endsWith('SEQUENTIAL');
      if (confirmed && this.#written !== this.#data) await this.#write(path);
      const ev = await this.#waitChange(changed, stop);
      if (ev === 'NODE_DELETED') this.#lost(path);
      return confirmed;
    } finally {
      unsubscribe();
      if (changed !== undefined && !watchSettled(changed)) {
        if (stop.aborted && !this.#finished) this.#parked = { changed, ctl };
        else ctl.abort();
      }
    }
  }

  /** Writes the latest data to `path` (ours, or being adopted). */
  async #write(path: string): Promise<void> {
    const data = this.#data;
    try {
      await this.#session.setData(path, data, { signal: this.#stop.signal });
      if (this.#actual === path) this.#written = data;
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err; // gone: the watch sends us round
    }
  }

  #lost(path: string): void {
    this.#actual = undefined;
    this.#written = undefined;
    this.emit('deleted', path);
  }

  /** Waits for the watch to fire (its type), or for a new session or the watch's end ('session'). */
  #waitChange(changed: Promise<{ type: string }>, stop: AbortSignal): Promise<string> {
    let off = noop;
    return new Promise<string>((resolve) => {
      if (stop.aborted) return resolve('closing');
      this.#wake = () => resolve('session');
      off = onAbort(stop, () => resolve('closing'));
      changed.then(
        (e) => resolve(e.type),
        () => resolve('session'),
      );
    }).finally(() => {
      this.#wake = undefined;
      off();
    });
  }

  /** The node's path for a protection prefix (or none). */
  #targetOf(prefix: string): string {
    if (prefix === '') return this.#path;
    return joinPath(parentOf(this.#path), prefix + this.#path.slice(this.#path.lastIndexOf('/') + 1));
  }

  /** Creates the node (or adopts or finds it) and sets {@link actualPath}. */
  async #create(madeParents = false): Promise<void> {
    const stop = this.#stop.signal;
    const sequential = this.#mode.endsWith('SEQUENTIAL');
    let p = this.#pending;
    if (p === undefined) {
      const prefix = this.#protection ? protectedPrefix() : '';
      p = this.#pending = { parent: parentOf(this.#path), prefix, target: this.#targetOf(prefix), unsure: false };
    }
    if (p.unsure) {
      // The last create's reply was lost: it may be there. Look, from an up-to-date view.
      const found = await this.#find(p, stop);
      if (found !== undefined) return this.#settle(found, undefined);
      p.unsure = false;
    }
    const data = this.#data;
    try {
      const created = await this.#session.create(p.target, { data, mode: this.#mode, signal: stop, acl: this.#acl });
      this.#settle(created, data);
    } catch (err) {
      if (err === stop.reason) {
        // Refused before it was sent: nothing to find later.
        this.#pending = undefined;
        throw err;
      }
      if (err instanceof NoNodeError && p.parent !== '/' && !madeParents) {
        await this.#session.mkdirp(p.parent, { container: true, signal: stop, acl: this.#acl }).catch((e: unknown) => {
          if (!(e instanceof UnimplementedError)) throw e;
          return this.#session.mkdirp(p.parent, { signal: stop, acl: this.#acl }); // a server before containers
        });
        return this.#create(true); // once: a parent deleted again goes through the backoff
      }
      if (err instanceof NodeExistsError && !sequential) {
        // Curator adopts an existing node: our data onto it, then watched.
        await this.#session.setData(p.target, this.#data, { signal: stop });
        return this.#settle(p.target, data);
      }
      if (err instanceof ConnectionLossError || err instanceof SessionExpiredError) {
        // It may have been applied: looked up before the next create (and by close). An
        // unprotected sequential name cannot be found again, as in Curator.
        if (this.#protection || !sequential) p.unsure = true;
        else this.#pending = undefined;
      }
      throw err;
    }
  }

  /** The node of a create whose reply was lost, by its protection uuid; undefined if absent. */
  async #find(p: Pending, signal: AbortSignal): Promise<string | undefined> {
    await this.#session.sync(p.parent, { signal });
    if (p.prefix === '') return (await this.#session.exists(p.target, { signal })) ? p.target : undefined;
    const { children } = await this.#session.getChildren(p.parent, { signal });
    const name = children.find((c) => c.startsWith(p.prefix));
    return name === undefined ? undefined : joinPath(p.parent, name);
  }

  /** Records the node at `path` (created with `data`, or found with unknown data). */
  #settle(path: string, data: Buffer | undefined): void {
    this.#pending = undefined;
    this.#actual = path;
    this.#written = data;
    if (this.#stop.signal.aborted) return; // closed meanwhile: close deletes it
    this.emit('created', path);
    if (!this.#created) {
      this.#created = true;
      for (const w of this.#firstWaiters) w();
      this.#firstWaiters.clear();
    }
  }

  /**
   * Stops keeping the node and deletes it, also one whose create was under way (a lost reply is
   * looked up by its protection uuid). Idempotent. An unreachable server ends it with
   * {@link OperationTimeoutError} after `timeoutMs` (default 10000); an ephemeral then goes
   * with its session.
   */
  close(options: PersistentNodeWaitOptions = {}): Promise<void> {
    const o = checkOptions(options, 'close', PERSISTENT_NODE_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs) ?? DEFAULT_CLOSE_TIMEOUT_MS;
    const signal = checkSignal(o.signal);
    if (this.#closing === undefined) {
      this.#stop.abort(new ClosedError(`PersistentNode ${this.#path}: closed`));
      this.#session.off('session', this.#onSession);
      this.#wake?.();
      this.#closing = this.#finish(timeoutMs, signal);
    }
    return this.#closing;
  }

  async #finish(timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
    const link = linkSignals([signal], timeoutMs);
    // Captured now: a delete given up at the deadline goes on in the background on this session
    // only (a lost session takes an ephemeral with it).
    const sessionId = this.#session.sessionId;
    const sessionSignal = this.#session.signal;
    try {
      // A create in flight settles first (a sent write waits for its reply).
      await raceAbort(this.#loop ?? Promise.resolve(), link.signal);
      if (this.#session.closed) return; // its ephemerals went with it; nothing can be sent
      const p = this.#pending;
      this.#pending = undefined;
      if (p?.unsure && this.#actual === undefined) {
        const found = await this.#find(p, link.signal);
        if (found !== undefined) this.#actual = found;
      }
      const at = this.#actual;
      if (at !== undefined) {
        // A delete sent into a dead connection waits for its reply until the session says it is
        // lost; close() gives up at its own deadline (an ephemeral goes with its session).
        await raceAbort(this.#session.delete(at, { signal: link.signal }), link.signal).catch((e: unknown) => {
          if (!(e instanceof NoNodeError)) throw e;
        });
      }
      this.#actual = undefined;
    } catch (err) {
      // As Curator's guaranteed delete: the caller is told at its deadline, and the node (or a
      // create whose reply was lost) is still removed once the server can be reached.
      const at = this.#actual;
      const p = this.#pending;
      if (at !== undefined || p?.unsure === true) void this.#sweep(at, p, sessionId, sessionSignal);
      if (link.signal.aborted) throw this.#reason(link, timeoutMs, 'not deleted');
      throw err;
    } finally {
      link.dispose();
      this.#finished = true;
      // Our delete fired the watch (the notification comes before the delete's reply); one
      // still set (the node was not ours to delete, or the delete failed) is removed now.
      const parked = this.#parked;
      this.#parked = undefined;
      if (parked !== undefined && !watchSettled(parked.changed)) parked.ctl.abort();
    }
  }

  /**
   * Deletes the node after close gave up, retrying with backoff until it is gone, or the session
   * it was created on is (closed, or lost: an ephemeral went with it). An ephemeral is deleted
   * only while that session owns it, read after a `sync` (a session's requests apply in order,
   * so the read comes after any create of ours).
   */
  async #sweep(at: string | undefined, p: Pending | undefined, sessionId: bigint, signal: AbortSignal): Promise<void> {
    const ephemeral = this.#mode.startsWith('EPHEMERAL');
    for (let attempt = 0; !signal.aborted && !this.#session.closed && this.#session.sessionId === sessionId; attempt++) {
      try {
        const path = at ?? (p === undefined ? undefined : await this.#find(p, signal));
        if (path === undefined) return;
        await this.#session.sync(path, { signal });
        const stat = await this.#session.exists(path, { signal });
        if (stat === null || (ephemeral && stat.ephemeralOwner !== sessionId)) return;
        await this.#session.delete(path, { version: stat.version, signal });
        return;
      } catch (err) {
        if (err instanceof NoNodeError || signal.aborted) return;
        if (!(err instanceof BadVersionError)) this.emit('error', err instanceof Error ? err : new Error(String(err)));
        if (isPermissionError(err)) return; // no retry cures it (the node goes with its session, if ephemeral)
        await delay(backoffDelay(this.#backoff, Math.min(attempt, 20)), signal).catch(noop);
      }
    }
  }

  /** The error of a wait that ended by its link: a timeout, else the signal's reason. */
  #reason(link: { signal: AbortSignal; timedOut: boolean }, timeoutMs: number | undefined, what: string): Error {
    if (link.timedOut) return new OperationTimeoutError(`PersistentNode ${this.#path}: ${what} within ${timeoutMs} ms`);
    return link.signal.reason === this.#over.signal.reason ? this.#overReason() : (link.signal.reason as Error);
  }

  /** Why the node stopped on its own; a permission refusal as a fresh copy per caller. */
  #overReason(): Error {
    const r: unknown = this.#over.signal.reason;
    return isPermissionError(r) ? copyPermissionError(r, `PersistentNode ${this.#path} stopped`) : (r as Error);
  }

  #toData(data: NodeData | undefined): Buffer {
    if (data === undefined) return Buffer.alloc(0);
    return toBuffer(data, this.#session.dataLimit, this.#path) as Buffer;
  }

  /** `await using node = ...`: closes it. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
