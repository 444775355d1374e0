/**
 * Typed errors of zk-recipes. Every error is a {@link ZkRecipesError} with a stable string `code`;
 * subclasses exist where `instanceof` is useful to callers.
 *
 * @module
 */

/** Stable codes of the errors raised by zk-recipes itself (not by the ZooKeeper server). @group Errors */
export type LocalErrorCode =
  | 'INVALID_ARGUMENT'
  | 'CLOSED'
  | 'LOCK_TIMEOUT'
  | 'LOCK_LOST'
  | 'NOT_HELD'
  | 'TIMEOUT'
  | 'LEASE_MISMATCH'
  | 'ILLEGAL_STATE'
  | 'QUEUE_LAYOUT'
  | 'LAYOUT_MISMATCH'
  | 'CACHE_LIMIT'
  | 'RETRIES_EXHAUSTED'
  | 'OUTCOME_UNKNOWN'
  | 'CORRUPT_VALUE'
  | 'INVALID_INSTANCE'
  | 'NOT_REGISTERED'
  | 'TLS_FAILED';

/** Stable codes of errors that come from a ZooKeeper server reply or the connection to it. @group Errors */
export type ServerErrorCode =
  | 'SYSTEM_ERROR'
  | 'RUNTIME_INCONSISTENCY'
  | 'DATA_INCONSISTENCY'
  | 'CONNECTION_LOSS'
  | 'MARSHALLING_ERROR'
  | 'UNIMPLEMENTED'
  | 'OPERATION_TIMEOUT'
  | 'BAD_ARGUMENTS'
  | 'NEW_CONFIG_NO_QUORUM'
  | 'RECONFIG_IN_PROGRESS'
  | 'API_ERROR'
  | 'NO_NODE'
  | 'NO_AUTH'
  | 'BAD_VERSION'
  | 'NO_CHILDREN_FOR_EPHEMERALS'
  | 'NODE_EXISTS'
  | 'NOT_EMPTY'
  | 'SESSION_EXPIRED'
  | 'INVALID_CALLBACK'
  | 'INVALID_ACL'
  | 'AUTH_FAILED'
  | 'SESSION_MOVED'
  | 'NOT_READONLY'
  | 'EPHEMERAL_ON_LOCAL_SESSION'
  | 'NO_WATCHER'
  | 'REQUEST_TIMEOUT'
  | 'RECONFIG_DISABLED'
  | 'SESSION_CLOSED_REQUIRE_SASL_AUTH'
  | 'QUOTA_EXCEEDED'
  | 'THROTTLED_OP'
  | 'UNKNOWN_SERVER_ERROR';

/** Every `code` a {@link ZkRecipesError} can carry. @group Errors */
export type ErrorCode = LocalErrorCode | ServerErrorCode;

/** Options accepted by every zk-recipes error constructor. @group Errors */
export interface ZkErrorOptions {
  /** The error that caused this one, if any. */
  cause?: unknown;
  /** The znode path the failed operation was about, if any. */
  path?: string;
}

/**
 * Base class of every error zk-recipes raises. `code` is stable across versions: match on it,
 * not on the message.
 * @group Errors
 */
export class ZkRecipesError extends Error {
  /** Stable, machine-readable error code. */
  readonly code: ErrorCode;
  /** The znode path the failed operation was about, if known. */
  readonly path: string | undefined;

  /** Creates an error with a stable `code` and a message that says what happened and what to do. */
  constructor(code: ErrorCode, message: string, options: ZkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = options.path;
    this.name = new.target.name;
  }
}

