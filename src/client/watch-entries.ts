/**
 * {@link WatchEntries}: a generation's one-shot watches by kind and path.
 *
 * @internal
 * @module
 */
import type { WatchEntry } from './generation.js';
import type { RawWatchKind } from './nzc.js';

/**
 * A generation's one-shot watches, one per (kind, path): a map per kind, keyed by the path the
 * caller passed, not a `kind:path` key built per watch (a lock waiter keeps two watches, and
 * each such key was a string as long as the path).
 */
export class WatchEntries {
  private readonly byKind = new Map<RawWatchKind, Map<string, WatchEntry>>();

  /** The entry of (kind, path), if watched. */
  get(kind: RawWatchKind, path: string): WatchEntry | undefined {
    return this.byKind.get(kind)?.get(path);
  }

  /** Files `entry` under its kind and path (in place of any there). */
  set(entry: WatchEntry): void {
    let paths = this.byKind.get(entry.kind);
    if (!paths) this.byKind.set(entry.kind, (paths = new Map()));
    paths.set(entry.path, entry);
  }

  /** Removes `entry` if it is the one filed under its kind and path. */
  delete(entry: WatchEntry): void {
    const paths = this.byKind.get(entry.kind);
    if (paths?.get(entry.path) === entry) paths.delete(entry.path);
  }

  /** How many are filed. */
  get size(): number {
    let n = 0;
    for (const paths of this.byKind.values()) n += paths.size;
    return n;
  }

  /** Removes them all and returns them. */
  takeAll(): WatchEntry[] {
    const all: WatchEntry[] = [];
    for (const paths of this.byKind.values()) all.push(...paths.values());
    this.byKind.clear();
    return all;
  }
}
