/**
 * The frame of the subcommands that run no child (`inspect`, `queue`, `watch`,
 * `elect --observe`): a session opened from the connect options, the first TERM, INT, HUP,
 * QUIT, USR1 or USR2 ending the work (exit 128 + N, or 0 for the ones that run until stopped),
 * errors mapped to exit codes, and the session closed whatever happens.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { ConnectOptions } from './args.js';
import { describeFailure, openSession, SignalStop } from './connect.js';
import { signalExitCode } from './exit-codes.js';
import { Reporter } from './report.js';
import { SignalRouter } from './signals.js';

/** Runs `work` with a session and a signal that aborts on the first signal to `zkr`. @internal */
export async function withSession(
  o: ConnectOptions,
  what: string,
  work: (session: ZkSession, signal: AbortSignal, reporter: Reporter) => Promise<number>,
  /** The exit code when a signal stops `work` (default 128 + N): 0 for what runs until stopped. */
  stoppedCode?: (signal: NodeJS.Signals) => number,
): Promise<number> {
  const reporter = new Reporter(o.verbose, undefined);
  const signals = new SignalRouter();
  const stop = new AbortController();
  signals.route((s) => stop.abort(new SignalStop(s)));
  let session: ZkSession | undefined;
  try {
    session = await openSession(o, reporter, stop.signal);
    return await work(session, stop.signal, reporter);
  } catch (err) {
    const reason = stop.signal.aborted ? stop.signal.reason : err;
    if (reason instanceof SignalStop) return (stoppedCode ?? signalExitCode)(reason.signal);
    const failure = describeFailure(reason, what);
    reporter.error(failure.message);
    return failure.code;
  } finally {
    await session?.close();
    signals.dispose();
  }
}

/** Writes `text` to stdout and resolves once it is flushed (before `zkr` exits). @internal */
export function out(text: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once('drain', () => resolve());
  });
}
