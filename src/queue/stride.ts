/**
 * Consumers' strides through a listing: each item is in the share of one consumer (a hash of
 * its name modulo the number of consumers), so consumers that list the same bucket try
 * different items instead of colliding on its head. Pure: no server, tested as tables.
 *
 * Nothing is ever left to one consumer alone. An item that outlived {@link DEPUTY_ROUNDS}
 * rounds of a consumer (it sat at or before that consumer's frontier then, and is still there:
 * its owner is gone, stopped or slow) is also in the share of its deputy, one other consumer;
 * after {@link ANYONE_ROUNDS} rounds, in everybody's.
 *
 * @internal
 * @module
 */
import { backoffDelay, type Backoff } from '../client/retry.js';

/** A consumer's place among the queue's consumers. */
export interface Place {
  /** Its rank among the consumers, from 0. */
  readonly index: number;
  /** How many there are (itself included). */
  readonly count: number;
}

/** What a stride needs of an item: its name and its sequence number in its bucket. */
export interface Strided {
  readonly name: string;
  readonly seq: number;
}

/** What a consumer should try from one listing. */
export interface Choice<T> {
  /** Ours to try, in order. */
  readonly refs: T[];
  /** None is ours (yet), but the listing has others' items: pause, then look again. */
  readonly others: boolean;
  /** Whether this was a stride (other consumers at work), not everything in order. */
  readonly strided: boolean;
}

/** Rounds an item must outlive in a consumer's listings before its deputy may take it. */
export const DEPUTY_ROUNDS = 2;
/** Rounds an item must outlive in a consumer's listings before any consumer may take it. */
export const ANYONE_ROUNDS = 4;
/** Rounds a consumer keeps striding after it last saw another consumer at work. */
export const ACTIVE_ROUNDS = 4;

/** The consumer (0 to count - 1) whose share an item is in. */
export function shareOf(name: string, count: number): number {
  return fnv(name) % count;
}

/** The consumer that also takes an item its owner left for {@link DEPUTY_ROUNDS} rounds: never the owner. */
export function deputyOf(name: string, count: number): number {
  if (count <= 1) return 0;
  return (shareOf(name, count) + 1 + (fnv(`${name}/deputy`) % (count - 1))) % count;
}

/** FNV-1a, 32 bits: cheap and well spread over names that differ in a few characters. */
function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * One consumer's stride through successive listings of the queue's head bucket. It remembers a
 * few numbers per round (frontiers, the previous listing's top and size), never a listing.
 *
 * A consumer strides only while it sees other consumers at work: items gone from its listing
 * that it did not take, or items it missed. Until then (and {@link ACTIVE_ROUNDS} rounds after
 * it last saw them) it takes everything in order, as a consumer alone: so a lone consumer is
 * strictly FIFO even while the node of one that died is still counted (until its session
 * expires) or one that stopped consuming has not been closed.
 */
export class Stride {
  private key: string | undefined;
  // Frontiers of the last ANYONE_ROUNDS rounds in bucket `key`, oldest first, non-decreasing.
  private frontiers: number[] = [];
  // The previous listing of bucket `key`: its highest sequence and its size; and our takes since.
  private prev: { top: number; size: number } | undefined;
  private taken = 0;
  private round = 0;
  private othersSeen = Number.NEGATIVE_INFINITY;

  /**
   * What to try from one sorted listing of bucket `key`, in order, at most `limit`: while
   * striding, our share and the items overdue for us; else everything, in order.
   */
  pick<T extends Strided>(key: string, refs: readonly T[], place: Place | undefined, limit: number): Choice<T> {
    this.round += 1;
    if (key !== this.key) {
      this.key = key;
      this.frontiers = [];
      this.prev = undefined;
    }
    // Items are only ever added above the previous top: fewer at or below it than we left
    // means someone else took some.
    if (this.prev) {
      const top = this.prev.top;
      const left = refs.reduce((n, r) => (r.seq <= top ? n + 1 : n), 0);
      if (this.prev.size - this.taken > left) this.othersSeen = this.round;
    }
    this.prev = { top: refs.at(-1)?.seq ?? -1, size: refs.length };
    this.taken = 0;
    const strided = place !== undefined && place.count > 1 && this.round - this.othersSeen <= ACTIVE_ROUNDS;
    let picked: T[];
    if (!strided) {
      picked = refs.slice(0, limit);
    } else {
      const { index, count } = place;
      const deputy = this.outlived(DEPUTY_ROUNDS);
      const anyone = this.outlived(ANYONE_ROUNDS);
      picked = [];
      for (const r of refs) {
        if (picked.length >= limit) break;
        if (r.seq <= anyone || shareOf(r.name, count) === index || (r.seq <= deputy && deputyOf(r.name, count) === index)) picked.push(r);
      }
    }
    // With nothing of ours, we looked at the whole listing: all of it starts to age for us.
    const frontier = (picked.length > 0 ? picked : refs).at(-1)?.seq ?? -1;
    this.frontiers.push(Math.max(frontier, this.frontiers.at(-1) ?? -1));
    if (this.frontiers.length > ANYONE_ROUNDS) this.frontiers.shift();
    return { refs: picked, others: picked.length === 0 && refs.length > 0, strided };
  }

  /** We took (or claimed) an item of the last listing. */
  took(): void {
    this.taken += 1;
  }

  /** Someone else took an item before us: another consumer is at work. */
  collided(): void {
    this.othersSeen = this.round;
  }

  /** Items up to this sequence outlived `rounds` of our rounds (-1: none yet). */
  private outlived(rounds: number): number {
    return this.frontiers.length >= rounds ? (this.frontiers[this.frontiers.length - rounds] as number) : -1;
  }
}

/** The pauses of a {@link Pace}: 1 ms, doubling, at most 16 ms (each jittered, as every backoff). */
export const PACE: Backoff = { baseDelayMs: 1, maxDelayMs: 16 };
/** The items a consumer's listings should find for it: one listing for every two takes. */
export const PACE_TARGET = 2;

/**
 * How long a consumer among several waits before it lists again. One that lists faster than its
 * share of the items arrives pays a listing for each item or more: it does better to wait and
 * find two at once. The pause grows a step (doubling, see {@link PACE}) after a listing that
 * found fewer than {@link PACE_TARGET} items for us, shrinks a step after one that found more,
 * and is zero while our listings find a backlog, and for a consumer alone.
 */
export class Pace {
  // -1: no pause; k: the k-th step of PACE.
  private step = -1;
  private readonly maxStep = Math.ceil(Math.log2(PACE.maxDelayMs / PACE.baseDelayMs));

  /** The pause before the next listing, ms (0: none). */
  delayMs(random: () => number = Math.random): number {
    return this.step < 0 ? 0 : backoffDelay(PACE, this.step, random);
  }

  /** A listing found `found` items for us. */
  found(found: number): void {
    if (found < PACE_TARGET) this.step = Math.min(this.maxStep, this.step + 1);
    else if (found > PACE_TARGET) this.step = Math.max(-1, this.step - 1);
  }

  /** No pause: a consumer alone, or one that does not know its place, lists again at once. */
  reset(): void {
    this.step = -1;
  }
}
