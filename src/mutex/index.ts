/**
 * The distributed mutex recipe.
 *
 * @module
 */
export { Mutex, type MutexOptions } from './mutex.js';
