/**
 * {@link GroupMember}: group membership (Curator's `GroupMember`).
 *
 * @module
 */
import { BoundedStream, dropOldest } from '../util/bounded-stream.js';
import { EventEmitter } from 'eventemitter3';
import type { ZkSession } from '../client/session.js';
import type { Acl, NodeData } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { checkInt, checkOptions, checkSignal, checkTimeout, describe, joinPath, optionKeys, toBuffer, validatePath } from '../client/validate.js';
import { ChildrenCache } from '../cache/children-cache.js';
import type { CachedNode } from '../cache/types.js';
import { BadVersionError, ClosedError, IllegalStateError, InvalidArgumentError, isPermissionError, NoNodeError, OperationTimeoutError } from '../errors.js';
import { backoffDelay, type Backoff } from '../client/retry.js';
import { delay } from '../util/abort.js';
import { PersistentNode } from '../nodes/persistent-node.js';
import { callListeners } from '../util/listeners.js';
import { linkSignals, ownedController } from '../util/signals.js';

/** Options of {@link GroupMember.start}. @group Recipes */
export interface GroupStartOptions {
  /** Gives up after this many ms (`OperationTimeoutError`); the member is then closed, nothing left in ZooKeeper. */
  timeoutMs?: number;
  /** Gives up when it aborts (its reason); the member is then closed, nothing left in ZooKeeper. */
  signal?: AbortSignal;
}

/** Options of {@link GroupMember.views}. @group Recipes */
export interface GroupViewsOptions {
  /**
   * Views kept for a slow consumer (default 100, at least 1). Each view is the whole group, so
   * when the buffer is full the oldest is dropped: the consumer still gets the latest.
   */
  bufferSize?: number;
}

/** The keys of {@link GroupStartOptions}. @internal */
export const GROUP_START_OPTION_KEYS = optionKeys<GroupStartOptions>({ timeoutMs: true, signal: true });
/** The keys of {@link GroupViewsOptions}. @internal */
export const GROUP_VIEWS_OPTION_KEYS = optionKeys<GroupViewsOptions>({ bufferSize: true });

