/**
 * Reading a queue in order: the lowest priority first, within it the oldest bucket first,
 * within a bucket by sequence. Lists one bucket at a time and never one too large to list.
 * Every read honours the caller's signal (a read given up on is simply not waited for).
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { BadVersionError, NoNodeError, NotEmptyError, QueueLayoutError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import { bucketName, MAX_LISTING, parseBucket, parsePriority, priorityDir, sortItems } from './layout.js';

/** An item's place: its priority directory, bucket and name. */
export interface ItemRef {
  readonly pdir: string;
  readonly bucket: string;
  readonly name: string;
  readonly path: string;
}

/** Where idle consumers watch for new items: these directories' children. */
export interface WatchPoints {
  readonly dirs: readonly string[];
}

/** A consumer's view of the head of the queue, refreshed on demand. */
export class Cursor {
  private cache: ItemRef[] = [];
  private misses = 0;
  // The bucket the last listing came from: usually still the head, so look there first.
  private last: { pdir: string; bucket: string } | undefined;

  constructor(
    private readonly session: ZkSession,
    private readonly items: string,
  ) {}

  /**
   * The next candidate item, or undefined when the queue is empty. With one consumer this is
   * always the head (strict FIFO); after collisions with other consumers it picks at random
   * among the first few, so consumers stop fighting over the same item.
   */
  async next(signal?: AbortSignal): Promise<ItemRef | undefined> {
    if (this.cache.length === 0 || this.misses >= 2) await this.refresh(signal);
    if (this.cache.length === 0) return undefined;
    const index = this.misses === 0 ? 0 : Math.floor(Math.random() * Math.min(this.cache.length, 16));
    const [ref] = this.cache.splice(index, 1);
    return ref;
  }

  /** A fresh listing of the head bucket, in order (the cursor's own pick state is reset). */
  async all(signal?: AbortSignal): Promise<ItemRef[]> {
    await this.refresh(signal);
    return [...this.cache];
  }

  /** A fresh listing of the first bucket with items `keep` accepts, in order, filtered. */
  async allWhere(keep: (ref: ItemRef) => boolean, signal?: AbortSignal): Promise<ItemRef[]> {
    await this.refreshWhere(keep, signal);
    return [...this.cache];
  }

  /** The candidate was taken by someone else. */
  missed(): void {
    this.misses += 1;
  }

  /** The candidate was ours. */
  hit(): void {
    this.misses = 0;
  }

  /** Forgets the cached listing (after a wake-up). */
  invalidate(): void {
    this.cache = [];
  }

  /** Lists the lowest non-empty bucket; reaps drained buckets that are not a tail. */
  async refresh(signal?: AbortSignal): Promise<void> {
    await this.refreshWhere(() => true, signal);
  }

  /**
   * Lists the lowest bucket that has items `keep` accepts (at-least-once consumers skip claimed
   * items, so a bucket whose items are all claimed does not block the ones behind it).
   */
  async refreshWhere(keep: (ref: ItemRef) => boolean, signal?: AbortSignal): Promise<void> {
    this.misses = 0;
    this.cache = [];
    // Fast path: the bucket we read last still has items, and nothing of a lower priority
    // appeared (a put only ever goes to a tail bucket). One listing instead of walking the tree.
    if (this.last && (await this.priorities(signal))[0] === this.last.pdir && (await this.list(this.last.pdir, this.last.bucket, keep, signal))) return;
    for (const pdir of await this.priorities(signal)) {
      const buckets = await this.children(`${this.items}/${pdir}`, parseBucket, signal);
      for (const [i, b] of buckets.entries()) {
        const bucket = bucketName(b);
        const dir = `${this.items}/${pdir}/${bucket}`;
        const stat = await raceAbort(this.session.exists(dir), signal);
        if (!stat) continue;
        if (stat.numChildren > MAX_LISTING) {
          throw new QueueLayoutError(`queue bucket ${dir} has ${stat.numChildren} children, more than can be listed safely (${MAX_LISTING}); refusing to list it`, { path: dir });
        }
        if (stat.numChildren === 0) {
          // Drained and not the newest (sealed, unless an older version moved on): remove it.
          // A put that landed since makes the delete fail NotEmpty: list it then, never skip it
          // (idle consumers watch only the newest bucket, so an item skipped here would wait
          // for the next put).
          if (i === buckets.length - 1 || (await this.reap(dir, stat.version, signal))) continue;
        }
        if (await this.list(pdir, bucket, keep, signal)) return;
      }
    }
    this.last = undefined;
  }

  /** Deletes a drained bucket; false when it is not empty after all (an item landed). */
  private async reap(dir: string, version: number, signal: AbortSignal | undefined): Promise<boolean> {
    try {
      await raceAbort(this.session.delete(dir, { version }), signal);
      return true;
    } catch (err) {
      if (err instanceof NoNodeError) return true; // reaped by another consumer
      if (err instanceof NotEmptyError || err instanceof BadVersionError) return false; // changed: look
      throw err;
    }
  }

  /** Lists one bucket into the cache; false when it has no items `keep` accepts (or is gone). */
  private async list(pdir: string, bucket: string, keep: (ref: ItemRef) => boolean, signal?: AbortSignal): Promise<boolean> {
    const dir = `${this.items}/${pdir}/${bucket}`;
    let children: string[];
    try {
      children = (await raceAbort(this.session.getChildren(dir), signal)).children;
    } catch (err) {
      if (err instanceof NoNodeError) return false;
      throw err;
    }
    const refs = sortItems(children)
      .map((name) => ({ pdir, bucket, name, path: `${dir}/${name}` }))
      .filter(keep);
    if (refs.length === 0) return false;
    this.cache = refs;
    this.last = { pdir, bucket };
    return true;
  }

  /** Directories whose children change when an item is put anywhere (for idle consumers). */
  async watchPoints(signal?: AbortSignal): Promise<WatchPoints> {
    const dirs = [this.items];
    for (const pdir of await this.priorities(signal)) {
      dirs.push(`${this.items}/${pdir}`);
      const buckets = await this.children(`${this.items}/${pdir}`, parseBucket, signal);
      const tail = buckets[buckets.length - 1];
      if (tail !== undefined) dirs.push(`${this.items}/${pdir}/${bucketName(tail)}`);
    }
    return { dirs };
  }

  /** Number of items (sum over buckets; claimed items included). */
  async size(signal?: AbortSignal): Promise<number> {
    let total = 0;
    for (const pdir of await this.priorities(signal)) {
      const buckets = await this.children(`${this.items}/${pdir}`, parseBucket, signal);
      const stats = await raceAbort(Promise.all(buckets.map((b) => this.session.exists(`${this.items}/${pdir}/${bucketName(b)}`))), signal);
      for (const st of stats) total += st?.numChildren ?? 0;
    }
    return total;
  }

  private async priorities(signal?: AbortSignal): Promise<string[]> {
    return (await this.children(this.items, parsePriority, signal)).map(priorityDir);
  }

  private async children(dir: string, parse: (name: string) => number | undefined, signal?: AbortSignal): Promise<number[]> {
    try {
      return (await raceAbort(this.session.getChildren(dir), signal)).children
        .map(parse)
        .filter((n): n is number => n !== undefined)
        .sort((a, b) => a - b);
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
  }
}
