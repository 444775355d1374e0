/**
 * {@link ChildrenCache}: the children of a node.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { Cache } from './cache.js';
import type { CacheOptions } from './types.js';

/**
 * An in-memory copy of the children of the node at a path (not the node itself, nor what is
 * under the children), kept up to date by one recursive persistent watch (or, on a server before
 * 3.6, a data watch per child and a child watch on the path). Curator's `PathChildrenCache`.
 * The path need not exist: its children appear when it and they are created.
 *
 * @example
 * ```ts
 * import { ChildrenCache, type ZkSession } from 'zk-recipes';
 * declare const zk: ZkSession;
 *
 * await using members = new ChildrenCache(zk, '/services/api');
 * members.on('added', (node) => console.log(`joined: ${node.path}`));
 * members.on('removed', (node) => console.log(`left: ${node.path}`));
 * await members.start({ timeoutMs: 10_000 });
 * console.log(members.children());
 * ```
 * @group Recipes
 */
export class ChildrenCache extends Cache {
  /** Makes a cache of the children of `path`; call `start()` to load it. Nothing is read before. */
  constructor(session: ZkSession, path: string, options: CacheOptions = {}) {
    super(session, path, options, { what: 'children cache', maxDepth: 1, includeRoot: false });
  }
}
