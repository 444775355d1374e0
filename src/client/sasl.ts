/**
 * SASL authentication of a session (the `sasl` option): DIGEST-MD5 with a username and
 * password, against a server whose JAAS `Server` section holds a `DigestLoginModule`. Guide:
 * [SASL](../../docs/security.md#sasl).
 *
 * On every connection the exchange runs between the server's handshake reply and anything else:
 * as the Java client does (it sends only the handshake while SASL is in progress), the handshake
 * reply is held back from node-zookeeper-client until the server accepted our credentials, so
 * the connection counts as up only then, and re-sent auth info, re-registered watches and the
 * requests queued while disconnected all go out authenticated, in that order.
 *
 * @module
 */
import { AuthFailedError, InvalidArgumentError } from '../errors.js';
import { DigestMd5Client, DigestMd5Error } from './digest-md5.js';
import { CM_STATE, type RawConnectionManager } from './nzc.js';
import { Perms, type Acl } from './types.js';
import { checkKeys, checkInt, describe, optionKeys } from './validate.js';
import { Frame, REPLY } from './wire.js';

/**
 * SASL credentials of a session. Only `DIGEST-MD5` is supported; Kerberos (`GSSAPI`) and the
 * other mechanisms are refused when the session is created.
 * @group Sessions
 */
export interface SaslOptions {
  /** The mechanism: `'DIGEST-MD5'`, the only one supported. */
  mechanism: 'DIGEST-MD5';
  /** The user, as in the server's JAAS `user_<name>="<password>"` line; ACLs name it as `sasl:<username>`. */
  username: string;
  /** The user's password. */
  password: string;
  /** The service of the digest-uri; default `zookeeper` (what ZooKeeper's server expects). */
  serviceName?: string;
  /** The server name of the digest-uri; default `zk-sasl-md5` (hard-wired in ZooKeeper's client and server). */
  serverHost?: string;
}

/** The keys of {@link SaslOptions}. @internal */
export const SASL_OPTION_KEYS = optionKeys<SaslOptions>({ mechanism: true, username: true, password: true, serviceName: true, serverHost: true });

/** The mechanisms this client implements. */
const SUPPORTED = ['DIGEST-MD5'] as const;

/** Validated {@link SaslOptions}, defaults filled in. @internal */
export type ResolvedSasl = Required<SaslOptions>;

/**
 * Validates the `sasl` option (undefined: no SASL).
 * @throws InvalidArgumentError for a bad or unsupported value.
 * @internal
 */
export function checkSasl(value: unknown): ResolvedSasl | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentError(`sasl must be { mechanism: 'DIGEST-MD5', username, password }, got ${describe(value)}`);
  checkKeys(value, 'sasl', SASL_OPTION_KEYS);
  const o = value as Partial<Record<keyof SaslOptions, unknown>>;
  const mechanism = typeof o.mechanism === 'string' ? o.mechanism.toUpperCase() : o.mechanism;
  if (!SUPPORTED.includes(mechanism as (typeof SUPPORTED)[number])) {
    const kerberos = mechanism === 'GSSAPI' ? ' Kerberos (GSSAPI) needs a Kerberos library and is not implemented.' : '';
    throw new InvalidArgumentError(`sasl.mechanism ${describe(o.mechanism)} is not supported: zk-recipes supports only 'DIGEST-MD5' (a username and password the server's JAAS DigestLoginModule knows).${kerberos}`);
  }
  const text = (v: unknown, what: string, fallback?: string): string => {
    if (v === undefined && fallback !== undefined) return fallback;
    if (typeof v !== 'string' || v === '') throw new InvalidArgumentError(`sasl.${what} must be a non-empty string, got ${describe(v)}`);
    return v;
  };
  const serviceName = text(o.serviceName, 'serviceName', 'zookeeper');
  if (serviceName.includes('/')) throw new InvalidArgumentError(`sasl.serviceName must not contain '/', got ${describe(serviceName)}`);
  return {
    mechanism: 'DIGEST-MD5',
    username: text(o.username, 'username'),
    password: text(o.password, 'password'),
    serviceName,
    serverHost: text(o.serverHost, 'serverHost', 'zk-sasl-md5'),
  };
}

/**
 * An ACL entry granting `perms` to the SASL user `username` (scheme `sasl`): only a session
 * authenticated as that user by SASL gets them. Needs a server with the SASL authentication
 * provider (`authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider`).
 *
 * @example
 * ```ts
 * import { Perms, saslAcl, type ZkSession } from 'zk-recipes';
 *
 * declare const zk: ZkSession;
 * await zk.create('/app/config', { data: '{}', acl: [saslAcl('alice'), saslAcl('bob', Perms.READ)] });
 * ```
 * @param perms A mask of {@link Perms}; default all.
 * @throws InvalidArgumentError for an empty username or a bad mask.
 * @group Sessions
 */
export function saslAcl(username: string, perms: number = Perms.ALL): Acl {
  if (typeof username !== 'string' || username === '') throw new InvalidArgumentError(`saslAcl: username must be a non-empty string, got ${describe(username)}`);
  return { scheme: 'sasl', id: username, perms: checkInt(perms, 'saslAcl perms', 0, Perms.ALL) };
}

/** The `sasl` request (GetSASLRequest, and SetSASLResponse in reply): one token each way. */
const SASL_OP = 102;

type FrameHandler = (this: RawConnectionManager, frame: Buffer) => void;

/** Bytes of a ConnectResponse before its timeout field: length prefix, protocol version. */
const CONNECT_TIMEOUT_OFFSET = 8;

