/**
 * {@link ServiceDiscovery}: curator-x-discovery's registry, on the same nodes and JSON.
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import type { ZkSession } from '../client/session.js';
import { withinDeadline } from '../client/bounded.js';
import type { Acl } from '../client/types.js';
import { optionalAcl } from '../client/acl.js';
import { checkBoolean, checkOptions, checkSignal, checkTimeout, describe, joinPath, optionKeys, validatePath } from '../client/validate.js';
import { ClosedError, IllegalStateError, InvalidArgumentError, InvalidInstanceError, NoNodeError, NotRegisteredError } from '../errors.js';
import { PersistentNode, type PersistentNodeMode } from '../nodes/persistent-node.js';
import { callListeners } from '../util/listeners.js';
import { decodeInstance, encodeInstance, jsonPayload, type PayloadCodec } from './codec.js';
import { checkNodeName, serviceInstance, type ServiceInstance, type ServiceInstanceInit } from './instance.js';
import { SERVICE_CACHE_OPTION_KEYS, ServiceCache, type ServiceCacheOptions } from './service-cache.js';
import { providerSettings, ServiceProvider, type ServiceProviderOptions } from './service-provider.js';
import { ownedController } from '../util/signals.js';

/** Options of a {@link ServiceDiscovery}. @group Discovery */
export interface ServiceDiscoveryOptions<P> {
  /** Where the services are: each is a child, each instance a grandchild (Curator's `basePath`). */
  basePath: string;
  /** How payloads are written and read; default {@link jsonPayload}. */
  codec?: PayloadCodec<P>;
  /**
   * ACL of the base path and service directories it creates, and of every instance node it
   * registers; default: the session's `aclProvider` (the open ACL without one). See
   * [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** Options of every call that waits on the server. @group Discovery */
export interface DiscoveryCallOptions {
  /** Gives up after this many ms with `OperationTimeoutError` (what was created is removed). */
  timeoutMs?: number;
  /** Gives up when it aborts, with its reason. */
  signal?: AbortSignal;
}

/** Options of the queries. @group Discovery */
export interface DiscoveryQueryOptions extends DiscoveryCallOptions {
  /**
   * `sync` first, so that the answer is at least as new as every write the ensemble's leader
   * had applied when the query began (one more round trip). Default false: the connected member
   * answers from its own copy, which may lag by a few writes (as Curator's queries do).
   */
  sync?: boolean;
}

/** Events of a {@link ServiceDiscovery}. @group Discovery */
export interface ServiceDiscoveryEvents {
  /** A query met an instance node whose data is not an instance: it was skipped. */
  invalid: (error: InvalidInstanceError) => void;
  /** Keeping a registration failed for a moment (it is retried with backoff), or a listener threw. */
  error: (error: Error) => void;
}

/** The keys of {@link ServiceDiscoveryOptions}. @internal */
export const SERVICE_DISCOVERY_OPTION_KEYS = optionKeys<ServiceDiscoveryOptions<unknown>>({ basePath: true, codec: true, acl: true });
/** The keys of {@link DiscoveryCallOptions}. @internal */
export const DISCOVERY_CALL_OPTION_KEYS = optionKeys<DiscoveryCallOptions>({ timeoutMs: true, signal: true });
/** The keys of {@link DiscoveryQueryOptions}. @internal */
export const DISCOVERY_QUERY_OPTION_KEYS = optionKeys<DiscoveryQueryOptions, DiscoveryCallOptions>({ sync: true }, DISCOVERY_CALL_OPTION_KEYS);

const MODE: Readonly<Record<ServiceInstance['serviceType'], PersistentNodeMode>> = {
  DYNAMIC: 'EPHEMERAL',
  DYNAMIC_SEQUENTIAL: 'EPHEMERAL_SEQUENTIAL',
  STATIC: 'PERSISTENT',
  PERMANENT: 'PERSISTENT',
};

/** One registration: the instance as last given, and the node that keeps it there. */
interface Registration<P> {
  instance: ServiceInstance<P>;
  readonly node: PersistentNode;
}

/**
 * Service discovery compatible with Apache Curator's `ServiceDiscovery` (curator-x-discovery):
 * instances live at `<basePath>/<name>/<id>` as the JSON Curator writes and reads, so Java
 * services and Node services find each other.
 *
 * - {@link register} keeps an instance's node as a {@link PersistentNode} does: re-created with
 *   its latest data after a deletion or a lost session (when the session renews), until
 *   {@link unregister} or {@link close}. A `DYNAMIC` instance (the default) is ephemeral.
 * - The queries read the server each time; {@link serviceCache} and {@link serviceProvider}
 *   keep a live copy of one service instead (a persistent watch, no read per lookup).
 * - An instance node that someone else wrote with a broken body is skipped and reported
 *   (`invalid`), never thrown at a whole query.
 *
 * Unlike Curator, a service's node is created as a container (the server removes it once its
 * last instance went), and `update` or `unregister` of an instance this discovery did not
 * register throws {@link NotRegisteredError} (Curator ignores the unregister).
 *
 * ```ts
 * const discovery = new ServiceDiscovery(session, { basePath: '/services' });
 * await discovery.start();
 * await discovery.register(serviceInstance({ name: 'api', address: '10.0.0.5', port: 8080 }));
 * ```
 * @group Discovery
 */
export class ServiceDiscovery<P = unknown> extends EventEmitter<ServiceDiscoveryEvents> implements AsyncDisposable {
  /** The base path. */
  readonly basePath: string;
  /** The payload codec. @internal */
  readonly codec: PayloadCodec<P>;
  /** @internal */
  readonly session: ZkSession;
  readonly #registrations = new Map<string, Registration<P>>();
  readonly #owned = new Set<ServiceCache<P> | ServiceProvider<P>>();
  readonly #closer = ownedController();
  /** Nodes of failed registrations being removed. */
  readonly #cleanups = new Set<Promise<void>>();
  readonly #acl: readonly Acl[] | undefined;
  #started = false;
  #closing: Promise<void> | undefined;

