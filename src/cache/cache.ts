/**
 * What every cache shares: its life (start, ready, close), the loop that re-reads after each
 * reconnect and new session, and the read side of its copy.
 *
 * @module
 */
import { points } from '../observability/channels.js';
import type { ZkSession } from '../client/session.js';
import type { PersistentWatch } from '../client/persistent-watch.js';
import type { ConnectionState, WatchEvent } from '../client/types.js';
import { backoffDelay, resolveBackoff, type Backoff } from '../client/retry.js';
import { checkBoolean, checkInt, checkOptions, checkSignal, checkTimeout, describe, optionKeys, validatePath } from '../client/validate.js';
import { CacheLimitError, ClosedError, ConnectionLossError, IllegalStateError, InvalidArgumentError, OperationTimeoutError, SessionExpiredError, UnimplementedError, isPermissionError } from '../errors.js';
import { delay } from '../util/abort.js';
import { onAbort, ownedController } from '../util/signals.js';
import { CacheEmitter } from './emitter.js';
import { Loader, WalkCancelled } from './loader.js';
import { Scope } from './scope.js';
import { NodeStore } from './store.js';
import type { CachedNode, CacheEvent, CacheIteratorOptions, CacheOptions, CacheState, CacheWaitOptions, CacheWatchMode } from './types.js';

/** The keys of {@link CacheOptions} (a misspelled one is refused). @internal */
export const CACHE_OPTION_KEYS = optionKeys<CacheOptions>({ cacheData: true, watchMode: true, concurrency: true, maxNodes: true, maxBytes: true, errorBackoff: true });
/** The keys of {@link CacheWaitOptions}. @internal */
export const CACHE_WAIT_OPTION_KEYS = optionKeys<CacheWaitOptions>({ timeoutMs: true, signal: true });
/** The keys of {@link CacheIteratorOptions}. @internal */
export const CACHE_ITERATOR_OPTION_KEYS = optionKeys<CacheIteratorOptions>({ bufferSize: true, snapshot: true });

const DEFAULT_BACKOFF: Backoff = { baseDelayMs: 100, maxDelayMs: 5000 };

/** What a kind of cache holds, and how it names itself in messages. @internal */
export interface CacheKind {
  /** e.g. `tree cache`. */
  readonly what: string;
  readonly maxDepth: number;
  readonly includeRoot: boolean;
}

/**
 * The base of {@link NodeCache}, {@link ChildrenCache} and {@link TreeCache}: an in-memory copy
 * of part of the tree, kept up to date by watches, re-read in full after every reconnect and
 * every new session (the server does not replay what a persistent watch missed).
 *
 * What it promises, exactly: the copy is eventually consistent with the server; intermediate
 * values may be coalesced (and are, across a disconnect); per node, events come in the server's
 * order with no duplicate, and nothing orders events of different nodes; once `resynced` (or
 * `initialized`) fires, no node deleted on the server as of that re-read is still held and none
 * present then is missing. It never creates a node.
 * @group Recipes
 */
export abstract class Cache extends CacheEmitter implements Iterable<CachedNode>, AsyncDisposable {
  /** The cache's path. */
  readonly path: string;
  readonly #session: ZkSession;
  readonly #kind: CacheKind;
  readonly #store = new NodeStore();
  readonly #scope: Scope;
  readonly #loader: Loader;
  readonly #requested: CacheWatchMode;
  readonly #maxNodes: number;
  readonly #maxBytes: number;
  readonly #backoff: Backoff;
  readonly #closer = ownedController();
  readonly #stateWaiters = new Set<() => void>();
  #state: CacheState = 'LATENT';
  #mode: 'persistent' | 'one-shot' | undefined;
  #watch: PersistentWatch | undefined;
  #initialized = false;
  /** Set by whatever calls for a full re-read (start, a reconnect, a new session); the loop takes it. */
  #dirty = false;
  #wake: (() => void) | undefined;
  #closing: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  /** Why the cache closed on its own (a limit, a lost session that is not renewed), if it did. */
  #failure: Error | undefined;
  readonly #onState = (state: ConnectionState): void => this.#sessionState(state);

