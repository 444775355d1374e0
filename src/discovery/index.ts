/**
 * Service discovery compatible with Apache Curator's curator-x-discovery: `zk-recipes/discovery`.
 *
 * @module discovery
 */
export { ServiceDiscovery, type DiscoveryCallOptions, type DiscoveryQueryOptions, type ServiceDiscoveryEvents, type ServiceDiscoveryOptions } from './service-discovery.js';
export { ServiceCache, type ServiceCacheChangesOptions, type ServiceCacheEvents, type ServiceCacheOptions } from './service-cache.js';
export { ServiceProvider, type DownInstancePolicy, type ServiceProviderEvents, type ServiceProviderOptions } from './service-provider.js';
export { random, roundRobin, sticky, type ProviderStrategy } from './strategies.js';
export { serviceInstance, UriSpec, type ServiceInstance, type ServiceInstanceInit, type ServiceType, type UriSpecJson, type UriSpecPart } from './instance.js';
export { curatorPayload, jsonPayload, type PayloadCodec } from './codec.js';
export { InvalidInstanceError, NotRegisteredError } from '../errors.js';
