/**
 * Opens the session of a `zkr` run from its connect options, and maps what went wrong to an
 * exit code and one line for the operator (credentials never appear in either).
 *
 * @internal
 * @module
 */
import { CREATOR_ALL_ACL } from '../client/acl.js';
import { ZkSession } from '../client/session.js';
import type { Acl } from '../client/types.js';
import { tlsFromFiles, type TlsOptions } from '../client/tls.js';
import { AuthFailedError, ClosedError, InvalidArgumentError, LayoutMismatchError, LockTimeoutError, NoAuthError, OperationTimeoutError, TlsError, ZkRecipesError, ZooKeeperError } from '../errors.js';
import type { AclChoice, ConnectOptions } from './args.js';
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

/** The TLS option from the `--tls-*` files; an unreadable file is a usage error (64). */
async function readTls(o: ConnectOptions): Promise<TlsOptions | undefined> {
  if (o.tls === undefined) return undefined;
  try {
    return await tlsFromFiles(o.tls);
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new ExitError(EXIT.usage, `--tls-ca/--tls-cert/--tls-key: ${err.message.replace(/^tlsFromFiles: /, '')}`);
    throw err;
  }
}

/** The line for a refused authentication: what was refused and where to look (never a secret). */
function authRefused(o: ConnectOptions, err: AuthFailedError | undefined): string {
  if (o.sasl) return `ZooKeeper at ${o.connect} refused SASL user "${o.sasl.username}": check --sasl-user and the password (--sasl-password-file or ZK_SASL_PASSWORD)`;
  if (err?.code === 'SESSION_CLOSED_REQUIRE_SASL_AUTH') return `ZooKeeper at ${o.connect} requires SASL authentication: give --sasl-user NAME with --sasl-password-file FILE or ZK_SASL_PASSWORD`;
  return `ZooKeeper at ${o.connect} refused the credentials given with --auth`;
}

/** The line for a refused TLS handshake: the session's explanation, then the options to check. */
function tlsRefused(err: TlsError): string {
  return `${err.message}; check --tls-ca (the CA of the server's certificate), --tls-cert/--tls-key (a client certificate the server trusts), the host in --connect (or --tls-servername), and that the port is a secureClientPort`;
}

/**
 * Connects within the connect timeout. Rejects with {@link ExitError} (69 unreachable, 77
 * authentication refused, 78 TLS refused, 64 a connect string or TLS file the session refuses)
 * or the signal's reason.
 */
export async function openSession(o: ConnectOptions, reporter: Reporter, signal: AbortSignal): Promise<ZkSession> {
  const ids = [...o.auth.map((a) => `${a.scheme}:***`), ...(o.sasl ? [`sasl:${o.sasl.username}`] : [])];
  reporter.verbose(`connecting to ${o.connect}${o.tls ? ' over TLS' : ''}${ids.length > 0 ? ` with ${ids.join(', ')}` : ''}`);
  const tls = await readTls(o);
  let authFailed = false;
  let session: ZkSession;
  try {
    session = new ZkSession(o.connect, {
      sessionTimeoutMs: o.sessionTimeoutMs,
      connectTimeoutMs: o.connectTimeoutMs,
      auth: o.auth,
      spinDelayMs: 100,
      ...(tls && { tls }),
      ...(o.sasl && { sasl: o.sasl }),
    });
  } catch (err) {
    if (err instanceof InvalidArgumentError) {
      // The checks name the option they refused: tls.*, sasl.*, else the connect string.
      const option = err.message.startsWith('tls') ? '--tls-*' : err.message.startsWith('sasl') ? '--sasl-user' : `--connect ${o.connect}`;
      throw new ExitError(EXIT.usage, `${option}: ${err.message}`);
    }
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
    if (err instanceof TlsError) throw new ExitError(EXIT.config, tlsRefused(err));
    if (err instanceof AuthFailedError) throw new ExitError(EXIT.noPermission, authRefused(o, err));
    if (authFailed) throw new ExitError(EXIT.noPermission, authRefused(o, undefined));
    if (err instanceof OperationTimeoutError || err instanceof ClosedError) {
      throw new ExitError(EXIT.unavailable, `could not connect to ZooKeeper at ${o.connect} within ${o.connectTimeoutMs / 1000}s; is it running there? (--connect or ZK_CONNECT)`);
    }
    throw err;
  }
  reporter.verbose(`connected: session 0x${session.sessionId.toString(16)}, timeout ${session.timeoutMs} ms`);
  return session;
}

/** The `acl` option of the recipes `zkr` builds for `--acl` (none for `open`: the recipes' default). @internal */
export function recipeAcl(choice: AclChoice): { acl?: readonly Acl[] } {
  return choice === 'creator' ? { acl: CREATOR_ALL_ACL } : {};
}

/** The exit code and line for an error of a recipe or of ZooKeeper. @internal */
export function describeFailure(err: unknown, what: string): ExitError {
  if (err instanceof ExitError) return err;
  if (err instanceof NoAuthError) return new ExitError(EXIT.noPermission, `${what}: ZooKeeper refused access (no permission under the node's ACL; give credentials with --auth or --auth-file)`);
  if (err instanceof AuthFailedError) return new ExitError(EXIT.noPermission, `${what}: ZooKeeper refused our authentication (${err.message})`);
  if (err instanceof TlsError) return new ExitError(EXIT.config, `${what}: ${tlsRefused(err)}`);
  if (err instanceof LayoutMismatchError) return new ExitError(EXIT.dataError, `${what}: ${err.message}`);
  if (err instanceof InvalidArgumentError) return new ExitError(EXIT.usage, `${what}: ${err.message}`);
  if (err instanceof LockTimeoutError) return new ExitError(EXIT.conflict, `${what}: timed out`);
  if (err instanceof ZkRecipesError && (err.code === 'CONNECTION_LOSS' || err.code === 'SESSION_EXPIRED' || err.code === 'CLOSED')) {
    return new ExitError(EXIT.unavailable, `${what}: lost the connection to ZooKeeper (${err.message})`);
  }
  return new ExitError(EXIT.software, `${what}: ${err instanceof Error ? err.message : String(err)}`);
}
