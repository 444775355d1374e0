#!/usr/bin/env node
/**
 * `zkr`: run a command under a ZooKeeper lock, semaphore lease or leadership, and kill it
 * before anyone else can be granted; also inspect recipes, use a queue, watch a tree. The
 * package's `bin`. Usage: docs/cli.md, or `zkr --help`.
 *
 * @internal
 * @module
 */
import { parseArgs, UsageError, type Command } from './args.js';
import { EXIT } from './exit-codes.js';
import { helpText } from './help.js';

async function dispatch(cmd: Command): Promise<number> {
  switch (cmd.kind) {
    case 'help':
      process.stdout.write(helpText(cmd.subcommand));
      return 0;
    case 'run':
      return (await import('./hold.js')).runHeld(cmd);
    case 'observe':
      return (await import('./observe.js')).runObserve(cmd);
    case 'inspect':
      return (await import('./inspect.js')).runInspect(cmd);
    case 'queue':
      return (await import('./queue.js')).runQueue(cmd);
    case 'watch':
      return (await import('./watch.js')).runWatch(cmd);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let cmd: Command;
  try {
    cmd = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`zkr: ${err.message}\nTry 'zkr ${err.subcommand ? `${err.subcommand} ` : ''}--help'.\n`);
    return EXIT.usage;
  }
  return dispatch(cmd);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`zkr: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(EXIT.software);
  },
);
