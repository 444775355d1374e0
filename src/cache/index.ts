/**
 * Caches: an in-memory copy of a node, a node's children, or a whole subtree, kept up to date by
 * watches: {@link NodeCache}, {@link ChildrenCache}, {@link TreeCache}.
 *
 * @module
 */
export type { CachedNode, CacheEvent, CacheEvents, CacheIteratorOptions, CacheOptions, CacheState, CacheWaitOptions, CacheWatchMode, TreeCacheOptions } from './types.js';
