/**
 * {@link ServiceCache}: a live copy of one service's instances (Curator's `ServiceCache`).
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import { ChildrenCache } from '../cache/children-cache.js';
import type { CachedNode, CacheWaitOptions, CacheWatchMode } from '../cache/types.js';
import { checkInt, checkOptions, joinPath, optionKeys } from '../client/validate.js';
import { InvalidInstanceError } from '../errors.js';
import { BoundedStream, dropOldest } from '../util/bounded-stream.js';
import { callListeners } from '../util/listeners.js';
import { decodeInstance } from './codec.js';
import { checkNodeName, type ServiceInstance } from './instance.js';
import type { ServiceDiscovery } from './service-discovery.js';

/** Options of a {@link ServiceCache}. @group Discovery */
export interface ServiceCacheOptions {
  /** How the cache learns of changes; see `CacheWatchMode` (default `auto`: one persistent watch). */
  watchMode?: CacheWatchMode;
}

/** Options of {@link ServiceCache.changes}. @group Discovery */
export interface ServiceCacheChangesOptions {
  /** Lists kept for a slow consumer (default 100); when full, the oldest is dropped (the newest is the whole truth). */
  bufferSize?: number;
}

/** Events of a {@link ServiceCache}. @group Discovery */
export interface ServiceCacheEvents<P> {
  /** The instances changed (one appeared, changed or went); the whole list as it is now. Not emitted during the first load. */
  changed: (instances: readonly ServiceInstance<P>[]) => void;
  /** An instance node holds no instance (someone wrote a broken body): skipped until it is fixed. */
  invalid: (error: InvalidInstanceError) => void;
  /** A read failed (retried with backoff), or a listener threw. */
  error: (error: Error) => void;
  /** Closed (by {@link ServiceCache.close}, or with its discovery). */
  closed: () => void;
}

/** The keys of {@link ServiceCacheOptions}. @internal */
export const SERVICE_CACHE_OPTION_KEYS = optionKeys<ServiceCacheOptions>({ watchMode: true });
/** The keys of {@link ServiceCacheChangesOptions}. @internal */
export const SERVICE_CACHE_CHANGES_OPTION_KEYS = optionKeys<ServiceCacheChangesOptions>({ bufferSize: true });

/**
 * The instances of one service, kept up to date by a {@link ChildrenCache} of
 * `<basePath>/<name>` (one persistent watch): {@link instances} is a read of memory, not of the
 * server. Instances are in node-name order; an unreadable node is left out and reported
 * (`invalid`), and comes in once it is fixed. Made by {@link ServiceDiscovery.serviceCache}.
 * @group Discovery
 */
export class ServiceCache<P = unknown> extends EventEmitter<ServiceCacheEvents<P>> implements AsyncDisposable {
  /** The service's name. */
  readonly name: string;
  readonly #discovery: ServiceDiscovery<P>;
  readonly #cache: ChildrenCache;
  readonly #byNode = new Map<string, ServiceInstance<P>>();
  readonly #streams = new Set<(list: readonly ServiceInstance<P>[] | undefined) => void>();
  #list: readonly ServiceInstance<P>[] = Object.freeze([]);
  #loaded = false;
  #closing: Promise<void> | undefined;

  /** @internal Made by {@link ServiceDiscovery.serviceCache}. */
  constructor(discovery: ServiceDiscovery<P>, name: string, options: ServiceCacheOptions = {}) {
    super();
    const o = checkOptions(options, 'serviceCache', SERVICE_CACHE_OPTION_KEYS);
    checkNodeName(name, 'service name');
    this.name = name;
    this.#discovery = discovery;
    this.#cache = new ChildrenCache(discovery.session, joinPath(discovery.basePath, name), { ...(o.watchMode === undefined ? {} : { watchMode: o.watchMode }) });
    this.#cache.on('added', (n) => this.#put(n));
    this.#cache.on('changed', (n) => this.#put(n));
    this.#cache.on('removed', (n) => this.#drop(n));
    this.#cache.on('initialized', () => {
      this.#loaded = true;
      this.#rebuild(false);
    });
    this.#cache.on('error', (e) => this.#emit('error', e));
  }

  /** Loads the instances; resolves once the first full read is in. See `Cache.start` for the errors. */
  async start(options: CacheWaitOptions = {}): Promise<void> {
    await this.#cache.start(options);
  }

  /** Whether the copy follows the server now (false before the first load, while disconnected, during a re-read). */
  get synced(): boolean {
    return this.#cache.state === 'SYNCED';
  }

  /** The instances as now known (a frozen array, replaced on each change). */
  get instances(): readonly ServiceInstance<P>[] {
    return this.#list;
  }

  /**
   * The instance lists from now on, as an async iterator: the current list first (once loaded),
   * then each new one. It ends when the cache closes.
   */
  changes(options: ServiceCacheChangesOptions = {}): AsyncIterableIterator<readonly ServiceInstance<P>[]> {
    const o = checkOptions(options, 'ServiceCache.changes', SERVICE_CACHE_CHANGES_OPTION_KEYS);
    const size = checkInt(o.bufferSize, 'bufferSize', 1, 1_000_000, 100);
    const stream = new BoundedStream<readonly ServiceInstance<P>[]>(size, dropOldest, {
      initial: this.#loaded ? [this.#list] : [],
      onEnd: () => this.#streams.delete(push),
    });
    const push = (list: readonly ServiceInstance<P>[] | undefined): void => (list === undefined ? stream.end() : stream.push(list));
    if (this.#closing !== undefined) stream.end();
    else this.#streams.add(push);
    return stream.iterator();
  }

  #put(node: CachedNode): void {
    try {
      this.#byNode.set(node.path, decodeInstance(node.data ?? Buffer.alloc(0), node.path, this.#discovery.codec));
    } catch (err) {
      const had = this.#byNode.delete(node.path);
      this.#emit('invalid', err instanceof InvalidInstanceError ? err : new InvalidInstanceError(String(err), { path: node.path, cause: err }));
      if (!had) return;
    }
    this.#rebuild(true);
  }

  #drop(node: CachedNode): void {
    if (this.#byNode.delete(node.path)) this.#rebuild(true);
  }

  #rebuild(announce: boolean): void {
    this.#list = Object.freeze([...this.#byNode.keys()].sort().map((k) => this.#byNode.get(k) as ServiceInstance<P>));
    if (!this.#loaded) return;
    for (const push of this.#streams) push(this.#list);
    if (announce) this.#emit('changed', this.#list);
  }

  /** Stops following the server (its watch removed); the list stays as it was. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#cache.close();
      this.#cache.removeAllListeners();
      for (const push of [...this.#streams]) push(undefined);
      this.#streams.clear();
      this.#emit('closed');
    })();
    return this.#closing;
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #emit<E extends keyof ServiceCacheEvents<P>>(event: E, ...args: Parameters<ServiceCacheEvents<P>[E]>): void {
    callListeners(this, event, args);
  }
}
