/**
 * {@link ServiceProvider}: one service's instances to call, with a strategy and a down-instance
 * policy (Curator's `ServiceProvider`).
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import type { CacheWaitOptions } from '../cache/types.js';
import { checkInt, checkOptions, checkRecord, describe, optionKeys } from '../client/validate.js';
import { InvalidArgumentError, type InvalidInstanceError } from '../errors.js';
import { callListeners } from '../util/listeners.js';
import type { ServiceInstance } from './instance.js';
import { ServiceCache, type ServiceCacheOptions } from './service-cache.js';
import type { ServiceDiscovery } from './service-discovery.js';
import { roundRobin, type ProviderStrategy } from './strategies.js';

/**
 * Curator's `DownInstancePolicy`: an instance noted in error `errorThreshold` times is left out
 * until `timeoutMs` after its first noted error.
 * @group Discovery
 */
export interface DownInstancePolicy {
  /** How long a down instance stays out, from its first noted error, ms. Default 30000. */
  timeoutMs?: number;
  /** Errors that make an instance down. Default 2. */
  errorThreshold?: number;
}

/** Options of a {@link ServiceProvider}. @group Discovery */
export interface ServiceProviderOptions<P> extends ServiceCacheOptions {
  /** How one instance is picked; default {@link roundRobin}. */
  strategy?: ProviderStrategy;
  /** When noted errors leave an instance out; see {@link DownInstancePolicy}. */
  downInstancePolicy?: DownInstancePolicy;
  /** Instances kept only if every filter says true (Curator's `InstanceFilter`s); disabled ones are always left out. */
  filters?: readonly ((instance: ServiceInstance<P>) => boolean)[];
}

/** Events of a {@link ServiceProvider}. @group Discovery */
export interface ServiceProviderEvents<P> {
  /** The service's instances changed (all of them, before filters). */
  changed: (instances: readonly ServiceInstance<P>[]) => void;
  /** An instance node holds no instance: skipped. */
  invalid: (error: InvalidInstanceError) => void;
  /** A read failed (retried), or a listener threw. */
  error: (error: Error) => void;
  /** Closed. */
  closed: () => void;
}

/** The keys of {@link ServiceProviderOptions}. @internal */
export const SERVICE_PROVIDER_OPTION_KEYS = optionKeys<ServiceProviderOptions<unknown>, ServiceCacheOptions>({ strategy: true, downInstancePolicy: true, filters: true }, ['watchMode']);
/** The keys of {@link DownInstancePolicy}. @internal */
export const DOWN_INSTANCE_POLICY_KEYS = optionKeys<DownInstancePolicy>({ timeoutMs: true, errorThreshold: true });

/** A provider's options, checked (every check the constructor makes, and nothing sent). @internal */
export function providerSettings<P>(options: ServiceProviderOptions<P>): {
  options: ServiceProviderOptions<P>;
  strategy: ProviderStrategy;
  filters: readonly ((instance: ServiceInstance<P>) => boolean)[];
  downMs: number;
  threshold: number;
} {
  const o = checkOptions(options, 'serviceProvider', SERVICE_PROVIDER_OPTION_KEYS);
  const strategy = o.strategy ?? roundRobin();
  if (strategy === null || typeof strategy !== 'object' || typeof strategy.pick !== 'function') throw new InvalidArgumentError(`serviceProvider: strategy must be { pick(instances) }, got ${describe(strategy)}`);
  const filters = o.filters ?? [];
  if (!Array.isArray(filters) || filters.some((f) => typeof f !== 'function')) throw new InvalidArgumentError(`serviceProvider: filters must be an array of functions, got ${describe(filters)}`);
  const policy = checkRecord(o.downInstancePolicy, 'downInstancePolicy') ?? {};
  checkOptions(policy, 'downInstancePolicy', DOWN_INSTANCE_POLICY_KEYS);
  return {
    options: o,
    strategy,
    filters: [...filters],
    downMs: checkInt(policy.timeoutMs, 'downInstancePolicy.timeoutMs', 0, 2 ** 31 - 1, 30_000),
    threshold: checkInt(policy.errorThreshold, 'downInstancePolicy.errorThreshold', 1, 2 ** 31 - 1, 2),
  };
}