  /** @internal Made by the subclasses. */
  constructor(session: ZkSession, path: string, options: CacheOptions, kind: CacheKind, extraKeys: readonly string[] = []) {
    super();
    if (session === null || typeof session !== 'object' || typeof (session as Partial<ZkSession>).addWatch !== 'function') {
      throw new InvalidArgumentError(`${kind.what}: session must be a ZkSession, got ${describe(session)}`);
    }
    validatePath(path, `${kind.what} path`);
    const o = checkOptions(options, `new ${this.constructor.name}`, [...CACHE_OPTION_KEYS, ...extraKeys]);
    const mode = o.watchMode ?? 'auto';
    if (mode !== 'auto' && mode !== 'persistent' && mode !== 'one-shot') throw new InvalidArgumentError(`watchMode must be 'auto', 'persistent' or 'one-shot', got ${describe(mode)}`);
    this.path = path;
    this.#session = session;
    this.#kind = kind;
    this.#requested = mode;
    this.#maxNodes = checkInt(o.maxNodes, 'maxNodes', 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    this.#maxBytes = checkInt(o.maxBytes, 'maxBytes', 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    this.#backoff = resolveBackoff(o.errorBackoff, 'errorBackoff', DEFAULT_BACKOFF);
    const cacheData = checkBoolean(o.cacheData, 'cacheData', true);
    const concurrency = checkInt(o.concurrency, 'concurrency', 1, 10_000, 64);
    this.#scope = new Scope(path, kind.maxDepth, kind.includeRoot);
    this.#loader = new Loader(
      session,
      this.#scope,
      this.#store,
      {
        added: (node) => this.#changedCopy({ type: 'added', node }),
        changed: (node, previous) => this.#changedCopy({ type: 'changed', node, previous }),
        removed: (node) => this.publish({ type: 'removed', node }),
        error: (error) => this.reportError(error),
      },
      { cacheData, concurrency, backoff: this.#backoff, signal: this.#closer.signal },
    );
  }

  /** Where the cache is in its life; see {@link CacheState}. */
  get state(): CacheState {
    return this.#state;
  }

  /** How it learns of changes, once started: `persistent` or `one-shot` (see {@link CacheWatchMode}). */
  get watchMode(): 'persistent' | 'one-shot' | undefined {
    return this.#mode;
  }

  /** Nodes held. */
  get size(): number {
    return this.#store.size;
  }

  /** The node held at `path`, if any. */
  get(path: string): CachedNode | undefined {
    return this.#store.get(path);
  }

