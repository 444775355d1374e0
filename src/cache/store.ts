/**
 * The in-memory copy a cache keeps: nodes by path, child names by parent, and the bytes held.
 *
 * @internal
 * @module
 */
import type { CachedNode } from './types.js';

/** Nodes by path with a child index; counts what the `maxBytes` bound counts. */
export class NodeStore {
  readonly #nodes = new Map<string, CachedNode>();
  readonly #children = new Map<string, Set<string>>();
  #bytes = 0;

  /** Nodes held. */
  get size(): number {
    return this.#nodes.size;
  }

  /** Bytes held: each node's path and data. */
  get bytes(): number {
    return this.#bytes;
  }

  get(path: string): CachedNode | undefined {
    return this.#nodes.get(path);
  }

  has(path: string): boolean {
    return this.#nodes.has(path);
  }

  /** Names of the held children of `parent`, sorted. */
  childNames(parent: string): string[] {
    const set = this.#children.get(parent);
    return set ? [...set].filter((name) => this.#nodes.has(join(parent, name))).sort() : [];
  }

  /**
   * Names linked under `parent`: its held children, and those of its paths that are not held
   * but have held nodes under them (a node can be read before its re-created parent).
   */
  linkedNames(parent: string): string[] {
    const set = this.#children.get(parent);
    return set ? [...set] : [];
  }

  /** Stores `node` (replacing what was at its path) and returns what was there. */
  put(node: CachedNode): CachedNode | undefined {
    const previous = this.#nodes.get(node.path);
    if (previous) this.#bytes -= weight(previous);
    else this.#link(node.path);
    this.#nodes.set(node.path, node);
    this.#bytes += weight(node);
    return previous;
  }

  /** Removes the node at `path` alone (what is held under it stays); returns it. */
  removeNode(path: string): CachedNode | undefined {
    const node = this.#nodes.get(path);
    if (!node) return undefined;
    this.#nodes.delete(path);
    this.#bytes -= weight(node);
    this.#unlink(path);
    return node;
  }

  /** The nodes held at and under `path`, deepest first (each before its parent). */
  subtree(path: string): CachedNode[] {
    const out: CachedNode[] = [];
    const visit = (p: string): void => {
      const names = this.#children.get(p);
      if (names) for (const name of names) visit(join(p, name));
      const node = this.#nodes.get(p);
      if (node) out.push(node);
    };
    visit(path);
    return out;
  }

  /** Links `path` under its parent, and the parent under its own, up to a linked one. */
  #link(path: string): void {
    for (let p = path; ; ) {
      const [parent, name] = split(p);
      if (parent === undefined) return;
      let set = this.#children.get(parent);
      if (set?.has(name)) return;
      if (!set) this.#children.set(parent, (set = new Set()));
      set.add(name);
      p = parent;
    }
  }

  /** Unlinks `path` unless something under it is held, and each ancestor left holding nothing. */
  #unlink(path: string): void {
    for (let p = path; ; ) {
      if (this.#nodes.has(p) || (this.#children.get(p)?.size ?? 0) > 0) return;
      this.#children.delete(p);
      const [parent, name] = split(p);
      if (parent === undefined) return;
      const set = this.#children.get(parent);
      if (!set?.delete(name)) return;
      p = parent;
    }
  }

  values(): IterableIterator<CachedNode> {
    return this.#nodes.values();
  }

  paths(): IterableIterator<string> {
    return this.#nodes.keys();
  }
}

function join(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

function weight(node: CachedNode): number {
  return Buffer.byteLength(node.path) + (node.data?.length ?? 0);
}

/** Parent path and name; the root has no parent. */
function split(path: string): [string | undefined, string] {
  if (path === '/') return [undefined, ''];
  const i = path.lastIndexOf('/');
  return [i === 0 ? '/' : path.slice(0, i), path.slice(i + 1)];
}
