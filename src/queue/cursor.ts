/**
 * Reading a queue in order: the lowest priority first, within it the oldest bucket first,
 * within a bucket by sequence. Lists one bucket at a time and never one too large to list, and
 * keeps only what this consumer will try of it (its stride, see {@link Stride}, at most
 * {@link KEPT} items). Every read and pause honours the caller's signal (a read given up on is
 * simply not waited for).
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { BadVersionError, NoNodeError, NotEmptyError, QueueLayoutError } from '../errors.js';
import { delay, raceAbort } from '../util/abort.js';
import { bucketName, itemSeq, MAX_LISTING, parseBucket, parsePriority, priorityDir, sortItems } from './layout.js';
import type { Members } from './members.js';
import { ANYONE_ROUNDS, Pace, Stride, type Choice, type Place } from './stride.js';

/** An item's place: its priority directory, bucket and name (and sequence number in the bucket). */
export interface ItemRef {
  readonly pdir: string;
  readonly bucket: string;
  readonly name: string;
  readonly path: string;
  readonly seq: number;
}

/** Where idle consumers watch for new items: these directories' children. */
export interface WatchPoints {
  readonly dirs: readonly string[];
}

/** The first bucket with items to consider, those items in order, and our place among consumers. */
interface Head {
  readonly pdir: string;
  readonly bucket: string;
  readonly refs: ItemRef[];
  readonly place: Place | undefined;
}

/** A listing of the items directory: priority directories and consumers' nodes. */
interface Top {
  readonly children: readonly string[];
  /** When it was asked for (`performance.now()`). */
  readonly at: number;
  /** The priority directories, lowest first. */
  readonly pdirs: readonly string[];
  /** Reused from an earlier call. */
  readonly reused: boolean;
}

/**
 * How long a consumer that keeps listing the same bucket reuses its listing of the items
 * directory: a new priority directory, or a consumer joining or leaving, is noticed this much
 * later at most, and a busy consumer's listing costs one request instead of two.
 */
const TOP_REUSE_MS = 100;

/** Items a consumer keeps from one listing: never a whole bucket, whatever the queue's length. */
const KEPT = 256;
/** After a collision, the next pick is at random among this many. */
const SPREAD = 16;

/**
 * How a consumer reads: its stride (`'stride'`, see {@link Stride}), or everything in order
 * (`'alone'`: at the head of the idle line, where the other idle consumers wait behind it).
 */
export type Reader = 'stride' | 'alone';

/**
 * How a consumer reads after `looks` listings in a row that had only others' items for it: as
 * asked, then (after {@link ANYONE_ROUNDS} of them) everything in order, so that a call never
 * waits on others' items for long (a poll answers, a take or consume goes on or idles).
 */
export function readerAfter(reader: Reader, looks: number): Reader {
  return looks >= ANYONE_ROUNDS ? 'alone' : reader;
}

/** A consumer's view of the head of the queue, refreshed on demand. */
export class Cursor {
  private cache: ItemRef[] = [];
  private cacheReader: Reader = 'stride';
  private misses = 0;
  // The bucket the last listing came from: usually still the head, so look there first.
  private last: { pdir: string; bucket: string } | undefined;
  // The last listing of the items directory.
  private recent: Top | undefined;
  private readonly stride = new Stride();
  private readonly pace = new Pace();

  constructor(
    private readonly session: ZkSession,
    private readonly items: string,
    private readonly members: Members,
  ) {}

  /**
   * The next candidate item, or undefined when the queue is empty: the head (strict FIFO) for a
   * consumer alone, or one that sees no other consumer at work; with several at work, the head
   * of our stride (see {@link Stride}), after a pause when our last listings had little for us
   * (see {@link Pace}). After collisions it picks at random among the first few.
   */
  async next(signal: AbortSignal | undefined, reader: Reader): Promise<ItemRef | undefined> {
    if (this.cacheReader !== reader) this.cache = [];
    for (let looks = 0; this.cache.length === 0 || this.misses >= 2; looks++) {
      if (reader === 'stride') await this.pause(signal);
      const as = readerAfter(reader, looks);
      const choice = await this.share(() => true, signal, as);
      this.cache = choice.refs;
      this.cacheReader = as;
      if (!choice.others) break;
    }
    if (this.cache.length === 0) return undefined;
    const index = this.misses === 0 ? 0 : Math.floor(Math.random() * Math.min(this.cache.length, SPREAD));
    const [ref] = this.cache.splice(index, 1);
    return ref;
  }

  /** Waits as long as our pace says before a consumer among several lists again. */
  async pause(signal: AbortSignal | undefined): Promise<void> {
    const ms = this.pace.delayMs();
    if (ms > 0) await delay(ms, signal);
  }

