/**
 * Atomic numbers: Curator's `DistributedAtomicLong`.
 *
 * @module
 */
export { AtomicNumber } from './atomic-number.js';
export type { AtomicCallOptions, AtomicNumberOptions, AtomicRetryOptions, AtomicStats, AtomicValue, PromoteToLockOptions } from './atomic-number.js';
