/**
 * `zkr watch` (to come).
 *
 * @internal
 * @module
 */
import type { WatchCommand } from './args.js';
import { EXIT } from './exit-codes.js';

/** Runs `zkr watch`. @internal */
export function runWatch(_cmd: WatchCommand): Promise<number> {
  process.stderr.write('zkr: watch is not available yet\n');
  return Promise.resolve(EXIT.software);
}
