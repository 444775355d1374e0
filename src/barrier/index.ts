export { Barrier, type BarrierOptions } from './barrier.js';
export { DoubleBarrier, type DoubleBarrierOptions, type DoubleBarrierState } from './double-barrier.js';
export type { BarrierWaitOptions } from './common.js';
