/**
 * The distributed queue recipe.
 *
 * @module
 */
export { DistributedQueue } from './queue.js';
export type { DeadLetter } from './dead-letters.js';
export {
  DEFAULT_ERROR_BACKOFF,
  DEFAULT_REDELIVERY_BACKOFF,
  type BackoffOptions,
  type QueueCallOptions,
  type ConsumeHandler,
  type ConsumeOptions,
  type DeadLetterOptions,
  type Delivery,
  type PutOptions,
  type QueueOptions,
  type TakeOptions,
} from './options.js';