  /** Names of the held children of `path` (default: the cache's path, for which it is always an array), sorted; undefined when nothing is held at or under `path`. */
  children(path: string = this.path): string[] | undefined {
    const names = this.#store.childNames(path);
    if (names.length > 0 || this.#store.has(path) || path === this.path) return names;
    return undefined;
  }

  /** The held nodes (a snapshot: later changes do not affect an iteration under way). */
  [Symbol.iterator](): Iterator<CachedNode> {
    return [...this.#store.values()][Symbol.iterator]();
  }

  /**
   * Events from now on, as an async iterator that ends when the cache closes. Each iterator has
   * its own bounded buffer: a consumer that falls behind gets one `snapshot` of the whole copy
   * in place of the events it missed, then the events after it.
   */
  events(options: CacheIteratorOptions = {}): AsyncIterableIterator<CacheEvent> {
    const o = checkOptions(options, 'events', CACHE_ITERATOR_OPTION_KEYS);
    const size = checkInt(o.bufferSize, 'bufferSize', 1, 100_000_000, 10_000);
    const startWith = checkBoolean(o.snapshot, 'snapshot', false);
    return this.stream(size, startWith, this.#state === 'CLOSED', () => [...this.#store.values()]);
  }

  /**
   * Starts the cache, and resolves once the first full read is done (`initialized`), also for an
   * absent or empty path. The cache then follows the server until `close()`, through reconnects
   * and new sessions. Throws at once `IllegalStateError` if already started, `ClosedError` after
   * `close()` or on a closed session, `InvalidArgumentError` for bad options. Rejects with
   * `OperationTimeoutError` after `timeoutMs`, with the signal's reason when it aborts, or with
   * the error that closed the cache first (e.g. `UnimplementedError` for `watchMode:
   * 'persistent'` on a server before 3.6): the cache is then closed, leaving no watch behind.
   * `signal` and `timeoutMs` bound only this wait.
   */
  start(options: CacheWaitOptions = {}): Promise<void> {
    const o = checkOptions(options, 'start', CACHE_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.#state === 'CLOSED') throw new ClosedError(`${this.#kind.what} ${this.path} is closed`, { path: this.path });
    if (this.#state !== 'LATENT') throw new IllegalStateError(`${this.#kind.what} ${this.path} was already started`, { path: this.path });
    if (this.#session.closed) throw new ClosedError(`the session of ${this.#kind.what} ${this.path} is closed`, { path: this.path });
    if (this.#requested === 'one-shot') this.#useOneShot();
    this.#setState('LOADING');
    this.#session.on('state', this.#onState);
    this.#dirty = true;
    this.#loop = this.#run();
    return this.#waitFor(() => this.#initialized, 'initialized', timeoutMs, signal).catch(async (err: unknown) => {
      await this.close();
      throw err;
    });
  }

  /**
   * Resolves once the copy follows the server (`SYNCED`): at once if it does. Rejects with
   * `OperationTimeoutError` after `timeoutMs`, the signal's reason when it aborts, `ClosedError`
   * (or the error that closed it) once closed, `IllegalStateError` before `start()`.
   */
  ready(options: CacheWaitOptions = {}): Promise<void> {
    const o = checkOptions(options, 'ready', CACHE_WAIT_OPTION_KEYS);
    const timeoutMs = checkTimeout(o.timeoutMs);
    const signal = checkSignal(o.signal);
    if (this.#state === 'LATENT') return Promise.reject(new IllegalStateError(`${this.#kind.what} ${this.path} was not started`, { path: this.path }));
    return this.#waitFor(() => this.#state === 'SYNCED', 'synced', timeoutMs, signal);
  }

  /**
   * Stops following the server and removes the cache's watches from it. The copy stays readable
   * as it was. Idempotent; iterators end, and waits reject with `ClosedError`.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  /** Same as {@link Cache.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    this.#setState('CLOSED');
    this.#closer.abort(this.#failure ?? new ClosedError(`${this.#kind.what} ${this.path} closed`, { path: this.path }));
    this.#session.off('state', this.#onState);
    this.#loader.cancelWalk();
    this.#wake?.();
    const watch = this.#watch;
    this.#watch = undefined;
    await watch?.close().catch(() => undefined);
    await this.#loop;
    this.endStreams();
  }

  /** Re-reads until closed: after start, each reconnect (persistent: each RESET) and each new session. */
  async #run(): Promise<void> {
    let attempt = 0;
    while (this.#state !== 'CLOSED') {
      try {
        if (!this.#dirty) await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
        if (this.#isClosed()) break;
        await this.#session.waitConnected({ signal: this.#closer.signal });
        if (this.#mode !== 'one-shot' && !this.#watch) await this.#addWatch();
        this.#dirty = false;
        await this.#loader.resync();
        attempt = 0;
        if (this.#dirty) continue;
        const first = !this.#initialized;
        this.#initialized = true;
        this.#setState('SYNCED');
        this.publish({ type: first ? 'initialized' : 'resynced' });
      } catch (err) {
        if (this.#isClosed()) break;
        if (err instanceof WalkCancelled) continue;
        // Nothing a retry could change: a bad path for the server, a closed session, no permission.
        if (err instanceof ClosedError || err instanceof InvalidArgumentError || isPermissionError(err) || (err instanceof SessionExpiredError && !this.#session.renewsOnLoss && this.#session.state === 'LOST')) {
          this.#fail(err);
          break;
        }
        // Connection trouble is the reconnect's to cure; anything else is worth telling.
        if (!(err instanceof ConnectionLossError)) this.reportError(err instanceof Error ? err : new Error(String(err)));
        this.#dirty = true;
        try {
          await delay(backoffDelay(this.#backoff, attempt++), this.#closer.signal);
        } catch {
          break;
        }
      }
    }
  }

  /** Sets the one persistent watch (or, `auto` on a server without them, turns to one-shot watches). */
  async #addWatch(): Promise<void> {
    try {
      const watch = await this.#session.addWatch(this.path, { recursive: this.#kind.maxDepth > 0, signal: this.#closer.signal });
      if (this.#state === 'CLOSED') return void (await watch.close());
      this.#watch = watch;
      this.#mode = 'persistent';
      watch.on('event', (event) => this.#event(event));
      watch.on('reset', () => this.#resyncNeeded());
      watch.on('end', (reason) => {
        if (this.#watch !== watch) return;
        this.#watch = undefined;
        if (!(reason instanceof ClosedError)) this.#resyncNeeded();
      });
    } catch (err) {
      if (!(err instanceof UnimplementedError)) throw err;
      if (this.#requested === 'persistent') {
        this.#fail(err);
        throw err;
      }
      this.#useOneShot();
    }
  }

  #useOneShot(): void {
    this.#mode = 'one-shot';
    this.#loader.oneShot = true;
  }

  /** A persistent watch's event: the node is read again (events say what, not to what). */
  #event(event: WatchEvent): void {
    if (this.#scope.depth(event.path) < 0) return this.reportError(new Error(`${this.#kind.what} ${this.path}: a watch event for ${event.path}, outside the cache's path (ignored)`));
    if (event.type !== 'NODE_CHILDREN_CHANGED' && this.#scope.holds(event.path)) this.#loader.refresh(event.path);
  }

  #sessionState(state: ConnectionState): void {
    if (this.#state === 'CLOSED') return;
    if (state === 'SUSPENDED' || state === 'LOST') {
      this.#loader.cancelWalk();
      if (this.#state === 'SYNCED') {
        this.#setState('STALE');
        this.publish({ type: 'stale' });
      }
      if (state === 'LOST') {
        this.#loader.watchesLost();
        this.publish({ type: 'sessionLost', error: new SessionExpiredError('SESSION_EXPIRED', `the session of ${this.#kind.what} ${this.path} was lost`, { path: this.path, zkCode: -112 }) });
        this.#resyncNeeded();
      }
    } else if (state === 'CLOSED') {
      this.#fail(new ClosedError(`the session of ${this.#kind.what} ${this.path} closed`, { path: this.path }));
    } else if ((state === 'RECONNECTED' || state === 'CONNECTED') && this.#mode === 'one-shot') {
      this.#resyncNeeded();
    }
  }

  #resyncNeeded(): void {
    this.#loader.cancelWalk();
    this.#dirty = true;
    this.#wake?.();
  }

  /** An added or changed node: published, then checked against the bounds. */
  #changedCopy(event: CacheEvent): void {
    this.publish(event);
    if (this.#store.size > this.#maxNodes) this.#fail(new CacheLimitError(`${this.#kind.what} ${this.path} holds ${this.#store.size} nodes, over its maxNodes of ${this.#maxNodes}; it closed`, { path: this.path }));
    else if (this.#store.bytes > this.#maxBytes) this.#fail(new CacheLimitError(`${this.#kind.what} ${this.path} holds ${this.#store.bytes} bytes, over its maxBytes of ${this.#maxBytes}; it closed`, { path: this.path }));
  }

  /** Closes the cache on its own: the error is emitted, and waits reject with it. */
  #fail(error: Error): void {
    if (this.#state === 'CLOSED') return;
    this.#failure = error;
    this.reportError(error);
    void this.close();
  }

  /** Read through a call: TypeScript would narrow the field across awaits. */
  #isClosed(): boolean {
    return this.#state === 'CLOSED';
  }

  #setState(state: CacheState): void {
    if (this.#state === state) return;
    const previous = this.#state;
    this.#state = state;
    if (points.cacheState.hasSubscribers) points.cacheState.publish({ cache: this.#kind.what === 'node cache' ? 'node' : this.#kind.what === 'tree cache' ? 'tree' : 'children', path: this.path, state, previous });
    for (const w of [...this.#stateWaiters]) w();
  }

  /** Waits until `reached()`, the cache closes, `timeoutMs` passes or `signal` aborts. */
  #waitFor(reached: () => boolean, what: string, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let unsubscribe = (): void => undefined;
      const finish = (err?: unknown): void => {
        this.#stateWaiters.delete(check);
        clearTimeout(timer);
        unsubscribe();
        if (err === undefined) resolve();
        else reject(err);
      };
      const check = (): void => {
        if (reached()) finish();
        else if (this.#state === 'CLOSED') finish(this.#failure ?? new ClosedError(`${this.#kind.what} ${this.path} closed`, { path: this.path }));
      };
      if (signal?.aborted) return reject(signal.reason);
      if (reached()) return resolve();
      if (this.#state === 'CLOSED') return check();
      this.#stateWaiters.add(check);
      if (timeoutMs !== undefined) timer = setTimeout(() => finish(new OperationTimeoutError(`${this.#kind.what} ${this.path} was not ${what} within ${timeoutMs} ms`, { path: this.path })), timeoutMs);
      if (signal) unsubscribe = onAbort(signal, (reason) => finish(reason));
    });
  }
}