/** A caller passed something invalid: a bad path, option, size or value. Nothing was sent. @group Errors */
export class InvalidArgumentError extends ZkRecipesError {
  /** Creates the error; the message names the argument and what is allowed. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('INVALID_ARGUMENT', message, options);
  }
}

/** The session or recipe was used after `close()`. @group Errors */
export class ClosedError extends ZkRecipesError {
  /** Creates the error; the message names what was closed. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('CLOSED', message, options);
  }
}

/** The object is in a state where the call makes no sense (e.g. `start()` twice). @group Errors */
export class IllegalStateError extends ZkRecipesError {
  /** Creates the error; the message says what state forbids the call. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('ILLEGAL_STATE', message, options);
  }
}

/** A wait that is not a lock acquisition (connecting, a queue take) ran out of its `timeoutMs`. @group Errors */
export class OperationTimeoutError extends ZkRecipesError {
  /** Creates the error; the message says what was waited for and how long. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('TIMEOUT', message, options);
  }
}

/** A lock acquisition or leadership wait ran out of its `timeoutMs`. @group Errors */
export class LockTimeoutError extends ZkRecipesError {
  /** Creates the error; the message names the path and the timeout. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('LOCK_TIMEOUT', message, options);
  }
}

/**
 * A held lock, lease or leadership was lost: the session expired (or may have), our node was
 * deleted, or the session changed. Raised as the reason of a handle's `signal`.
 * @group Errors
 */
export class LockLostError extends ZkRecipesError {
  /** Creates the error; the message says why the lock is no longer held. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('LOCK_LOST', message, options);
  }
}

/** A release or lock-bound operation was attempted on a lock that is not (or no longer) held. @group Errors */
export class NotHeldError extends ZkRecipesError {
  /** Creates the error; the message names the lock. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('NOT_HELD', message, options);
  }
}

/** A queue's znodes are not laid out as expected (e.g. a bucket too large to list safely). @group Errors */
export class QueueLayoutError extends ZkRecipesError {
  /** Creates the error; the message names the node and the problem. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('QUEUE_LAYOUT', message, options);
  }
}

/** Participants of one semaphore path disagree about `maxLeases`. @group Errors */
export class LeaseMismatchError extends ZkRecipesError {
  /** Creates the error; the message gives both values. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('LEASE_MISMATCH', message, options);
  }
}

/**
 * A recipe's path is in use by another recipe, whose nodes it cannot see (nor that recipe ours):
 * e.g. a `ReadWriteLock` or a `DistributedQueue` where a `Mutex` holds, a `Semaphore` of two
 * leases where a `Mutex` holds (they share node names; the directory's data tells them apart),
 * or a window-layout `Semaphore` on a path that Curator's `InterProcessSemaphoreV2` uses
 * (`locks` and `leases` children). Sharing it would silently break both, so the call is refused
 * and nothing of it is left behind. Use another path (or, for a semaphore, the layout the path's
 * other participants use). Each recipe guide says what can and cannot be told apart.
 * @group Errors
 */
export class LayoutMismatchError extends ZkRecipesError {
  /** Creates the error; the message names the path, what was found there and what to do. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('LAYOUT_MISMATCH', message, options);
  }
}

/**
 * A cache crossed its `maxNodes` or `maxBytes` bound; the cache closed (a partial copy would
 * break what it promises). Raise the bound or cache a smaller subtree.
 * @group Errors
 */
export class CacheLimitError extends ZkRecipesError {
  /** Creates the error; the message names the cache, the bound and the size reached. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('CACHE_LIMIT', message, options);
  }
}

/** Options of a {@link ZooKeeperError}. @group Errors */
export interface ZooKeeperErrorOptions extends ZkErrorOptions {
  /** The numeric ZooKeeper error code (e.g. -101 for NoNode). */
  zkCode: number;
  /** The operation that failed, e.g. `create` or `getData`. */
  op?: string;
  /** For a failed transaction: the index of the operation that failed. */
  opIndex?: number;
}

/**
 * An error reported by ZooKeeper (a reply code) or by the connection to it. Subclasses exist for
 * the codes recipes and callers commonly branch on.
 * @group Errors
 */
export class ZooKeeperError extends ZkRecipesError {
  /** The numeric ZooKeeper error code (e.g. -101 for NoNode). */
  readonly zkCode: number;
  /** The operation that failed, e.g. `create` or `getData`. */
  readonly op: string | undefined;
  /** For a failed transaction: the index of the operation that failed. */
  readonly opIndex: number | undefined;

  /** Creates the error from a server code; see {@link ZooKeeperErrorOptions}. */
  constructor(code: ServerErrorCode, message: string, options: ZooKeeperErrorOptions) {
    super(code, message, options);
    this.zkCode = options.zkCode;
    this.op = options.op;
    this.opIndex = options.opIndex;
  }
}

/** The node does not exist (ZooKeeper `NONODE`, -101). @group Errors */
export class NoNodeError extends ZooKeeperError {}
/** The node already exists (ZooKeeper `NODEEXISTS`, -110). @group Errors */
export class NodeExistsError extends ZooKeeperError {}
/** The expected version did not match (ZooKeeper `BADVERSION`, -103). @group Errors */
export class BadVersionError extends ZooKeeperError {}
/** The node has children and cannot be deleted (ZooKeeper `NOTEMPTY`, -111). @group Errors */
export class NotEmptyError extends ZooKeeperError {}
/** The session lacks permission under the node's ACL (ZooKeeper `NOAUTH`, -102). @group Errors */
export class NoAuthError extends ZooKeeperError {}

/**
 * The server does not implement the operation (ZooKeeper `UNIMPLEMENTED`, -6): e.g. a
 * persistent watch asked of a server older than 3.6.
 * @group Errors
 */
export class UnimplementedError extends ZooKeeperError {}

/** Options of a {@link ConnectionLossError}. @group Errors */
export interface ConnectionLossErrorOptions extends ZooKeeperErrorOptions {
  /** False when the request never left this process (see {@link ConnectionLossError.sent}). Default true. */
  sent?: boolean;
}

/**
 * The connection dropped before the reply arrived (ZooKeeper `CONNECTIONLOSS`, -4): the
 * operation may or may not have been applied; the session may still be alive. Also raised, with
 * `sent: false`, for a request that could not be sent because no connection came up within the
 * session's connect timeout (as Curator does): that one was certainly not applied.
 * @group Errors
 */
export class ConnectionLossError extends ZooKeeperError {
  /** Whether the request was sent (and so may have been applied). */
  readonly sent: boolean;

