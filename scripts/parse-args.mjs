// node:util's parseArgs, but bad input (an unknown option, a value that looks like an option,
// such as `--runs -1`) gets its message and exit code 2, as the scripts' own checks do, not a
// stack trace.
import { parseArgs } from 'node:util';

/** Parses `config` as parseArgs does; on bad input prints `name: message` and `usage`, exits 2. */
export function parseArgsOrExit(name, config, usage) {
  try {
    return parseArgs(config);
  } catch (err) {
    console.error(`${name}: ${err.message}`);
    if (usage) console.error(usage);
    process.exit(2);
  }
}
