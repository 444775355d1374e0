// node:util's parseArgs for the bench and the scripts beside it (bench:compare, ab-builds,
// heap-per-item): bad input (an unknown option, a value that looks like an option, such as
// `--runs -1`) gets its message and exit code 2, as their own checks do, not a stack trace.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Parses `config` as parseArgs does; on bad input prints `name: message` (and `usage`), exits 2. */
export function parseArgsOrExit<T extends ParseArgsConfig>(name: string, config: T, usage?: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    console.error(`${name}: ${(err as Error).message}`);
    if (usage) console.error(usage);
    process.exit(2);
  }
}
