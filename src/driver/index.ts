/**
 * The lock driver shared by every recipe, its predicates and the lock handle.
 *
 * @module
 */
export { LockHandle } from './handle.js';
export type { AcquireOptions, LockEvents, LockOptions, LossPolicy, Participant, TryAcquireOptions } from './lock-recipe.js';
export { LockRecipe } from './lock-recipe.js';
export { compareSeq, parseNode, protectedPrefix, sortChildren, type QueueNode } from './names.js';
export { readPredicate, windowPredicate, writePredicate, type Decision, type Hold, type Predicate, type WaitOn } from './predicates.js';
