/**
 * `zkr observe` (to come).
 *
 * @internal
 * @module
 */
import type { ObserveCommand } from './args.js';
import { EXIT } from './exit-codes.js';

/** Runs `zkr observe`. @internal */
export function runObserve(_cmd: ObserveCommand): Promise<number> {
  process.stderr.write('zkr: observe is not available yet\n');
  return Promise.resolve(EXIT.software);
}