  /** Creates the error; see {@link ConnectionLossErrorOptions}. */
  constructor(code: ServerErrorCode, message: string, options: ConnectionLossErrorOptions) {
    super(code, message, options);
    this.sent = options.sent ?? true;
  }
}

/**
 * The session is gone (ZooKeeper `SESSIONEXPIRED`, -112), or was declared lost locally after
 * being disconnected for the whole session timeout. Its ephemeral nodes are (or soon will be)
 * deleted by the server.
 * @group Errors
 */
export class SessionExpiredError extends ZooKeeperError {}

/**
 * The session could not authenticate, or the server refuses it unauthenticated: a SASL exchange
 * failed (`AUTH_FAILED`, -115: wrong password, unknown user, a server without SASL, a server
 * that failed mutual authentication), `digest` auth info was refused (-115), or the server
 * requires SASL and the session has none (`SESSION_CLOSED_REQUIRE_SASL_AUTH`, -124). Final: the
 * session is closed, and it does not reconnect (it would fail the same way). Fix the
 * credentials or the server's configuration, then open a new session.
 * @group Errors
 */
export class AuthFailedError extends ZooKeeperError {}

/**
 * An optimistic operation (an `AtomicNumber` update) lost the race on every attempt its retry
 * policy allowed (and, if promoted, under the lock too): nothing was applied by this call. Retry
 * later, raise the retries, or promote to a lock.
 * @group Errors
 */
export class RetriesExhaustedError extends ZkRecipesError {
  /** Creates the error; the message names the path and how many attempts were made. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('RETRIES_EXHAUSTED', message, options);
  }
}

/**
 * A write was sent but its reply never came (the connection dropped): it may or may not have
 * been applied, and re-sending it could apply it twice, so it is not retried. Read the value to
 * decide; `cause` is the connection error.
 * @group Errors
 */
export class OutcomeUnknownError extends ZkRecipesError {
  /** Creates the error; the message names the path and the write whose outcome is unknown. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('OUTCOME_UNKNOWN', message, options);
  }
}

/** A node's data is not in the encoding the recipe expects (e.g. a count that is not 4 bytes). @group Errors */
export class CorruptValueError extends ZkRecipesError {
  /** Creates the error; the message names the path, the size found and the size expected. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('CORRUPT_VALUE', message, options);
  }
}

/**
 * A service instance node holds data that is not a curator-x-discovery instance (not JSON, a
 * field of the wrong type, a payload its codec refuses). The instance is skipped and reported;
 * whoever wrote it should fix it.
 * @group Errors
 */
export class InvalidInstanceError extends ZkRecipesError {
  /** Creates the error; the message names the path and what is wrong. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('INVALID_INSTANCE', message, options);
  }
}

/** An instance was updated or unregistered through a discovery that did not register it (or after it was unregistered). @group Errors */
export class NotRegisteredError extends ZkRecipesError {
  /** Creates the error; the message names the instance. */
  constructor(message: string, options?: ZkErrorOptions) {
    super('NOT_REGISTERED', message, options);
  }
}

/**
 * A TLS connection to a ZooKeeper server could not be set up: its certificate was refused (an
 * unknown CA, expired, issued for another host name), it refused ours, or it does not speak TLS
 * on that port (or speaks TLS where the session does not). `cause` is the `node:tls` error (its
 * `code`, e.g. `CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID`, says which); `server` is the
 * `host:port` that failed. Fix the configuration: retrying does not help.
 * @group Errors
 */
export class TlsError extends ZkRecipesError {
  /** The server that failed, `host:port`. */
  readonly server: string;
  /** Creates the error; the message names the server, what failed and what to check. */
  constructor(message: string, server: string, options?: ZkErrorOptions) {
    super('TLS_FAILED', message, options);
    this.server = server;
  }
}

/**
 * The server refused an ACL (ZooKeeper `INVALIDACL`, -114): e.g. `CREATOR_ALL_ACL` from a
 * session that authenticated with no identity (give it `auth`), or a malformed digest id.
 * @group Errors
 */
export class InvalidAclError extends ZooKeeperError {}

/**
 * Whether `err` is a refusal that no retry can cure: the session lacks permission
 * ({@link NoAuthError}) or the server refuses the ACL asked for ({@link InvalidAclError}).
 * Recipes reject their caller with it at once, and their background loops stop on it (with an
 * `error` event) instead of retrying.
 * @group Errors
 */
export function isPermissionError(err: unknown): err is NoAuthError | InvalidAclError {
  return err instanceof NoAuthError || err instanceof InvalidAclError;
}