  /**
   * A fresh listing of the first bucket with items `keep` accepts (at-least-once consumers skip
   * claimed items, so a bucket whose items are all claimed does not block the ones behind it),
   * and what of it this consumer should try, in order.
   */
  async share(keep: (ref: ItemRef) => boolean, signal: AbortSignal | undefined, reader: Reader): Promise<Choice<ItemRef>> {
    this.misses = 0;
    const head = await this.head(keep, reader, signal);
    if (!head) return { refs: [], others: false, strided: false };
    const pick = this.stride.pick(`${head.pdir}/${head.bucket}`, head.refs, head.place, KEPT);
    if (pick.strided) this.pace.found(pick.refs.length);
    else this.pace.reset();
    return pick;
  }

  /** A fresh listing of the head bucket, in order (for peek: joins nothing, changes no stride). */
  async all(signal?: AbortSignal): Promise<ItemRef[]> {
    return (await this.head(() => true, 'peek', signal))?.refs ?? [];
  }

  /** The candidate was taken by someone else. */
  missed(): void {
    this.misses += 1;
    this.stride.collided();
  }

  /** The candidate was ours. */
  hit(): void {
    this.misses = 0;
    this.stride.took();
  }

  /** Forgets the cached listings (after a wake-up). */
  invalidate(): void {
    this.cache = [];
    this.recent = undefined;
  }

  /**
   * Lists the lowest bucket that has items `keep` accepts; reaps drained buckets that are not a
   * tail. A consumer among others (`stride`) also learns its place among consumers from the
   * listing of the items directory, and joins them if it is not there.
   */
  private async head(keep: (ref: ItemRef) => boolean, reader: Reader | 'peek', signal?: AbortSignal): Promise<Head | undefined> {
    let top = await this.top(reader !== 'peek' && this.last !== undefined, signal);
    const placeIn = (t: Top): Promise<Place | undefined> => (reader === 'stride' ? this.members.place(t.children, t.at, signal) : Promise.resolve(undefined));
    // Fast path: the bucket we read last still has items, and nothing of a lower priority
    // appeared (a put only ever goes to a tail bucket). One listing instead of walking the tree.
    if (top && this.last && top.pdirs[0] === this.last.pdir) {
      const refs = await this.list(this.last.pdir, this.last.bucket, keep, signal);
      if (refs) return { ...this.last, refs, place: await placeIn(top) };
    }
    if (top?.reused) top = await this.top(false, signal); // the tree is walked from a fresh look
    if (top === undefined) {
      this.last = undefined;
      return undefined; // nothing was ever put
    }
    for (const pdir of top.pdirs) {
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
        const refs = await this.list(pdir, bucket, keep, signal);
        if (refs) return { pdir, bucket, refs, place: await placeIn(top) };
      }
    }
    this.last = undefined;
    return undefined;
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

  /** Lists one bucket, in order; undefined when it has no items `keep` accepts (or is gone). */
  private async list(pdir: string, bucket: string, keep: (ref: ItemRef) => boolean, signal?: AbortSignal): Promise<ItemRef[] | undefined> {
    const dir = `${this.items}/${pdir}/${bucket}`;
    let children: string[];
    try {
      children = (await raceAbort(this.session.getChildren(dir), signal)).children;
    } catch (err) {
      if (err instanceof NoNodeError) return undefined;
      throw err;
    }
    const refs = sortItems(children)
      .map((name) => ({ pdir, bucket, name, path: `${dir}/${name}`, seq: itemSeq(name) as number }))
      .filter(keep);
    if (refs.length === 0) return undefined;
    this.last = { pdir, bucket };
    return refs;
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
    return numbers((await this.childrenOf(dir, signal)) ?? [], parse);
  }

  /**
   * The listing of the items directory (priorities and consumers); undefined when it does not
   * exist. With `reuse`, one made less than {@link TOP_REUSE_MS} ago is reused.
   */
  private async top(reuse: boolean, signal?: AbortSignal): Promise<Top | undefined> {
    const recent = this.recent;
    if (reuse && recent && performance.now() - recent.at < TOP_REUSE_MS) return { ...recent, reused: true };
    const at = performance.now();
    const children = await this.childrenOf(this.items, signal);
    this.recent = children === undefined ? undefined : { children, at, pdirs: numbers(children, parsePriority).map(priorityDir), reused: false };
    return this.recent;
  }

  /** Children of `dir`; undefined when it does not exist. */
  private async childrenOf(dir: string, signal?: AbortSignal): Promise<string[] | undefined> {
    try {
      return (await raceAbort(this.session.getChildren(dir), signal)).children;
    } catch (err) {
      if (err instanceof NoNodeError) return undefined;
      throw err;
    }
  }
}

/** The numbers `parse` finds in `names` (foreign names dropped), ascending. */
function numbers(names: readonly string[], parse: (name: string) => number | undefined): number[] {
  return names
    .map(parse)
    .filter((n): n is number => n !== undefined)
    .sort((a, b) => a - b);
}
