/**
 * The one table from ZooKeeper reply codes to typed errors.
 *
 * @internal
 * @module
 */
import {
  AuthFailedError,
  BadVersionError,
  ConnectionLossError,
  InvalidAclError,
  NoAuthError,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  SessionExpiredError,
  UnimplementedError,
  ZooKeeperError,
  type ServerErrorCode,
  type ZooKeeperErrorOptions,
} from '../errors.js';
import { stackless } from '../util/stackless.js';

type ErrorCtor = new (code: ServerErrorCode, message: string, options: ZooKeeperErrorOptions) => ZooKeeperError;

interface Entry {
  code: ServerErrorCode;
  ctor: ErrorCtor;
  hint: string;
}

const TABLE: ReadonlyMap<number, Entry> = new Map<number, Entry>([
  [-1, { code: 'SYSTEM_ERROR', ctor: ZooKeeperError, hint: 'server-side failure' }],
  [-2, { code: 'RUNTIME_INCONSISTENCY', ctor: ZooKeeperError, hint: 'not applied because an earlier operation of the transaction failed' }],
  [-3, { code: 'DATA_INCONSISTENCY', ctor: ZooKeeperError, hint: 'server data inconsistency' }],
  [-4, { code: 'CONNECTION_LOSS', ctor: ConnectionLossError, hint: 'the connection dropped before the reply; the operation may or may not have been applied' }],
  [-5, { code: 'MARSHALLING_ERROR', ctor: ZooKeeperError, hint: 'the request could not be encoded' }],
  [-6, { code: 'UNIMPLEMENTED', ctor: UnimplementedError, hint: 'the server does not implement this operation (persistent watches need ZooKeeper 3.6 or later)' }],
  [-7, { code: 'OPERATION_TIMEOUT', ctor: ZooKeeperError, hint: 'the server timed out' }],
  [-8, { code: 'BAD_ARGUMENTS', ctor: ZooKeeperError, hint: 'the server rejected the arguments' }],
  [-13, { code: 'NEW_CONFIG_NO_QUORUM', ctor: ZooKeeperError, hint: 'reconfiguration has no quorum' }],
  [-14, { code: 'RECONFIG_IN_PROGRESS', ctor: ZooKeeperError, hint: 'a reconfiguration is in progress' }],
  [-100, { code: 'API_ERROR', ctor: ZooKeeperError, hint: 'API error' }],
  [-101, { code: 'NO_NODE', ctor: NoNodeError, hint: 'the node (or its parent) does not exist' }],
  [-102, { code: 'NO_AUTH', ctor: NoAuthError, hint: "the session lacks permission under the node's ACL; add auth info to the session" }],
  [-103, { code: 'BAD_VERSION', ctor: BadVersionError, hint: 'the node changed since the expected version' }],
  [-108, { code: 'NO_CHILDREN_FOR_EPHEMERALS', ctor: ZooKeeperError, hint: 'ephemeral nodes cannot have children' }],
  [-110, { code: 'NODE_EXISTS', ctor: NodeExistsError, hint: 'the node already exists' }],
  [-111, { code: 'NOT_EMPTY', ctor: NotEmptyError, hint: 'the node has children' }],
  [-112, { code: 'SESSION_EXPIRED', ctor: SessionExpiredError, hint: 'the session expired; its ephemeral nodes are gone' }],
  [-113, { code: 'INVALID_CALLBACK', ctor: ZooKeeperError, hint: 'invalid callback' }],
  [-114, { code: 'INVALID_ACL', ctor: InvalidAclError, hint: 'the ACL is invalid' }],
  [-115, { code: 'AUTH_FAILED', ctor: AuthFailedError, hint: "authentication failed: check the credentials (auth or sasl option) and the server's JAAS configuration" }],
  [-118, { code: 'SESSION_MOVED', ctor: ZooKeeperError, hint: 'the session moved to another server' }],
  [-119, { code: 'NOT_READONLY', ctor: ZooKeeperError, hint: 'a write was sent to a read-only server' }],
  [-120, { code: 'EPHEMERAL_ON_LOCAL_SESSION', ctor: ZooKeeperError, hint: 'ephemeral nodes need a global session' }],
  [-121, { code: 'NO_WATCHER', ctor: ZooKeeperError, hint: 'no such watch' }],
  [-122, { code: 'REQUEST_TIMEOUT', ctor: ZooKeeperError, hint: 'the request timed out' }],
  [-123, { code: 'RECONFIG_DISABLED', ctor: ZooKeeperError, hint: 'reconfiguration is disabled' }],
  [-124, { code: 'SESSION_CLOSED_REQUIRE_SASL_AUTH', ctor: AuthFailedError, hint: 'the server requires SASL authentication and closed the session: give the session the sasl option' }],
  [-125, { code: 'QUOTA_EXCEEDED', ctor: ZooKeeperError, hint: 'a quota was exceeded' }],
  [-127, { code: 'THROTTLED_OP', ctor: ZooKeeperError, hint: 'the server throttled the operation; retry later' }],
]);

/** Numeric ZooKeeper code for connection loss. */
export const ZK_CONNECTION_LOSS = -4;

/** Numeric ZooKeeper code for session expiry. */
export const ZK_SESSION_EXPIRED = -112;

/**
 * Builds the typed error for a ZooKeeper reply code, without a stack: it is built where the
 * reply is handled, whose frames name no caller, and capturing them costs more than the rest of
 * the error on paths where such a reply is routine (a watch-setting read of a node just gone).
 */
export function errorFromCode(zkCode: number, op: string, path: string | undefined, extra: { opIndex?: number; cause?: unknown } = {}): ZooKeeperError {
  const entry = TABLE.get(zkCode);
  const code = entry?.code ?? 'UNKNOWN_SERVER_ERROR';
  const hint = entry?.hint ?? `unknown server error code ${zkCode}`;
  const at = path === undefined ? '' : ` on ${path}`;
  const index = extra.opIndex === undefined ? '' : ` (transaction op #${extra.opIndex})`;
  const Ctor = entry?.ctor ?? ZooKeeperError;
  return stackless(
    () =>
      new Ctor(code, `${op}${at}${index} failed: ${code} (${zkCode}): ${hint}`, {
        zkCode,
        op,
        path,
        opIndex: extra.opIndex,
        cause: extra.cause,
      }),
  );
}