/** Options of a {@link GroupMember}. @group Recipes */
export interface GroupMemberOptions {
  /**
   * ACL of our member node and of the group's directories it creates; default: the session's
   * `aclProvider` (the open ACL without one). See [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** The keys of {@link GroupMemberOptions}. @internal */
export const GROUP_MEMBER_OPTION_KEYS = optionKeys<GroupMemberOptions>({ acl: true });

/** Backoff of the delete retried by `close()` when the first one failed. */
const SWEEP_BACKOFF: Backoff = { baseDelayMs: 100, maxDelayMs: 5000 };

/** A view of the group: member id to payload. @group Recipes */
export type GroupView = ReadonlyMap<string, Buffer>;

/** Where a {@link GroupMember} is in its life. @group Recipes */
export type GroupMemberState = 'LATENT' | 'STARTING' | 'STARTED' | 'CLOSED';

/**
 * Typed events of a {@link GroupMember}. `joined`, `left` and `changed` describe the difference
 * between two successive views (so a member deleted and re-created between two reads may show
 * as `changed`, or not at all); `members` carries each new view after them.
 * @group Recipes
 */
export interface GroupMemberEvents {
  /** A member appeared in the view (during the first load too, ourselves included). */
  joined: (id: string, payload: Buffer) => void;
  /** A member left the view: its node was deleted (it closed, its session ended, someone deleted it). */
  left: (id: string, payload: Buffer) => void;
  /** A member's payload changed. */
  changed: (id: string, payload: Buffer, previous: Buffer) => void;
  /** The view changed; the whole new view. */
  members: (view: GroupView) => void;
  /** Disconnected: the view may fall behind until `synced`. */
  stale: () => void;
  /** The view follows the server again (after the first load, a reconnect or a new session). */
  synced: () => void;
  /** Something failed and is retried (a create, a read), or a listener threw. */
  error: (error: Error) => void;
}

/**
 * One member of a group, in Curator's `GroupMember` layout: while started, our member is the
 * EPHEMERAL node `<membershipPath>/<memberId>` holding our payload, kept by a
 * {@link PersistentNode} (re-created after our session is lost or someone deletes it, with the
 * latest payload), and the group is read from a {@link ChildrenCache} of `membershipPath`
 * (one persistent watch). Java (Curator) and Node members mix freely on one path.
 *
 * - **The view** ({@link currentMembers}) maps each member id to its payload, as the cache last
 *   read it. As Curator's, it always holds ourselves (with our latest payload when our node is
 *   not in the copy, e.g. re-created after a lost session).
 * - **A member whose session ends leaves** every other view once the server expires the
 *   session (after its session timeout: a partitioned member stays in the others' views until
 *   then), and joins again when its next session re-creates its node.
 * - **While disconnected** the view is stale (`stale`; {@link synced} is false) and kept as it
 *   was; after a reconnect or a new session it is re-read in full before `synced`.
 * - **Member ids must be unique** in the group: two members with one id share (and fight over)
 *   one node.
 * - `close()` deletes our node and closes the cache: nothing is left behind.
 *
 * Guide: [Group membership](../../docs/recipes/group.md).
 *
 * @example
 * ```ts
 * import { GroupMember } from 'zk-recipes';
 *
 * await using member = new GroupMember(session, '/services/api', 'host-1', 'http://10.0.0.1:8080');
 * member.on('joined', (id, payload) => console.log(`${id} joined at ${payload.toString()}`));
 * member.on('left', (id) => console.log(`${id} left`));
 * await member.start({ timeoutMs: 10_000 });
 * console.log([...member.currentMembers().keys()]);
 * ```
 * @group Recipes
 */
export class GroupMember extends EventEmitter<GroupMemberEvents> implements AsyncDisposable {
  /** The group's path: members are its children. */
  readonly membershipPath: string;
  /** Our member id: the name of our node. */
  readonly memberId: string;
  readonly #session: ZkSession;
  readonly #node: PersistentNode;
  readonly #cache: ChildrenCache;
  readonly #closer = ownedController();
  readonly #streams = new Set<(view: GroupView | undefined) => void>();
  #state: GroupMemberState = 'LATENT';
  #payload: Buffer;
  #view: GroupView = new Map();
  #scheduled = false;
  #closing: Promise<void> | undefined;

  /**
   * A member `memberId` of the group at `membershipPath` with `payload` (default empty; Curator's
   * default is the host's address). Nothing is sent before {@link start}. Throws
   * `InvalidArgumentError` for an invalid path (or the root), an id that is empty, contains `/`
   * or is not a valid node name, a payload over the session's data limit, or bad `options`.
   */
  constructor(session: ZkSession, membershipPath: string, memberId: string, payload?: NodeData, options: GroupMemberOptions = {}) {
    super();
    if (session === null || typeof session !== 'object' || typeof (session as Partial<ZkSession>).addWatch !== 'function') {
      throw new InvalidArgumentError(`GroupMember: session must be a ZkSession, got ${describe(session)}`);
    }
    validatePath(membershipPath, 'group membership path');
    if (membershipPath === '/') throw new InvalidArgumentError('GroupMember: the membership path cannot be the root "/"', { path: membershipPath });
    if (typeof memberId !== 'string' || memberId === '' || memberId.includes('/')) {
      throw new InvalidArgumentError(`GroupMember: memberId must be a non-empty string without "/", got ${describe(memberId)}`, { path: membershipPath });
    }
    const o = checkOptions(options, 'new GroupMember', GROUP_MEMBER_OPTION_KEYS);
    const ours = joinPath(membershipPath, memberId);
    validatePath(ours, 'group member path');
    this.membershipPath = membershipPath;
    this.memberId = memberId;
    this.#session = session;
    this.#payload = toBuffer(payload, session.dataLimit, ours) ?? Buffer.alloc(0);
    this.#node = new PersistentNode(session, ours, { mode: 'EPHEMERAL', data: this.#payload, acl: optionalAcl(o.acl, 'GroupMember') });
    this.#cache = new ChildrenCache(session, membershipPath);
  }

