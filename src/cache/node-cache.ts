/**
 * {@link NodeCache}: one node.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { Cache } from './cache.js';
import type { CachedNode, CacheOptions } from './types.js';

/**
 * An in-memory copy of the node at a path (data and stat), kept up to date by one persistent
 * watch (or, on a server before 3.6, a one-shot data watch set again after each change).
 * Curator's `NodeCache`. The node need not exist: it is `added` when created.
 *
 * @example
 * ```ts
 * import { NodeCache, type ZkSession } from 'zk-recipes';
 * declare const zk: ZkSession;
 *
 * await using flag = new NodeCache(zk, '/flags/maintenance');
 * await flag.start({ timeoutMs: 10_000 });
 * const on = (): boolean => flag.current?.data?.toString() === 'on';
 * console.log(on());
 * ```
 * @group Recipes
 */
export class NodeCache extends Cache {
  /** Makes a cache of the node at `path`; call `start()` to load it. Nothing is read before. */
  constructor(session: ZkSession, path: string, options: CacheOptions = {}) {
    super(session, path, options, { what: 'node cache', maxDepth: 0, includeRoot: true });
  }

  /** The node as held, or undefined while it does not exist (or before the first load). */
  get current(): CachedNode | undefined {
    return this.get(this.path);
  }
}