  /** A discovery on `options.basePath`; nothing is sent before {@link start}. */
  constructor(session: ZkSession, options: ServiceDiscoveryOptions<P>) {
    super();
    if (session === null || typeof session !== 'object' || typeof (session as Partial<ZkSession>).create !== 'function') {
      throw new InvalidArgumentError(`ServiceDiscovery: a ZkSession is required, got ${describe(session)}`);
    }
    const o = checkOptions(options, 'new ServiceDiscovery', SERVICE_DISCOVERY_OPTION_KEYS);
    validatePath(o.basePath, 'ServiceDiscovery basePath');
    const codec = o.codec ?? jsonPayload<P>();
    if (codec === null || typeof codec !== 'object' || typeof codec.encode !== 'function' || typeof codec.decode !== 'function') {
      throw new InvalidArgumentError(`ServiceDiscovery: codec must be { encode, decode }, got ${describe(codec)}`);
    }
    this.#acl = optionalAcl(o.acl, 'ServiceDiscovery');
    this.session = session;
    this.basePath = o.basePath;
    this.codec = codec;
  }

  /**
   * Makes sure the base path exists (persistent, as Curator's parents), then the discovery can be
   * used. Rejects with `IllegalStateError` if already started, `ClosedError` after close.
   */
  async start(options: DiscoveryCallOptions = {}): Promise<void> {
    const o = checkOptions(options, 'ServiceDiscovery.start', DISCOVERY_CALL_OPTION_KEYS);
    this.#checkOpen();
    if (this.#started) throw new IllegalStateError(`ServiceDiscovery ${this.basePath}: already started`, { path: this.basePath });
    await this.#within(o, 'start', async (signal) => {
      if (this.basePath !== '/') await this.session.mkdirp(this.basePath, { signal, acl: this.#acl });
    });
    this.#started = true;
  }

  /**
   * Registers `instance` (or re-registers it: the same id again is an {@link update}), and
   * resolves once its node exists. Rejects with `InvalidArgumentError` for an invalid instance
   * or a payload that is not JSON (nothing sent); on timeout or abort the node, if created, is
   * removed again.
   */
  async register(instance: ServiceInstance<P> | ServiceInstanceInit<P>, options: DiscoveryCallOptions = {}): Promise<void> {
    const o = checkOptions(options, 'ServiceDiscovery.register', DISCOVERY_CALL_OPTION_KEYS);
    // Checked before the node starts: a bad deadline must not leave a registration behind.
    checkTimeout(o.timeoutMs);
    checkSignal(o.signal);
    this.#checkUsable();
    const inst = checkInstance(instance);
    const data = encodeInstance(inst, this.codec, this.session.dataLimit);
    const known = this.#registrations.get(inst.id);
    if (known !== undefined) {
      if (known.instance.name !== inst.name) throw new InvalidArgumentError(`ServiceDiscovery: id ${inst.id} is registered for ${known.instance.name}, not ${inst.name}`);
      return this.#write(known, inst, data, o, 'register');
    }
    const node = new PersistentNode(this.session, joinPath(joinPath(this.basePath, inst.name), inst.id), { mode: MODE[inst.serviceType], data, acl: this.#acl });
    node.on('error', (err) => this.#emit('error', err));
    const reg: Registration<P> = { instance: inst, node };
    this.#registrations.set(inst.id, reg);
    node.start();
    try {
      await this.#within(o, `register ${inst.name}/${inst.id}`, (signal) => node.waitForInitialCreate({ signal }));
    } catch (err) {
      if (this.#registrations.get(inst.id) === reg) this.#registrations.delete(inst.id);
      node.removeAllListeners();
      // The caller's deadline is over: the node (if its create got through) is removed in the
      // background, and close() waits for that too.
      this.#cleanup(node.close());
      throw err;
    }
  }

  /**
   * Writes a changed instance (same name and id) to its node; every re-registration uses it.
   * Rejects with {@link NotRegisteredError} if this discovery did not register that id.
   */
  async update(instance: ServiceInstance<P> | ServiceInstanceInit<P>, options: DiscoveryCallOptions = {}): Promise<void> {
    const o = checkOptions(options, 'ServiceDiscovery.update', DISCOVERY_CALL_OPTION_KEYS);
    this.#checkUsable();
    const inst = checkInstance(instance);
    const reg = this.#registrations.get(inst.id);
    if (reg === undefined || reg.instance.name !== inst.name) throw new NotRegisteredError(`ServiceDiscovery ${this.basePath}: ${inst.name}/${inst.id} is not registered here`, { path: joinPath(this.basePath, inst.name) });
    await this.#write(reg, inst, encodeInstance(inst, this.codec, this.session.dataLimit), o, 'update');
  }

  async #write(reg: Registration<P>, inst: ServiceInstance<P>, data: Buffer, o: DiscoveryCallOptions, what: string): Promise<void> {
    reg.instance = inst;
    await this.#within(o, `${what} ${inst.name}/${inst.id}`, (signal) => reg.node.setData(data, { signal }));
  }

  /**
   * Unregisters an instance (or an id) this discovery registered: its node is deleted and no
   * longer kept. Rejects with {@link NotRegisteredError} for one it did not register; on timeout
   * the node of a `DYNAMIC` instance still goes with the session.
   */
  async unregister(instance: ServiceInstance<P> | string, options: DiscoveryCallOptions = {}): Promise<void> {
    const o = checkOptions(options, 'ServiceDiscovery.unregister', DISCOVERY_CALL_OPTION_KEYS);
    this.#checkOpen();
    const id = typeof instance === 'string' ? instance : (instance as Partial<ServiceInstance<P>> | null)?.id;
    if (typeof id !== 'string') throw new InvalidArgumentError(`ServiceDiscovery.unregister: an instance or an id is required, got ${describe(instance)}`);
    const reg = this.#registrations.get(id);
    if (reg === undefined) throw new NotRegisteredError(`ServiceDiscovery ${this.basePath}: instance ${id} is not registered here`, { path: this.basePath });
    this.#registrations.delete(id);
    reg.node.removeAllListeners();
    const t = checkTimeout(o.timeoutMs);
    await reg.node.close({ ...(t === undefined ? {} : { timeoutMs: t }), ...(o.signal ? { signal: checkSignal(o.signal) } : {}) });
  }

  /** The instances this discovery registered, as last given. */
  get registered(): readonly ServiceInstance<P>[] {
    return [...this.#registrations.values()].map((r) => r.instance);
  }

  /** The names of the services (the base path's children), sorted. */
  async queryForNames(options: DiscoveryQueryOptions = {}): Promise<string[]> {
    const o = checkOptions(options, 'ServiceDiscovery.queryForNames', DISCOVERY_QUERY_OPTION_KEYS);
    const sync = checkBoolean(o.sync, 'sync', false);
    this.#checkUsable();
    return this.#within(o, 'queryForNames', async (signal) => {
      try {
        if (sync) await this.session.sync(this.basePath, { signal });
        return (await this.session.getChildren(this.basePath, { signal })).children.sort();
      } catch (err) {
        if (err instanceof NoNodeError) return [];
        throw err;
      }
    });
  }

  /** Every readable instance of service `name` (none for an unknown service); unreadable ones are skipped and emitted as `invalid`. */
  async queryForInstances(name: string, options: DiscoveryQueryOptions = {}): Promise<ServiceInstance<P>[]> {
    const o = checkOptions(options, 'ServiceDiscovery.queryForInstances', DISCOVERY_QUERY_OPTION_KEYS);
    const sync = checkBoolean(o.sync, 'sync', false);
    checkNodeName(name, 'service name');
    this.#checkUsable();
    const dir = joinPath(this.basePath, name);
    return this.#within(o, `queryForInstances ${name}`, async (signal) => {
      let children: string[];
      try {
        if (sync) await this.session.sync(dir, { signal });
        children = (await this.session.getChildren(dir, { signal })).children.sort();
      } catch (err) {
        if (err instanceof NoNodeError) return [];
        throw err;
      }
      const found = await Promise.all(
        children.map(async (child) => {
          try {
            return await this.#read(joinPath(dir, child), signal);
          } catch (err) {
            if (!(err instanceof InvalidInstanceError)) throw err;
            this.#emit('invalid', err);
            return undefined;
          }
        }),
      );
      return found.filter((i): i is ServiceInstance<P> => i !== undefined);
    });
  }

  /** The instance `id` of service `name`, or undefined; rejects with {@link InvalidInstanceError} if its node holds no instance. */
  async queryForInstance(name: string, id: string, options: DiscoveryQueryOptions = {}): Promise<ServiceInstance<P> | undefined> {
    const o = checkOptions(options, 'ServiceDiscovery.queryForInstance', DISCOVERY_QUERY_OPTION_KEYS);
    const sync = checkBoolean(o.sync, 'sync', false);
    checkNodeName(name, 'service name');
    checkNodeName(id, 'instance id');
    this.#checkUsable();
    const path = joinPath(joinPath(this.basePath, name), id);
    return this.#within(o, `queryForInstance ${name}/${id}`, async (signal) => {
      if (sync) await this.session.sync(path, { signal });
      return this.#read(path, signal);
    });
  }