  /** Where the member is: `LATENT` (made), `STARTING`, `STARTED` or `CLOSED`. */
  get state(): GroupMemberState {
    return this.#state;
  }

  /** Whether the view follows the server now (false before the first load, while disconnected, and during a re-read). */
  get synced(): boolean {
    return this.#cache.state === 'SYNCED';
  }

  /** Our payload as last given (to the constructor or {@link setThisData}). */
  get payload(): Buffer {
    return this.#payload;
  }

  /**
   * Joins the group and loads the view: resolves once our node exists and the view holds it as
   * read from the server. Rejects at once with `ClosedError` after `close()` (or on a closed
   * session), `IllegalStateError` if already started, `InvalidArgumentError` for bad options; with
   * `OperationTimeoutError` after `timeoutMs`, the signal's reason when it aborts, or the error
   * that stopped the cache: the member is then closed, its node deleted and its watch removed.
   */
  async start(options: GroupStartOptions = {}): Promise<void> {
    const o = checkOptions(options, 'GroupMember.start', GROUP_START_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.#state === 'CLOSED') throw new ClosedError(`group member ${this.memberId} of ${this.membershipPath} is closed`, { path: this.membershipPath });
    if (this.#state !== 'LATENT') throw new IllegalStateError(`group member ${this.memberId} of ${this.membershipPath} was already started`, { path: this.membershipPath });
    if (this.#session.closed) throw new ClosedError(`the session of group member ${this.memberId} of ${this.membershipPath} is closed`, { path: this.membershipPath });
    this.#state = 'STARTING';
    this.#listen();
    const link = linkSignals([signal, this.#closer.signal], timeoutMs);
    try {
      this.#node.start();
      const loaded = this.#cache.start({ signal: link.signal });
      const created = this.#node.waitForInitialCreate({ signal: link.signal });
      await Promise.all([loaded, created]);
      // The first read may have come before our create: wait for the watch to bring our node in.
      await this.#untilHeld(link.signal);
      if (this.#isClosed()) throw new ClosedError(`group member ${this.memberId} of ${this.membershipPath} closed while starting`, { path: this.membershipPath });
      this.#state = 'STARTED';
      this.#publish();
    } catch (err) {
      const reason = link.timedOut
        ? new OperationTimeoutError(`group member ${this.memberId} of ${this.membershipPath} did not start within ${timeoutMs} ms`, { path: this.membershipPath })
        : link.signal.aborted
          ? link.signal.reason
          : err;
      // The caller's deadline is over: the member closes (its node deleted, its watch removed)
      // in the background; a later close() waits for it.
      this.close().catch((e: unknown) => this.#emit('error', e instanceof Error ? e : new Error(String(e))));
      throw reason;
    } finally {
      link.dispose();
    }
  }

  /**
   * Sets our payload: written to our node now if it exists, and used by every re-create. Throws
   * `InvalidArgumentError` for data that is not a Buffer, Uint8Array or string or is over the
   * session's data limit, `ClosedError` after `close()`. Before {@link start} it only replaces
   * the payload the node will be created with. `options` bound the write (`OperationTimeoutError`,
   * or the signal's reason); the payload is kept for every re-create either way.
   */
  async setThisData(data: NodeData, options: GroupStartOptions = {}): Promise<void> {
    const o = checkOptions(options, 'GroupMember.setThisData', GROUP_START_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.#isClosed()) throw new ClosedError(`group member ${this.memberId} of ${this.membershipPath} is closed`, { path: this.membershipPath });
    if (data === undefined || data === null) throw new InvalidArgumentError(`GroupMember.setThisData: data must be a Buffer, Uint8Array or string, got ${describe(data)}`, { path: this.membershipPath });
    const buf = toBuffer(data, this.#session.dataLimit, joinPath(this.membershipPath, this.memberId)) as Buffer;
    this.#payload = Buffer.from(buf);
    this.#schedule();
    await this.#node.setData(this.#payload, { ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(signal === undefined ? {} : { signal }) });
  }

  /**
   * The view: each member's id and payload, as last read (a snapshot; empty before
   * {@link start}). Always holds ourselves while started, as Curator's `getCurrentMembers`.
   * After `close()`, the last view.
   */
  currentMembers(): GroupView {
    return this.#view;
  }

  /**
   * The views from now on, as an async iterator: the current view first (once started), then
   * each new one. It ends when the member closes. Its buffer is bounded
   * ({@link GroupViewsOptions.bufferSize}): a consumer that falls behind skips to newer views.
   */
  views(options: GroupViewsOptions = {}): AsyncIterableIterator<GroupView> {
    const o = checkOptions(options, 'GroupMember.views', GROUP_VIEWS_OPTION_KEYS);
    const size = checkInt(o.bufferSize, 'bufferSize', 1, 1_000_000, 100);
    const stream = new BoundedStream<GroupView>(size, dropOldest, {
      initial: this.#state === 'STARTED' ? [this.#view] : [],
      onEnd: () => this.#streams.delete(push),
    });
    const push = (view: GroupView | undefined): void => (view === undefined ? stream.end() : stream.push(view));
    if (this.#state === 'CLOSED') stream.end();
    else this.#streams.add(push);
    return stream.iterator();
  }

  /**
   * Leaves the group: closes the cache (its watch removed) and deletes our node. When the delete
   * cannot reach the server (a partition), it is retried with backoff until it succeeds or our
   * session ends (taking the node with it), so `close()` may take up to the session timeout and
   * a reconnect; once it resolves, no view will show us again. Iterators end. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    const started = this.#state !== 'LATENT';
    const hadNode = this.#node.actualPath !== undefined;
    // Captured now: the sweep below is for this session only (a lost one takes our node with it).
    const sessionSignal = this.#session.signal;
    const sessionId = this.#session.sessionId;
    this.#state = 'CLOSED';
    this.#closer.abort(new ClosedError(`group member ${this.memberId} of ${this.membershipPath} closed`, { path: this.membershipPath }));
    const [cacheClosed, nodeClosed] = await Promise.allSettled([this.#cache.close(), this.#node.close()]);
    // The node's delete failed (a partition), or a create may have been under way: make sure.
    if (nodeClosed.status === 'rejected') {
      const why = nodeClosed.reason instanceof Error ? nodeClosed.reason.message : String(nodeClosed.reason);
      this.#emit('error', new IllegalStateError(`group member ${this.memberId} of ${this.membershipPath}: the delete of our node failed (${why}); retried until it is gone or the session ends`, { path: this.membershipPath, cause: nodeClosed.reason }));
    }
    if (started && (nodeClosed.status === 'rejected' || !hadNode)) await this.#sweep(sessionId, sessionSignal);
    this.#cache.removeAllListeners();
    this.#node.removeAllListeners();
    for (const push of [...this.#streams]) push(undefined);
    this.#streams.clear();
    if (cacheClosed.status === 'rejected') this.#emit('error', cacheClosed.reason instanceof Error ? cacheClosed.reason : new Error(String(cacheClosed.reason)));
  }

  /**
   * Deletes our node if our session still owns it, retrying with backoff until it is gone or
   * the session is (its ephemerals go with it). Sound after a lost reply or a create held in a
   * partition: a session's requests are applied in order, so the read comes after the create.
   */
  async #sweep(sessionId: bigint, signal: AbortSignal): Promise<void> {
    const ours = joinPath(this.membershipPath, this.memberId);
    for (let attempt = 0; !signal.aborted && !this.#session.closed && sessionId !== 0n; attempt++) {
      try {
        await this.#session.sync(ours, { signal });
        const stat = await this.#session.exists(ours, { signal });
        if (stat === null || stat.ephemeralOwner !== sessionId) return;
        await this.#session.delete(ours, { version: stat.version, signal });
        return;
      } catch (err) {
        if (err instanceof NoNodeError) return;
        if (!(err instanceof BadVersionError)) this.#emit('error', err instanceof Error ? err : new Error(String(err)));
        // Not ours to delete any more: it goes with its session, no retry can do better.
        if (isPermissionError(err)) return;
        await delay(backoffDelay(SWEEP_BACKOFF, attempt), signal).catch(() => undefined);
      }
    }
  }

  #listen(): void {
    const changed = (): void => this.#schedule();
    this.#cache.on('added', changed);
    this.#cache.on('removed', changed);
    this.#cache.on('changed', changed);
    this.#cache.on('stale', () => this.#emit('stale'));
    this.#cache.on('resynced', () => {
      // The view first, so that a `synced` listener reads the re-read view.
      if (this.#state === 'STARTED') this.#publish();
      this.#emit('synced');
    });
    this.#cache.on('initialized', () => this.#emit('synced'));
    this.#cache.on('error', (error) => {
      this.#emit('error', error);
      // A cache that closed by itself (a session closed, a limit) reports first, then closes:
      // the member cannot go on without it.
      queueMicrotask(() => {
        if (this.#cache.state === 'CLOSED' && !this.#isClosed()) void this.close();
      });
    });
    this.#node.on('error', (error) => this.#emit('error', error));
  }

  /** Recomputes the view once per burst of cache events (a re-read changes many nodes at once). */
  #schedule(): void {
    if (this.#scheduled || this.#state !== 'STARTED') return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      if (this.#state === 'STARTED') this.#publish();
    });
  }

  /** Computes the view from the cache, emits the differences, then the view. */
  #publish(): void {
    const next = new Map<string, Buffer>();
    for (const node of this.#cache) {
      const id = this.#idOf(node);
      if (id !== undefined) next.set(id, node.data ?? Buffer.alloc(0));
    }
    if (!next.has(this.memberId)) next.set(this.memberId, this.#payload);
    const previous = this.#view;
    const events: (() => void)[] = [];
    for (const [id, payload] of previous) if (!next.has(id)) events.push(() => this.#emit('left', id, payload));
    for (const [id, payload] of next) {
      const before = previous.get(id);
      if (before === undefined) events.push(() => this.#emit('joined', id, payload));
      else if (!before.equals(payload)) events.push(() => this.#emit('changed', id, payload, before));
    }
    // No difference (the first view always differs: it holds ourselves).
    if (events.length === 0) return;
    this.#view = next;
    for (const e of events) e();
    for (const push of [...this.#streams]) push(next);
    this.#emit('members', next);
  }

  #idOf(node: CachedNode): string | undefined {
    const prefix = this.membershipPath + '/';
    return node.path.startsWith(prefix) ? node.path.slice(prefix.length) : undefined;
  }

  /** Resolves once the cache holds our node (its watch brought it), or rejects as `signal` aborts. */
  #untilHeld(signal: AbortSignal): Promise<void> {
    const ours = joinPath(this.membershipPath, this.memberId);
    if (this.#cache.get(ours) !== undefined) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = (err?: unknown): void => {
        this.#cache.off('added', onAdded);
        signal.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      const onAdded = (node: CachedNode): void => {
        if (node.path === ours) done();
      };
      const onAbort = (): void => done(signal.reason);
      if (signal.aborted) return reject(signal.reason);
      this.#cache.on('added', onAdded);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #emit<E extends keyof GroupMemberEvents>(event: E, ...args: Parameters<GroupMemberEvents[E]>): void {
    callListeners(this, event, args);
  }

  /** Read through a call: TypeScript would narrow the field across awaits. */
  #isClosed(): boolean {
    return this.#state === 'CLOSED';
  }
}
