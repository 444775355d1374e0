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
}

/** What a predicate decides: we hold, or the nodes (names) to wait on. */
export type Decision = Hold | WaitOn;

/**
 * Decides for the participant whose `count` adjacent nodes start at `index` of `queue` (sorted,
 * filtered). Must be monotone: if it holds with some predecessors, it holds with any subset of
 * them, because the driver re-evaluates it on a snapshot minus the deletions it was told of.
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
    return { hold: false, waitOn: queue.slice(index - window, index).map((n) => n.name) };
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
      if (n?.kind === writeKind) return { hold: false, waitOn: [n.name] };
    }
    return HOLD;
  };
}

/** Write lock: a mutex over all nodes, readers and writers alike. */
export const writePredicate: Predicate = windowPredicate(1);
