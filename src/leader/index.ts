/**
 * Leader election recipes: {@link LeaderLatch} and {@link LeaderSelector}.
 *
 * @module
 */
export { LeaderLatch, type LeaderLatchEvents, type LeaderLatchOptions, type LeaderParticipant, type LeadershipPolicy, type LeaderWaitOptions } from './latch.js';
export { LeaderSelector, type LeaderTerm, type RunOptions } from './selector.js';
