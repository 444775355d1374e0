/**
 * Predicates: the only thing a recipe contributes to acquisition. Pure functions of the sorted
 * queue and our position; tested as plain tables, without a server.
 *
 * @module
 */
import { describe } from '../client/validate.js';
import { InvalidArgumentError } from '../errors.js';
import type { QueueNode } from './names.js';

/** A predicate's verdict: we hold. */
export interface Hold {
  /** We hold (a lease of) the lock. */
  readonly hold: true;
}

/** A predicate's verdict: wait until one of these nodes goes. */
export interface WaitOn {
  /** We do not hold yet. */
  readonly hold: false;
  /** Names of the nodes to watch; a deletion among them is the only event that can promote us. */
  readonly waitOn: readonly string[];
  /**
   * How many of `waitOn` must be gone for us to hold, the rest of the queue as listed (nodes
   * only ever leave the part ahead of ours, so by monotonicity we hold then whatever else left);
   * undefined when their deletion alone can never promote us (others ahead must go too, and we
   * are not told of them: list again). This is all a waiter keeps of a listing, so N waiters
   * hold O(N) state, not N listings.
   */
  readonly holdsAfter: number | undefined;
}

/** What a predicate decides: we hold, or the nodes (names) to wait on. */
export type Decision = Hold | WaitOn;

/**
 * Decides for the participant whose `count` adjacent nodes start at `index` of `queue` (sorted,
 * filtered). Must be monotone: if it holds with some predecessors, it holds with any subset of
 * them, because the driver grants on `holdsAfter` deletions among the watched nodes without
 * listing again (it keeps nothing else of the listing). And it must keep the head rule: once a
 * node it waits on is gone, having been the head of the queue (nothing ahead of it), it holds
 * whatever else between that node and ours is still there, because the driver grants then too
 * (when this process knows that node was the head, see `heads.ts`).
 */
export type Predicate = (queue: readonly QueueNode[], index: number, count: number) => Decision;

const HOLD: Decision = { hold: true };

/**
 * Mutex (`maxLeases` 1) and semaphore: `count` leases are held once fewer than
 * `maxLeases - count + 1` nodes precede ours; otherwise wait on exactly those nodes
 * immediately before ours. While all of them exist at least that many nodes precede ours, so a
 * deletion inside the window is the only event that can promote us: no missed wakeup, and a
 * release wakes at most `maxLeases` waiters, never the whole queue.
 */
export function windowPredicate(maxLeases: number): Predicate {
  if (!Number.isInteger(maxLeases) || maxLeases < 1) throw new InvalidArgumentError(`windowPredicate: maxLeases must be an integer >= 1, got ${describe(maxLeases)}`);
  return (queue, index, count) => {
    const window = maxLeases - count + 1;
    if (index < window) return HOLD;
    // We hold once index - window + 1 nodes ahead are gone: possible from the window alone
    // only when that is no more than the window.
    const needed = index - window + 1;
    return { hold: false, waitOn: queue.slice(index - window, index).map((n) => n.name), holdsAfter: needed <= window ? needed : undefined };
  };
}

/**
 * Read lock: held when no write node precedes ours; otherwise wait on the nearest preceding
 * write node (readers queued behind a waiting writer wait too: no writer starvation).
 */
export function readPredicate(writeKind: string): Predicate {
  if (typeof writeKind !== 'string' || writeKind === '') throw new InvalidArgumentError(`readPredicate: writeKind must be a non-empty string, got ${describe(writeKind)}`);
  return (queue, index) => {
    for (let i = index - 1; i >= 0; i--) {
      const n = queue[i];
      if (n?.kind !== writeKind) continue;
      // Once it is gone we hold, unless another write node is ahead of it.
      const another = queue.slice(0, i).some((p) => p.kind === writeKind);
      return { hold: false, waitOn: [n.name], holdsAfter: another ? undefined : 1 };
    }
    return HOLD;
  };
}

/** Write lock: a mutex over all nodes, readers and writers alike. */
export const writePredicate: Predicate = windowPredicate(1);
