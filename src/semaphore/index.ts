/**
 * The distributed counting semaphore recipe.
 *
 * @module
 */
export { Semaphore, type SemaphoreLayout, type SemaphoreOptions } from './semaphore.js';
