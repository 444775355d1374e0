/**
 * {@link WatcherTables}: the one-shot watcher tables node-zookeeper-client keeps per connection
 * (data, existence and child watchers by path: notified when the server fires a watch, and
 * re-registered after a reconnect), in place of its own `WatcherManager`, which makes an
 * `EventEmitter` per watched path and wraps each watcher in a bound `once` function: about
 * 600 bytes per watch, where a waiting lock keeps one or two watches for as long as it waits.
 * Here a path holds its watcher function itself (a set only when several are filed). Same
 * interface and semantics as the client's: a watcher is filed once per table and path, and
 * fires once; `nzc.ts` installs it on each client.
 *
 * @internal
 * @module
 */

/** A watch notification as node-zookeeper-client delivers it. */
export interface TableEvent {
  type: number;
  name: string;
  path: string;
}

/** A watcher function filed in a table. */
export type TableWatcher = (event: TableEvent) => void;

const NODE_CREATED = 1;
const NODE_DELETED = 2;
const NODE_DATA_CHANGED = 3;
const NODE_CHILDREN_CHANGED = 4;
const NAMES: Record<number, string> = { 1: 'NODE_CREATED', 2: 'NODE_DELETED', 3: 'NODE_DATA_CHANGED', 4: 'NODE_CHILDREN_CHANGED' };

/** One table: each path's watcher, or its watchers when there are several. */
export class WatcherTable {
  private readonly byPath = new Map<string, TableWatcher | Set<TableWatcher>>();

  /** Files `watcher` for `path` (once: filing it again changes nothing). */
  add(path: string, watcher: TableWatcher): void {
    const now = this.byPath.get(path);
    if (now === undefined) this.byPath.set(path, watcher);
    else if (now instanceof Set) now.add(watcher);
    else if (now !== watcher) this.byPath.set(path, new Set([now, watcher]));
  }

  /** Drops `watcher` of `path`; the path goes with its last watcher. */
  remove(path: string, watcher: TableWatcher): void {
    const now = this.byPath.get(path);
    if (now === watcher) this.byPath.delete(path);
    else if (now instanceof Set && now.delete(watcher) && now.size === 0) this.byPath.delete(path);
  }

  /** Whether a watcher of `path` is filed. */
  has(path: string): boolean {
    return this.byPath.has(path);
  }

  /** The paths with a watcher. */
  paths(): string[] {
    return [...this.byPath.keys()];
  }

  /** How many paths have a watcher. */
  get size(): number {
    return this.byPath.size;
  }

  /** Takes the watchers of `path` out of the table (they fire once), into `into`. */
  take(path: string, into: TableWatcher[]): void {
    const now = this.byPath.get(path);
    if (now === undefined) return;
    this.byPath.delete(path);
    if (now instanceof Set) into.push(...now);
    else into.push(now);
  }
}

/** The three tables of one client, with the interface of node-zookeeper-client's `WatcherManager`. */
export class WatcherTables {
  readonly data = new WatcherTable();
  readonly exist = new WatcherTable();
  readonly child = new WatcherTable();

  registerDataWatcher(path: string, watcher: TableWatcher): void {
    this.data.add(path, checked(watcher));
  }

  registerExistenceWatcher(path: string, watcher: TableWatcher): void {
    this.exist.add(path, checked(watcher));
  }

  registerChildWatcher(path: string, watcher: TableWatcher): void {
    this.child.add(path, checked(watcher));
  }

  getDataWatcherPaths(): string[] {
    return this.data.paths();
  }

  getExistenceWatcherPaths(): string[] {
    return this.exist.paths();
  }

  getChildWatcherPaths(): string[] {
    return this.child.paths();
  }

  isEmpty(): boolean {
    return this.data.size === 0 && this.exist.size === 0 && this.child.size === 0;
  }

  /**
   * A notification: the watchers it fires leave their tables, then each is called (as the
   * client's: a change or creation fires data and existence watchers, a deletion data and child
   * watchers, a children change child watchers; an unknown type throws).
   */
  emit(event: { type: number; path: string }): void {
    if (!this.notified(event.type, event.path)) throw new Error(`Unknown event type: ${event.type}`);
  }

  /**
   * A notification the session decoded itself (see `frameReplies`): as {@link emit}, but a type
   * no table knows is ignored rather than thrown inside the socket's handler. Returns whether the
   * type was known.
   */
  notified(type: number, path: string): boolean {
    const fired: TableWatcher[] = [];
    switch (type) {
      case NODE_DATA_CHANGED:
      case NODE_CREATED:
        this.data.take(path, fired);
        this.exist.take(path, fired);
        break;
      case NODE_CHILDREN_CHANGED:
        this.child.take(path, fired);
        break;
      case NODE_DELETED:
        this.data.take(path, fired);
        this.child.take(path, fired);
        break;
      default:
        return false;
    }
    if (fired.length === 0) return true;
    const e: TableEvent = { type, name: NAMES[type] as string, path };
    for (const w of fired) w(e);
    return true;
  }
}

function checked(watcher: TableWatcher): TableWatcher {
  if (typeof watcher !== 'function') throw new Error('watcher must be a valid function.');
  return watcher;
}
