/**
 * How a cache reads the server into its copy: one read at a time per path (so replies apply in
 * the server's order), a bounded number in flight, full re-reads ("walks") that end with a sweep,
 * and, in one-shot mode, the watches each read sets.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Stat, Watched, WatchEvent } from '../client/types.js';
import { backoffDelay, type Backoff } from '../client/retry.js';
import { ClosedError, ConnectionLossError, NoNodeError, SessionExpiredError, isPermissionError } from '../errors.js';
import { delay } from '../util/abort.js';
import { Limiter } from './limiter.js';
import type { Scope } from './scope.js';
import type { NodeStore } from './store.js';
import type { CachedNode } from './types.js';

/** What the loader reports to its cache. */
export interface LoaderHost {
  added(node: CachedNode): void;
  changed(node: CachedNode, previous: CachedNode): void;
  removed(node: CachedNode): void;
  /** A read failed for a reason a re-read after reconnecting would not cure (it is retried). */
  error(error: Error): void;
}

/** A full re-read: done once every read it asked for is done. */
class Walk {
  outstanding = 0;
  cancelled = false;
  failure: unknown;
  readonly done: Promise<void>;
  settle!: (failure?: unknown) => void;

  constructor(readonly epoch: number) {
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = (failure) => (failure === undefined ? resolve() : reject(failure));
    });
    this.done.catch(() => undefined);
  }
}

/** Children whose reads are queued in one go before the loader yields to the event loop. */
const FAN_OUT_SLICE = 1000;

/** Thrown by a walk cut short by a disconnect or another walk. */
export class WalkCancelled extends Error {}

interface Job {
  list: boolean;
  walks: Set<Walk>;
}

interface Task {
  running: boolean;
  next: Job | undefined;
}

/** The read side of a cache. */
export class Loader {
  readonly #tasks = new Map<string, Task>();
  /** The walk each node was last seen existing in (the sweep removes the rest). */
  readonly #seen = new Map<string, number>();
  /** One-shot mode: paths whose data (or existence) watch, and whose child watch, is set. */
  readonly #dataWatched = new Set<string>();
  readonly #childWatched = new Set<string>();
  readonly #retries = new Map<string, number>();
  readonly #limiter: Limiter;
  #epoch = 0;
  #walk: Walk | undefined;
  /** Whether changes come from one-shot watches this loader sets. */
  oneShot = false;

  constructor(
    private readonly session: ZkSession,
    private readonly scope: Scope,
    private readonly store: NodeStore,
    private readonly host: LoaderHost,
    private readonly options: { cacheData: boolean; concurrency: number; backoff: Backoff; signal: AbortSignal },
  ) {
    this.#limiter = new Limiter(options.concurrency);
  }

  /** Reads `path` again (and lists its children when `list`): a watch said it changed. */
  refresh(path: string, list = false): void {
    this.#request(path, list, undefined);
  }

  /**
   * Re-reads everything held, then removes what the re-read did not see: the copy then equals
   * the server's as of the re-read. Rejects with {@link WalkCancelled} if cut short.
   */
  resync(): Promise<void> {
    this.cancelWalk();
    const walk = new Walk(++this.#epoch);
    this.#walk = walk;
    walk.outstanding = 1;
    this.#request(this.scope.root, true, walk);
    this.#finishOne(walk, undefined);
    return walk.done;
  }

  /** Cuts the current walk short: its reads still apply, but it ends in {@link WalkCancelled}. */
  cancelWalk(): void {
    const walk = this.#walk;
    if (!walk) return;
    this.#walk = undefined;
    walk.cancelled = true;
    walk.settle(new WalkCancelled('re-read cut short'));
  }

  /** One-shot mode: the session was lost, and every watch with it. */
  watchesLost(): void {
    this.#dataWatched.clear();
    this.#childWatched.clear();
  }

  #request(path: string, list: boolean, walk: Walk | undefined): void {
    if (this.options.signal.aborted) return;
    let task = this.#tasks.get(path);
    if (!task) this.#tasks.set(path, (task = { running: false, next: undefined }));
    const job = (task.next ??= { list: false, walks: new Set() });
    job.list ||= list;
    if (walk && !job.walks.has(walk)) {
      job.walks.add(walk);
      walk.outstanding++;
    }
    if (!task.running) void this.#run(path, task);
  }

