/**
 * The distributed counting semaphore recipe.
 *
 * @module
 */
export { Semaphore, type SemaphoreOptions } from './semaphore.js';
