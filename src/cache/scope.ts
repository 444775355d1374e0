/**
 * What part of the tree a cache holds: a root, how deep under it, and whether the root itself.
 *
 * @internal
 * @module
 */
import { joinPath } from '../client/validate.js';

/** The nodes a cache holds. */
export class Scope {
  readonly #rootDepth: number;

  constructor(
    /** The cache's path. */
    readonly root: string,
    /** Levels below the root held (Infinity for a whole tree). */
    readonly maxDepth: number,
    /** Whether the root node itself is held (not for a children cache). */
    readonly includeRoot: boolean,
  ) {
    this.#rootDepth = segments(root);
  }

  /** Levels below the root, or -1 for a path outside it. */
  depth(path: string): number {
    if (this.root !== '/' && path !== this.root && !path.startsWith(`${this.root}/`)) return -1;
    return segments(path) - this.#rootDepth;
  }

  /** Whether `path` is a node this cache holds. */
  holds(path: string): boolean {
    const d = this.depth(path);
    return d > 0 ? d <= this.maxDepth : d === 0 && this.includeRoot;
  }

  /** Whether the children of `path` are held. */
  listsChildren(path: string): boolean {
    const d = this.depth(path);
    return d >= 0 && d < this.maxDepth;
  }

  child(parent: string, name: string): string {
    return joinPath(parent, name);
  }
}

function segments(path: string): number {
  if (path === '/') return 0;
  let n = 0;
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) n++;
  return n;
}