  async #read(path: string, signal: AbortSignal): Promise<ServiceInstance<P> | undefined> {
    try {
      const { data } = await this.session.getData(path, { signal });
      return decodeInstance(data, path, this.codec);
    } catch (err) {
      if (err instanceof NoNodeError) return undefined;
      throw err;
    }
  }

  /** A live copy of service `name`'s instances (call its `start`); closed with the discovery. */
  serviceCache(name: string, options: ServiceCacheOptions = {}): ServiceCache<P> {
    checkOptions(options, 'ServiceDiscovery.serviceCache', SERVICE_CACHE_OPTION_KEYS);
    this.#checkUsable();
    const cache = new ServiceCache<P>(this, name, options);
    this.#own(cache);
    return cache;
  }

  /** A provider of service `name`'s instances over a live copy (call its `start`); closed with the discovery. */
  serviceProvider(name: string, options: ServiceProviderOptions<P> = {}): ServiceProvider<P> {
    providerSettings(options);
    this.#checkUsable();
    const provider = new ServiceProvider<P>(this, name, options);
    this.#own(provider);
    return provider;
  }

  #cleanup(closing: Promise<void>): void {
    const done = closing.catch((err: unknown) => this.#emit('error', err instanceof Error ? err : new Error(String(err)))).finally(() => this.#cleanups.delete(done));
    this.#cleanups.add(done);
  }

  #own(thing: ServiceCache<P> | ServiceProvider<P>): void {
    this.#owned.add(thing);
    thing.once('closed', () => this.#owned.delete(thing));
  }

  /**
   * Closes the caches and providers it made and unregisters every instance it registered
   * (each delete bounded by `timeoutMs`, default 10000: a `DYNAMIC` node then goes with the
   * session). Idempotent.
   */
  close(options: DiscoveryCallOptions = {}): Promise<void> {
    const o = checkOptions(options, 'ServiceDiscovery.close', DISCOVERY_CALL_OPTION_KEYS);
    if (this.#closing === undefined) {
      this.#closer.abort(new ClosedError(`ServiceDiscovery ${this.basePath}: closed`, { path: this.basePath }));
      const t = checkTimeout(o.timeoutMs);
      const signal = checkSignal(o.signal);
      this.#closing = (async () => {
        const owned = [...this.#owned].map((t2) => t2.close());
        const regs = [...this.#registrations.values()];
        this.#registrations.clear();
        const nodes = regs.map((r) => {
          r.node.removeAllListeners();
          return r.node.close({ ...(t === undefined ? {} : { timeoutMs: t }), ...(signal ? { signal } : {}) });
        });
        const results = await Promise.allSettled([...owned, ...nodes, ...this.#cleanups]);
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      })();
    }
    return this.#closing;
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closer.signal.aborted;
  }

  #checkOpen(): void {
    if (this.#closer.signal.aborted) throw new ClosedError(`ServiceDiscovery ${this.basePath}: closed`, { path: this.basePath });
    if (this.session.closed) throw new ClosedError(`ServiceDiscovery ${this.basePath}: its session is closed`, { path: this.basePath });
  }

  #checkUsable(): void {
    this.#checkOpen();
    if (!this.#started) throw new IllegalStateError(`ServiceDiscovery ${this.basePath}: call start() first`, { path: this.basePath });
  }

  /** Runs `fn` under the caller's deadline and signal and the discovery's close. */
  #within<T>(o: DiscoveryCallOptions, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withinDeadline(checkTimeout(o.timeoutMs), [checkSignal(o.signal), this.#closer.signal], (ms) => `ServiceDiscovery ${this.basePath}: ${what} did not finish within ${ms} ms`, this.basePath, fn);
  }

  /** @internal */
  emitError(error: Error): void {
    this.#emit('error', error);
  }

  #emit<E extends keyof ServiceDiscoveryEvents>(event: E, ...args: Parameters<ServiceDiscoveryEvents[E]>): void {
    if (event === 'error' && this.listenerCount('error') === 0) return;
    callListeners(this, event, args);
  }
}

/** A {@link ServiceInstance} from what the caller gave (an instance, or the fields of one), checked. */
function checkInstance<P>(instance: ServiceInstance<P> | ServiceInstanceInit<P>): ServiceInstance<P> {
  if (instance === null || typeof instance !== 'object') throw new InvalidArgumentError(`ServiceDiscovery: an instance is required, got ${describe(instance)}`);
  // Checked again even if made by serviceInstance: a spread copy may have been changed.
  return serviceInstance<P>({ ...instance } as ServiceInstanceInit<P>);
}