/**
 * Wraps the client's handling of whole frames (see `frameReplies`) so that each connection runs
 * a SASL exchange right after the handshake reply and hands that reply to the client only once
 * the server accepted our credentials. `failed` hears of a failure retrying cannot fix (the
 * server refused the credentials, has no SASL, or failed mutual authentication), once per
 * connection. A reply out of order drops the connection (the client reconnects, and the next
 * connection starts over); a server that never answers is the handshake watchdog's
 * (`generation.ts`): the connection is still connecting until the exchange is done.
 * @internal
 */
export function saslGate(handle: FrameHandler, sasl: ResolvedSasl, failed: (err: AuthFailedError) => void): FrameHandler {
  let socket: RawConnectionManager['socket'];
  let exchange: DigestMd5Client | undefined;
  let handshake: Buffer | undefined;
  let xid = 0;
  /** Replies read on this connection's exchange: the first is the challenge, the second the proof. */
  let replies = 0;
  let done = false;
  return function (this: RawConnectionManager, frame: Buffer): void {
    if (this.socket !== socket) {
      // A new connection: a new exchange.
      socket = this.socket;
      exchange = undefined;
      handshake = undefined;
      replies = 0;
      done = false;
    }
    if (done || this.state !== CM_STATE.CONNECTING) return handle.call(this, frame);
    if (!exchange) {
      // The handshake reply. An expired session (timeout 0) is the client's to report.
      if (frame.length < CONNECT_TIMEOUT_OFFSET + 4 || frame.readInt32BE(CONNECT_TIMEOUT_OFFSET) <= 0) return handle.call(this, frame);
      handshake = Buffer.from(frame);
      adoptSession(this, handshake);
      exchange = new DigestMd5Client(sasl);
      // DIGEST-MD5 has no initial response: an empty token asks for the challenge.
      xid = send(this, Buffer.alloc(0));
      return;
    }
    const fail = (err: AuthFailedError): void => {
      done = true;
      failed(err);
      this.socket?.destroy();
    };
    if (frame.length < REPLY.BODY || frame.readInt32BE(REPLY.XID) !== xid) {
      // Not the reply to our token: the stream is out of step; start over on a new connection.
      this.socket?.destroy();
      return;
    }
    const code = frame.readInt32BE(REPLY.ERR);
    if (code !== 0) return fail(refusal(code, sasl));
    try {
      const token = readToken(frame);
      replies += 1;
      // The first reply is the challenge; the second the server's proof (rspauth).
      if (replies === 1) {
        xid = send(this, exchange.respond(token));
        return;
      }
      exchange.verify(token);
    } catch (err) {
      return fail(localFailure(err, sasl));
    }
    done = true;
    const reply = handshake as Buffer;
    handshake = undefined;
    // Now the client sees the handshake reply: connected, authenticated; it sends the rest.
    handle.call(this, reply);
  };
}

/**
 * Keeps the session id and password of a handshake reply held back, as the Java client has them
 * before its SASL exchange: should the connection drop in the middle of it, the next attempt
 * resumes this session instead of opening another (which would linger on the server until its
 * timeout).
 */
function adoptSession(cm: RawConnectionManager, reply: Buffer): void {
  const id = CONNECT_TIMEOUT_OFFSET + 4;
  if (reply.length < id + 12) return;
  const n = reply.readInt32BE(id + 8);
  if (n < 0 || reply.length < id + 12 + n) return;
  cm.sessionId = Buffer.from(reply.subarray(id, id + 8));
  cm.sessionPassword = Buffer.from(reply.subarray(id + 12, id + 12 + n));
}

/** Writes one `sasl` request straight to the socket (nothing else may go before it); returns its xid. */
function send(cm: RawConnectionManager, token: Buffer): number {
  const xid = cm.xid;
  // The client's counter (wrapped in nzc.ts): our requests share its sequence.
  cm.xid = xid + 1;
  cm.socket?.write(new Frame(SASL_OP, 4 + token.length).bytes(token).seal(xid));
  return xid;
}

/** The token of a `sasl` reply (SetSASLResponse); a null one reads as empty. */
function readToken(frame: Buffer): Buffer {
  if (frame.length < REPLY.BODY + 4) return Buffer.alloc(0);
  const n = frame.readInt32BE(REPLY.BODY);
  if (n <= 0) return Buffer.alloc(0);
  if (REPLY.BODY + 4 + n > frame.length) throw new DigestMd5Error('truncated SASL token');
  return Buffer.from(frame.subarray(REPLY.BODY + 4, REPLY.BODY + 4 + n));
}

function refusal(code: number, sasl: ResolvedSasl): AuthFailedError {
  if (code === -124) {
    return new AuthFailedError('SESSION_CLOSED_REQUIRE_SASL_AUTH', `the server closed the session: it requires SASL authentication and did not accept ${describe(sasl.username)}'s (SESSION_CLOSED_REQUIRE_SASL_AUTH, -124); check the username and password against the server's JAAS Server section`, { zkCode: code, op: 'sasl' });
  }
  return new AuthFailedError('AUTH_FAILED', `SASL DIGEST-MD5 authentication of ${describe(sasl.username)} failed (AUTH_FAILED, ${code}): wrong password, or no such user in the server's JAAS Server section`, { zkCode: -115, op: 'sasl' });
}

function localFailure(err: unknown, sasl: ResolvedSasl): AuthFailedError {
  const why = err instanceof Error ? err.message : String(err);
  return new AuthFailedError('AUTH_FAILED', `SASL DIGEST-MD5 authentication of ${describe(sasl.username)} failed: ${why}; is SASL configured on the server (a JAAS Server section and the SASL authProvider)?`, { zkCode: -115, op: 'sasl', cause: err });
}