  async #run(path: string, task: Task): Promise<void> {
    task.running = true;
    while (task.next) {
      const job = task.next;
      task.next = undefined;
      let failure: unknown;
      try {
        if (!this.options.signal.aborted) await this.#load(path, job);
        this.#retries.delete(path);
      } catch (err) {
        failure = err;
        if (job.walks.size === 0) this.#retryLater(path, job.list, err);
      }
      for (const walk of job.walks) this.#finishOne(walk, failure);
    }
    task.running = false;
    this.#tasks.delete(path);
  }

  #finishOne(walk: Walk, failure: unknown): void {
    if (failure !== undefined && walk.failure === undefined) walk.failure = failure;
    if (--walk.outstanding > 0 || walk.cancelled) return;
    // A held node this walk did not see, with a read under way (an event's): that read decides
    // whether it is gone, so the walk ends after it; else `resynced` could come while a node
    // deleted before the re-read is still held. Each such read marks its node seen or removes it.
    if (walk.failure === undefined && !this.options.signal.aborted) {
      let joined = false;
      for (const path of [...this.store.paths()]) {
        if (this.store.has(path) && (this.#seen.get(path) ?? 0) < walk.epoch && this.#tasks.has(path)) {
          this.#request(path, false, walk);
          joined = true;
        }
      }
      if (joined) return;
    }
    if (this.#walk === walk) this.#walk = undefined;
    if (walk.failure !== undefined) return walk.settle(walk.failure);
    this.#sweep(walk.epoch);
    walk.settle();
  }

  /** A failed event read: retried after a backoff, unless a reconnect's re-read will cover it. */
  #retryLater(path: string, list: boolean, err: unknown): void {
    if (this.options.signal.aborted || !needsRetry(err)) return;
    this.host.error(err instanceof Error ? err : new Error(String(err)));
    // No permission to read that node: told once, not retried (a retry cannot cure it).
    if (isPermissionError(err)) return;
    const attempt = this.#retries.get(path) ?? 0;
    this.#retries.set(path, attempt + 1);
    delay(backoffDelay(this.options.backoff, attempt), this.options.signal).then(
      () => this.#request(path, list, undefined),
      () => undefined,
    );
  }

  async #load(path: string, job: Job): Promise<void> {
    const liveWalks = [...job.walks].filter((w) => !w.cancelled);
    let stat: Stat | undefined;
    if (this.scope.holds(path)) {
      const read = await this.#unlessRefused(path, () => this.#readNode(path));
      // A watch-setting read waits for its reply even once aborted: a closed cache applies none.
      if (this.options.signal.aborted) return;
      if (!read) return this.#gone(path);
      stat = read.stat;
      this.#apply(path, read.stat, read.data);
    }
    if (!this.scope.listsChildren(path)) return;
    const mustWatch = this.oneShot && !this.#childWatched.has(path);
    if (!job.list && liveWalks.length === 0 && !mustWatch) return;
    let names: string[];
    if (stat && stat.numChildren === 0 && !this.oneShot) names = [];
    else {
      const listed = await this.#unlessRefused(path, () => this.#readChildren(path));
      if (this.options.signal.aborted) return;
      if (!listed) {
        // The node went between the two reads: its deletion's event (or watch) reads it again.
        if (!this.scope.holds(path)) this.#gone(path, false);
        return;
      }
      names = listed;
    }
    const present = new Set(names);
    let walks = liveWalks;
    for (const [i, name] of names.entries()) {
      if (i > 0 && i % FAN_OUT_SLICE === 0) {
        // A wide node (tens of thousands of children): the reads are queued a slice at a time,
        // so the event loop (and the session's loss clock on it) is never held for long.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.options.signal.aborted) return;
        walks = walks.filter((w) => !w.cancelled);
        // The walks this listing served were cut short: the next walk lists the node again.
        if (liveWalks.length > 0 && walks.length === 0) return;
      }
      const child = this.scope.child(path, name);
      if (walks.length > 0) for (const walk of walks) this.#request(child, true, walk);
      else if (!this.store.has(child)) this.#request(child, true, undefined);
    }
    // A held child the listing lacks is read again (not dropped here): its own read decides, in order.
    for (const name of this.store.linkedNames(path)) if (!present.has(name)) this.#request(this.scope.child(path, name), false, undefined);
  }

  /**
   * `read`, except that a node under the root we may not read (another identity's, by its ACL)
   * is as if absent: left out of the cache, reported once per load, not retried (as Curator's
   * TreeCache skips it). A refusal at the root itself is the cache's end: thrown.
   */
  async #unlessRefused<T>(path: string, read: () => Promise<T | undefined>): Promise<T | undefined> {
    try {
      return await read();
    } catch (err) {
      if (path === this.scope.root || !isPermissionError(err)) throw err;
      if (!this.options.signal.aborted) this.host.error(err);
      return undefined;
    }
  }

  /** The node's stat and data, or undefined when it does not exist. */
  async #readNode(path: string): Promise<{ stat: Stat; data: Buffer | undefined } | undefined> {
    const signal = this.options.signal;
    if (this.oneShot && !this.#dataWatched.has(path)) {
      try {
        const w = await this.#limiter.run(() => this.session.getDataWatch(path, { signal }));
        this.#track(this.#dataWatched, path, w);
        return { stat: w.result.stat, data: this.options.cacheData ? w.result.data : undefined };
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
        // Only the root's creation is no parent's child event: watch for it.
        if (path !== this.scope.root) return undefined;
        const w = await this.#limiter.run(() => this.session.existsWatch(path, { signal }));
        this.#track(this.#dataWatched, path, w);
        if (!w.result) return undefined;
      }
    }
    try {
      if (this.options.cacheData) {
        const { stat, data } = await this.#limiter.run(() => this.session.getData(path, { signal }));
        return { stat, data };
      }
      const stat = await this.#limiter.run(() => this.session.exists(path, { signal }));
      return stat ? { stat, data: undefined } : undefined;
    } catch (err) {
      if (err instanceof NoNodeError) return undefined;
      throw err;
    }
  }

  /** The node's child names, or undefined when it does not exist. */
  async #readChildren(path: string): Promise<string[] | undefined> {
    const signal = this.options.signal;
    try {
      if (this.oneShot && !this.#childWatched.has(path)) {
        const w = await this.#limiter.run(() => this.session.getChildrenWatch(path, { signal }));
        this.#track(this.#childWatched, path, w);
        return w.result.children;
      }
      return (await this.#limiter.run(() => this.session.getChildren(path, { signal }))).children;
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      if (this.oneShot && path === this.scope.root && !this.scope.holds(path) && !this.#dataWatched.has(path)) {
        // A children cache's root is not read otherwise: watch for its creation.
        const w = await this.#limiter.run(() => this.session.existsWatch(path, { signal }));
        this.#track(this.#dataWatched, path, w);
        if (w.result) this.#request(path, true, undefined);
      }
      return undefined;
    }
  }

  /** Files a one-shot watch: when it fires the path is read again (and listed, for a child watch). */
  #track(set: Set<string>, path: string, w: Watched<unknown>): void {
    set.add(path);
    const child = set === this.#childWatched;
    w.changed.then(
      (event: WatchEvent) => {
        set.delete(path);
        this.#request(path, child || event.type === 'NODE_CHILDREN_CHANGED', undefined);
      },
      () => set.delete(path),
    );
  }

  /** Applies a read of an existing node: added, changed (its data moved), or nothing. */
  #apply(path: string, stat: Stat, data: Buffer | undefined): void {
    this.#seen.set(path, this.#epoch);
    const previous = this.store.get(path);
    const node: CachedNode = { path, stat, data };
    if (previous) {
      const p = previous.stat;
      if (stat.czxid < p.czxid || (stat.czxid === p.czxid && stat.mzxid < p.mzxid)) return;
      if (stat.czxid > p.czxid) {
        // Deleted and created again: what was held of the old node goes first, its children
        // before it, each event with the copy as it says (an iterator's snapshot may be taken then).
        this.#removeOlder(path, stat.czxid);
        this.store.put(node);
        this.#seen.set(path, this.#epoch);
        return this.host.added(node);
      }
      this.store.put(node);
      if (stat.mzxid > p.mzxid) this.host.changed(node, previous);
      return;
    }
    this.store.put(node);
    this.host.added(node);
  }

  /** The node does not exist: it and what was held under it are removed. */
  #gone(path: string, self = true): void {
    if (self) this.#removeTree(path);
    else for (const name of this.store.linkedNames(path)) this.#removeTree(this.scope.child(path, name));
  }

  /** Removes `path` and its held descendants, deepest first, one at a time (each event with the copy as it says). */
  #removeTree(path: string): void {
    for (const node of this.store.subtree(path)) {
      this.store.removeNode(node.path);
      this.#removed(node);
    }
  }

  /** Removes what is held at and under `path` that was created before `czxid` (a re-created parent's new children stay). */
  #removeOlder(path: string, czxid: bigint): void {
    for (const name of this.store.linkedNames(path)) this.#removeOlder(this.scope.child(path, name), czxid);
    const node = this.store.get(path);
    if (node && node.stat.czxid < czxid) {
      this.store.removeNode(path);
      this.#removed(node);
    }
  }

  #removed(node: CachedNode): void {
    this.#seen.delete(node.path);
    this.host.removed(node);
  }

  /** After a walk: what it did not see existing is gone (unless a read of it is under way). */
  #sweep(epoch: number): void {
    for (const path of [...this.store.paths()]) {
      if (!this.store.has(path) || (this.#seen.get(path) ?? 0) >= epoch || this.#tasks.has(path)) continue;
      this.#removeTree(path);
    }
  }
}

/** Whether an event read's failure needs a retry of its own (connection trouble is followed by a re-read). */
function needsRetry(err: unknown): boolean {
  return !(err instanceof ConnectionLossError || err instanceof SessionExpiredError || err instanceof ClosedError || (err instanceof Error && err.name === 'AbortError'));
}
