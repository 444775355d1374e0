/**
 * `zkr queue` (to come).
 *
 * @internal
 * @module
 */
import type { QueueCommand } from './args.js';
import { EXIT } from './exit-codes.js';

/** Runs `zkr queue`. @internal */
export function runQueue(_cmd: QueueCommand): Promise<number> {
  process.stderr.write('zkr: queue is not available yet\n');
  return Promise.resolve(EXIT.software);
}
