/**
 * The distributed queue recipe.
 *
 * @module
 */
export { DistributedQueue, type ConsumeOptions, type Delivery, type PutOptions, type QueueOptions, type TakeOptions } from './queue.js';
