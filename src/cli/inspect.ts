/**
 * `zkr inspect` (to come).
 *
 * @internal
 * @module
 */
import type { InspectCommand } from './args.js';
import { EXIT } from './exit-codes.js';

/** Runs `zkr inspect`. @internal */
export function runInspect(_cmd: InspectCommand): Promise<number> {
  process.stderr.write('zkr: inspect is not available yet\n');
  return Promise.resolve(EXIT.software);
}
