/**
 * Shared values and counts: Curator's `SharedValue` and `SharedCount`.
 *
 * @module
 */
export { SharedBase, SharedCount, SharedValue } from './shared-value.js';
export type { SharedIteratorOptions, SharedValueEvents, SharedValueOptions, SharedWaitOptions, VersionedValue } from './shared-value.js';
