/**
 * Opens the session of a `zkr` run from its connect options, and maps what went wrong to an
 * exit code and one line for the operator (credentials never appear in either).
 *
 * @internal
 * @module
 */
import { ZkSession } from '../client/session.js';
import { ClosedError, InvalidArgumentError, LayoutMismatchError, LockTimeoutError, NoAuthError, OperationTimeoutError, ZkRecipesError, ZooKeeperError } from '../errors.js';
import type { ConnectOptions } from './args.js';
import { EXIT } from './exit-codes.js';
import type { Reporter } from './report.js';

/** An error that ends `zkr` with `code` after printing `message`. @internal */
export class ExitError extends Error {
  constructor(
    /** The exit code. */
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'ExitError';
  }
}

/** A stop asked by a signal: ends a wait, and `zkr` exits 128 + N. @internal */
export class SignalStop extends Error {
  constructor(
    /** The signal received. */
    readonly signal: NodeJS.Signals,
  ) {
    super(`stopped by ${signal}`);
    this.name = 'SignalStop';
  }
}

/**
 * Connects within the connect timeout. Rejects with {@link ExitError} (69 unreachable, 77
 * authentication refused, 64 a connect string the session refuses) or the signal's reason.
 */
export async function openSession(o: ConnectOptions, reporter: Reporter, signal: AbortSignal): Promise<ZkSession> {
  reporter.verbose(`connecting to ${o.connect}${o.auth.length > 0 ? ` with ${o.auth.map((a) => `${a.scheme}:***`).join(', ')}` : ''}`);
  let authFailed = false;
  let session: ZkSession;
  try {
    session = new ZkSession(o.connect, { sessionTimeoutMs: o.sessionTimeoutMs, connectTimeoutMs: o.connectTimeoutMs, auth: o.auth, spinDelayMs: 100 });
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new ExitError(EXIT.usage, `--connect ${o.connect}: ${err.message}`);
    throw err;
  }
  const onError = (err: Error): void => {
    if (err instanceof ZooKeeperError && err.code === 'AUTH_FAILED') authFailed = true;
  };
  session.on('error', onError);
  try {
    await session.waitConnected({ timeoutMs: o.connectTimeoutMs, signal });
  } catch (err) {
    await session.close();
    if (signal.aborted) throw signal.reason;
    if (authFailed) throw new ExitError(EXIT.noPermission, `ZooKeeper at ${o.connect} refused the credentials given with --auth`);
    if (err instanceof OperationTimeoutError || err instanceof ClosedError) {
      throw new ExitError(EXIT.unavailable, `could not connect to ZooKeeper at ${o.connect} within ${o.connectTimeoutMs / 1000}s; is it running there? (--connect or ZK_CONNECT)`);
    }
    throw err;
  }
  reporter.verbose(`connected: session 0x${session.sessionId.toString(16)}, timeout ${session.timeoutMs} ms`);
  return session;
}

/** The exit code and line for an error of a recipe or of ZooKeeper. @internal */
export function describeFailure(err: unknown, what: string): ExitError {
  if (err instanceof ExitError) return err;
  if (err instanceof NoAuthError) return new ExitError(EXIT.noPermission, `${what}: ZooKeeper refused access (no permission under the node's ACL; give credentials with --auth or --auth-file)`);
  if (err instanceof LayoutMismatchError) return new ExitError(EXIT.dataError, `${what}: ${err.message}`);
  if (err instanceof InvalidArgumentError) return new ExitError(EXIT.usage, `${what}: ${err.message}`);
  if (err instanceof LockTimeoutError) return new ExitError(EXIT.conflict, `${what}: timed out`);
  if (err instanceof ZkRecipesError && (err.code === 'CONNECTION_LOSS' || err.code === 'SESSION_EXPIRED' || err.code === 'CLOSED')) {
    return new ExitError(EXIT.unavailable, `${what}: lost the connection to ZooKeeper (${err.message})`);
  }
  return new ExitError(EXIT.software, `${what}: ${err instanceof Error ? err.message : String(err)}`);
}