/** Errors noted against one instance. */
interface Down {
  readonly since: number;
  count: number;
}

/**
 * The instances of one service to call: {@link getInstance} picks one with the strategy from a
 * live {@link ServiceCache} (memory only: no request per call), leaving out disabled instances,
 * those the filters refuse and those noted down ({@link noteError}). Made by
 * {@link ServiceDiscovery.serviceProvider}; call {@link start} first.
 *
 * ```ts
 * await using provider = discovery.serviceProvider('api', { strategy: roundRobin() });
 * await provider.start({ timeoutMs: 5000 });
 * const target = provider.getInstance(); // undefined when none is usable
 * ```
 * @group Discovery
 */
export class ServiceProvider<P = unknown> extends EventEmitter<ServiceProviderEvents<P>> implements AsyncDisposable {
  /** The service's name. */
  readonly name: string;
  readonly #cache: ServiceCache<P>;
  readonly #strategy: ProviderStrategy;
  readonly #filters: readonly ((instance: ServiceInstance<P>) => boolean)[];
  readonly #downMs: number;
  readonly #threshold: number;
  readonly #down = new Map<string, Down>();
  #closing: Promise<void> | undefined;

  /** @internal Made by {@link ServiceDiscovery.serviceProvider}. */
  constructor(discovery: ServiceDiscovery<P>, name: string, options: ServiceProviderOptions<P> = {}) {
    super();
    const settings = providerSettings(options);
    const o = settings.options;
    this.#downMs = settings.downMs;
    this.#threshold = settings.threshold;
    this.#strategy = settings.strategy;
    this.#filters = settings.filters;
    this.name = name;
    this.#cache = new ServiceCache<P>(discovery, name, o.watchMode === undefined ? {} : { watchMode: o.watchMode });
    this.#cache.on('changed', (list) => this.#emit('changed', list));
    this.#cache.on('invalid', (e) => this.#emit('invalid', e));
    this.#cache.on('error', (e) => this.#emit('error', e));
  }

  /** Loads the instances; resolves once the first full read is in. */
  start(options: CacheWaitOptions = {}): Promise<void> {
    return this.#cache.start(options);
  }

  /** One usable instance, picked by the strategy; undefined when none is. */
  getInstance(): ServiceInstance<P> | undefined {
    const usable = this.getAllInstances();
    if (usable.length === 0) return undefined;
    return this.#strategy.pick(usable);
  }

  /** Every usable instance: enabled, passing the filters, not noted down. */
  getAllInstances(): ServiceInstance<P>[] {
    this.#purge();
    return this.#cache.instances.filter((i) => i.enabled && !this.#isDown(i) && this.#filters.every((f) => f(i)));
  }

  /** Notes that a call to `instance` failed; see {@link DownInstancePolicy}. */
  noteError(instance: ServiceInstance<P>): void {
    const id = (instance as Partial<ServiceInstance<P>> | null)?.id;
    if (typeof id !== 'string') throw new InvalidArgumentError(`noteError: an instance is required, got ${describe(instance)}`);
    this.#purge();
    const d = this.#down.get(id);
    if (d === undefined) this.#down.set(id, { since: performance.now(), count: 1 });
    else d.count++;
  }

  #isDown(instance: ServiceInstance<P>): boolean {
    const d = this.#down.get(instance.id);
    return d !== undefined && d.count >= this.#threshold;
  }

  #purge(): void {
    if (this.#down.size === 0) return;
    const now = performance.now();
    for (const [id, d] of this.#down) if (now - d.since >= this.#downMs) this.#down.delete(id);
  }

  /** Stops following the server (its watch removed). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#cache.close();
      this.#cache.removeAllListeners();
      this.#emit('closed');
    })();
    return this.#closing;
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #emit<E extends keyof ServiceProviderEvents<P>>(event: E, ...args: Parameters<ServiceProviderEvents<P>[E]>): void {
    callListeners(this, event, args);
  }
}
