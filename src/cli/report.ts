/**
 * What `zkr` tells its operator: errors (one line on stderr, always), state changes (with
 * `--verbose`, timestamped), and the state in `--status-file` (one word and a newline, replaced
 * atomically: waiting, held, lost, released).
 *
 * @internal
 * @module
 */
import { renameSync, writeFileSync } from 'node:fs';

/** The states written to `--status-file`. @internal */
export type Status = 'waiting' | 'held' | 'lost' | 'released';

/** Prints and records what `zkr` does. @internal */
export class Reporter {
  constructor(
    private readonly verboseOn: boolean,
    private readonly statusFile: string | undefined,
  ) {}

  /** An error: always printed, one line. */
  error(message: string): void {
    process.stderr.write(`zkr: ${message}\n`);
  }

  /** A state change: printed with `--verbose`, with the time. */
  verbose(message: string): void {
    if (this.verboseOn) process.stderr.write(`zkr ${new Date().toISOString()} ${message}\n`);
  }

  /** Records `status` in the status file (if any); a failure to write is reported, never fatal. */
  status(status: Status): void {
    if (!this.statusFile) return;
    const tmp = `${this.statusFile}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${status}\n`);
      renameSync(tmp, this.statusFile);
    } catch (err) {
      this.error(`cannot write --status-file ${this.statusFile}: ${(err as Error).message}`);
    }
  }
}
