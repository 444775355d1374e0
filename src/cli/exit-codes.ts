/**
 * The exit codes of `zkr` (docs/cli.md has the table users read). A child's own status passes
 * through unchanged; the codes below are those `zkr` chooses itself. They follow flock(1) and
 * sysexits(3) so scripts can tell "busy" from "broken".
 *
 * @internal
 * @module
 */
import { constants } from 'node:os';

/** Exit codes `zkr` chooses itself (a child's own status passes through). @internal */
export const EXIT = {
  /** Busy (`-n`) or timed out (`-w`): the default of `-E/--conflict-exit-code`. */
  conflict: 1,
  /** A usage error: unknown option, bad value, a kill grace that cannot fit the session (EX_USAGE). */
  usage: 64,
  /** The path holds another recipe's nodes (a lock path used as a semaphore, say) (EX_DATAERR). */
  dataError: 65,
  /** ZooKeeper could not be reached within the connect timeout (EX_UNAVAILABLE). */
  unavailable: 69,
  /** Something unexpected went wrong in `zkr` itself (EX_SOFTWARE). */
  software: 70,
  /** The lock, lease or leadership was lost while the command ran; it was killed (EX_TEMPFAIL). */
  lost: 75,
  /** ZooKeeper refused us: authentication failed, or no permission on the path (EX_NOPERM). */
  noPermission: 77,
  /** The TLS handshake was refused (a CA, certificate, key or host name that does not match; a plain port) (EX_CONFIG). */
  config: 78,
  /** The command was found but could not be run (as the shell says it). */
  cannotExecute: 126,
  /** The command was not found (as the shell says it). */
  notFound: 127,
} as const;

/** 128 + the signal's number, as a shell reports a process a signal ended. @internal */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}
