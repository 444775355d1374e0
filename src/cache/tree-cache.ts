/**
 * {@link TreeCache}: a node and every node under it.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { checkInt, optionKeys } from '../client/validate.js';
import { Cache, CACHE_OPTION_KEYS } from './cache.js';
import type { CacheOptions, TreeCacheOptions } from './types.js';

const TREE_CACHE_OPTION_KEYS = optionKeys<TreeCacheOptions, CacheOptions>({ maxDepth: true }, CACHE_OPTION_KEYS);

/**
 * An in-memory copy of the node at a path and every node under it (to `maxDepth` levels), kept
 * up to date by one recursive persistent watch (or, on a server before 3.6, a data and a child
 * watch per node). Curator's `CuratorCache` and `TreeCache`, kazoo's `TreeCache`.
 *
 * @example
 * ```ts
 * import { TreeCache, type ZkSession } from 'zk-recipes';
 * declare const zk: ZkSession;
 *
 * await using config = new TreeCache(zk, '/config');
 * config.on('changed', (node) => console.log(`${node.path} is now ${node.data?.toString()}`));
 * await config.start({ timeoutMs: 10_000 });
 * console.log(config.get('/config/feature-x')?.data?.toString());
 * ```
 * @group Recipes
 */
export class TreeCache extends Cache {
  /** Makes a cache of `path` and its subtree; call `start()` to load it. Nothing is read before. */
  constructor(session: ZkSession, path: string, options: TreeCacheOptions = {}) {
    const given = options !== null && typeof options === 'object' ? options.maxDepth : undefined;
    const maxDepth = given === undefined ? Infinity : checkInt(given, 'maxDepth', 0, 1000);
    super(session, path, options, { what: 'tree cache', maxDepth, includeRoot: true }, TREE_CACHE_OPTION_KEYS);
  }
}
