/**
 * Caches: an in-memory copy of a node, a node's children, or a whole subtree, kept up to date by
 * watches: {@link NodeCache}, {@link ChildrenCache}, {@link TreeCache}.
 *
 * @module
 */
export type { CacheAdded, CacheChanged, CachedNode, CacheEvent, CacheMilestone, CacheRemoved, CacheSessionLost, CacheSnapshot, CacheEvents, CacheIteratorOptions, CacheOptions, CacheState, CacheWaitOptions, CacheWatchMode, TreeCacheOptions } from './types.js';
export { Cache } from './cache.js';
export { TreeCache } from './tree-cache.js';
export { ChildrenCache } from './children-cache.js';
export { NodeCache } from './node-cache.js';
