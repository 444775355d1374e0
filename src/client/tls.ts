/**
 * TLS to a ZooKeeper server's `secureClientPort`: the session's `tls` option, its validation, the
 * socket factory that replaces node-zookeeper-client's plain `net.connect` for one client, and
 * the classification of what failed. Everything above the socket (framing, heartbeats, the loss
 * clock, reconnects, failover across the connect string) is the same as over plain TCP.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { isIP, connect as tcpConnect, type Socket } from 'node:net';
import { checkServerIdentity as defaultIdentityCheck, connect as tlsConnect, type ConnectionOptions, type PeerCertificate, type TLSSocket } from 'node:tls';
import { InvalidArgumentError, TlsError } from '../errors.js';
import { CM_STATE, type RawClient, type RawConnectionManager } from './nzc.js';
import { checkOptions, describe, optionKeys } from './validate.js';

/** PEM text, a Buffer of it, or several (as `node:tls` takes them). @group Sessions */
export type TlsMaterial = string | Buffer | readonly (string | Buffer)[];

/**
 * The session's `tls` option: connect to every server of the connect string over TLS (its
 * `secureClientPort`), with what `node:tls` takes. The server's certificate is verified against
 * `ca` and its host name or IP address (the connect string's, or `servername`) by default.
 * Guide: [TLS](../../docs/security.md#tls).
 * @group Sessions
 */
export interface TlsOptions {
  /** CA certificate(s) the server's certificate must chain to (PEM). Default: Node's bundled roots. */
  ca?: TlsMaterial;
  /** Our client certificate (PEM), with its chain; ZooKeeper requires one by default (`ssl.clientAuth=need`). */
  cert?: TlsMaterial;
  /** The private key of `cert` (PEM). */
  key?: TlsMaterial;
  /** Passphrase of an encrypted `key`. */
  passphrase?: string;
  /**
   * The host name to verify the server's certificate against (and to send as SNI), for every
   * server of the connect string; default each server's own host (an IP address is checked
   * against the certificate's IP SANs, and sent as no SNI).
   */
  servername?: string;
  /** Refuse a server whose certificate does not chain to `ca`. Default true; false is for experiments only. */
  rejectUnauthorized?: boolean;
  /**
   * The host-name check of the server's certificate: default `node:tls`'s; a function of your own
   * (return an Error to refuse); or `false` to skip it (the chain is still verified: anyone with a
   * certificate from `ca` is then accepted as any server).
   */
  checkServerIdentity?: false | ((host: string, cert: PeerCertificate) => Error | undefined);
}

/** The keys of {@link TlsOptions}. @internal */
export const TLS_OPTION_KEYS = optionKeys<TlsOptions>({
  ca: true,
  cert: true,
  key: true,
  passphrase: true,
  servername: true,
  rejectUnauthorized: true,
  checkServerIdentity: true,
});

/** Paths of PEM files for {@link tlsFromFiles}. @group Sessions */
export interface TlsFiles {
  /** CA certificate(s) file. */
  ca?: string;
  /** Client certificate file. */
  cert?: string;
  /** Client private key file. */
  key?: string;
  /** Passphrase of an encrypted key. */
  passphrase?: string;
  /** See {@link TlsOptions.servername}. */
  servername?: string;
}

/** The keys of {@link TlsFiles}. @internal */
export const TLS_FILES_KEYS = optionKeys<TlsFiles>({ ca: true, cert: true, key: true, passphrase: true, servername: true });

/**
 * Reads the PEM files of a TLS setup into {@link TlsOptions}:
 * `ZkSession.connect(hosts, { tls: await tlsFromFiles({ ca, cert, key }) })`. Read them again
 * (and start a new session) after rotating them: a session keeps what it was given.
 * @throws InvalidArgumentError for an unknown key, a path that is not a non-empty string, or a file that cannot be read.
 * @group Sessions
 */
export async function tlsFromFiles(files: TlsFiles): Promise<TlsOptions> {
  const o = checkOptions(files, 'tlsFromFiles', TLS_FILES_KEYS);
  const out: TlsOptions = {};
  for (const name of ['ca', 'cert', 'key'] as const) {
    const path = o[name];
    if (path === undefined) continue;
    if (typeof path !== 'string' || path === '') throw new InvalidArgumentError(`tlsFromFiles: ${name} must be a file path, got ${describe(path)}`);
    try {
      out[name] = await readFile(path);
    } catch (err) {
      throw new InvalidArgumentError(`tlsFromFiles: cannot read the ${name} file ${path}: ${(err as Error).message}`, { cause: err });
    }
  }
  if (o.passphrase !== undefined) out.passphrase = o.passphrase;
  if (o.servername !== undefined) out.servername = o.servername;
  return checkTls(out) as TlsOptions;
}

/** What a session connects with: `node:tls` options without the host and port. @internal */
export type ResolvedTls = Readonly<ConnectionOptions>;

function isMaterial(v: unknown): boolean {
  const one = (x: unknown): boolean => (typeof x === 'string' && x !== '') || (Buffer.isBuffer(x) && x.length > 0);
  return one(v) || (Array.isArray(v) && v.length > 0 && v.every(one));
}

/**
 * Validates the `tls` option before anything connects. @internal
 * @throws InvalidArgumentError naming the bad field.
 */
export function checkTls(value: unknown): ResolvedTls | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentError(`tls must be an object of node:tls options ({ ca, cert, key, ... }), got ${describe(value)}`);
  const o = checkOptions(value as TlsOptions, 'tls', TLS_OPTION_KEYS);
  for (const name of ['ca', 'cert', 'key'] as const) {
    if (o[name] !== undefined && !isMaterial(o[name])) throw new InvalidArgumentError(`tls.${name} must be PEM text or a Buffer (or an array of them), not empty, got ${describe(o[name])}`);
  }
  if ((o.cert === undefined) !== (o.key === undefined)) throw new InvalidArgumentError('tls.cert and tls.key go together: give both (a client certificate) or neither');
  if (o.passphrase !== undefined && typeof o.passphrase !== 'string') throw new InvalidArgumentError(`tls.passphrase must be a string, got ${describe(o.passphrase)}`);
  if (o.servername !== undefined && (typeof o.servername !== 'string' || o.servername === '' || isIP(o.servername) !== 0)) {
    throw new InvalidArgumentError(`tls.servername must be a host name (not an IP address: those are checked from the connect string), got ${describe(o.servername)}`);
  }
  if (o.rejectUnauthorized !== undefined && typeof o.rejectUnauthorized !== 'boolean') throw new InvalidArgumentError(`tls.rejectUnauthorized must be a boolean, got ${describe(o.rejectUnauthorized)}`);
  const check = o.checkServerIdentity;
  if (check !== undefined && check !== false && typeof check !== 'function') throw new InvalidArgumentError(`tls.checkServerIdentity must be false or a function, got ${describe(check)}`);
  const out: ConnectionOptions = {
    rejectUnauthorized: o.rejectUnauthorized ?? true,
    checkServerIdentity: check === false ? () => undefined : (check ?? defaultIdentityCheck),
  };
  if (o.ca !== undefined) out.ca = o.ca as ConnectionOptions['ca'];
  if (o.cert !== undefined) out.cert = o.cert as ConnectionOptions['cert'];
  if (o.key !== undefined) out.key = o.key as ConnectionOptions['key'];
  if (o.passphrase !== undefined) out.passphrase = o.passphrase;
  if (o.servername !== undefined) out.servername = o.servername;
  return Object.freeze(out);
}

/** What {@link secureConnections} reports about each TLS connection attempt. @internal */
export interface TlsHooks {
  /** The TLS handshake with `server` failed (or the server dropped us during it). */
  failed(error: TlsError): void;
  /** A TLS handshake completed: the failures in a row are over. */
  secured(): void;
}

/** Why a handshake failed, in words a user can act on. */
function explain(err: NodeJS.ErrnoException | undefined, server: string, servername: string | undefined): string {
  const code = err?.code ?? '';
  const name = servername ?? server.slice(0, server.lastIndexOf(':'));
  if (code === 'CERT_HAS_EXPIRED') return `the certificate of ${server} has expired: renew it`;
  if (code === 'CERT_NOT_YET_VALID') return `the certificate of ${server} is not valid yet (check the clocks)`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the certificate of ${server} is not issued for "${name}": connect by a name or address it lists, or set tls.servername`;
  if (/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_SIGNATURE_FAILURE|CERT_UNTRUSTED/.test(code)) return `the certificate of ${server} does not chain to the CA given in tls.ca (${code})`;
  if (/ALERT_(BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_REQUIRED|CERTIFICATE_EXPIRED|CERTIFICATE_UNKNOWN|HANDSHAKE_FAILURE|ACCESS_DENIED)/.test(code)) {
    return `${server} refused our client certificate (${code}): give tls.cert and tls.key issued by a CA in the server's ssl.trustStore, not expired`;
  }
  if (err === undefined || code === 'ECONNRESET' || code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return `${server} closed the connection during the TLS handshake: is it a secureClientPort? (a plain clientPort does not speak TLS)`;
  }
  return `the TLS handshake with ${server} failed (${code || err.message})`;
}

/**
 * Makes node-zookeeper-client connect this client's sockets with TLS: the one thing its
 * `connect` does differently is where the socket comes from, so this replaces that method on
 * this client only (before {@link interceptHandshake} wraps it) with the same steps over a TLS
 * socket. The handshake request goes out on `secureConnect`, so the client's connect timeout
 * covers the TCP and the TLS handshakes. The TLS socket runs over a TCP socket of ours, so that
 * `resetAndDestroy` (which the session uses to drop a connection without flushing; a TLS socket
 * refuses it) resets the TCP connection underneath.
 * @internal
 */
export function secureConnections(client: RawClient, options: ResolvedTls, hooks: TlsHooks): void {
  const cm = client.connectionManager as RawConnectionManager & {
    connectTimeoutHandler?: NodeJS.Timeout;
    findNextServer(cb: (server: { host: string; port: number }) => void): void;
    onSocketConnectTimeout(): void;
    onSocketDrain(): void;
    onSocketClosed(hadError: boolean): void;
    onSocketError(err: Error): void;
  };
  cm.connect = function (this: typeof cm): void {
    this.setState(CM_STATE.CONNECTING);
    this.findNextServer((server) => {
      // Closed meanwhile (the spin delay): open nothing.
      if (this.state === CM_STATE.CLOSED) return;
      const socket = openTls(server.host, server.port, options, hooks);
      this.socket = socket;
      this.connectTimeoutHandler = setTimeout(() => this.onSocketConnectTimeout(), this.connectTimeout);
      // Looked up at each event, as the client binds them per socket: the session's wrappers run.
      socket.on('secureConnect', () => this.onSocketConnected());
      socket.on('data', (chunk: Buffer) => this.onSocketData(chunk));
      socket.on('drain', () => this.onSocketDrain());
      socket.on('close', (hadError: boolean) => this.onSocketClosed(hadError));
      socket.on('error', (err: Error) => this.onSocketError(err));
    });
  };
}

/** One TLS connection over a TCP socket of ours, reporting a failed handshake once. */
function openTls(host: string, port: number, options: ResolvedTls, hooks: TlsHooks): TLSSocket {
  const server = `${host}:${port}`;
  const tcp: Socket = tcpConnect({ host, port });
  tcp.setNoDelay(true);
  // An IP address is checked against the certificate's IP SANs and sent as no SNI (RFC 6066).
  const servername = options.servername ?? (isIP(host) === 0 ? host : undefined);
  const socket = tlsConnect({ ...options, socket: tcp, host, servername });
  let tcpUp = false;
  let secure = false;
  let reported = false;
  const report = (err: NodeJS.ErrnoException | undefined): void => {
    if (reported) return;
    reported = true;
    hooks.failed(new TlsError(`TLS with ${server} failed: ${explain(err, server, options.servername)}`, server, { cause: err }));
  };
  tcp.once('connect', () => {
    tcpUp = true;
  });
  socket.once('secureConnect', () => {
    secure = true;
    hooks.secured();
  });
  socket.on('error', (err: NodeJS.ErrnoException) => {
    // Before the handshake completed, any error is the handshake's; after it, only TLS alerts
    // (TLS 1.3: the server checks our certificate after we finished ours).
    if ((tcpUp && !secure) || (secure && /^ERR_SSL_/.test(err.code ?? ''))) report(err);
  });
  socket.once('close', () => {
    if (tcpUp && !secure) report(undefined);
  });
  socket.resetAndDestroy = function (this: TLSSocket): TLSSocket {
    tcp.resetAndDestroy();
    this.destroy();
    return this;
  };
  return socket;
}

/** The number of servers in a connect string. @internal */
export function serverCount(connectString: string): number {
  const slash = connectString.indexOf('/');
  return (slash >= 0 ? connectString.slice(0, slash) : connectString).split(',').length;
}

/**
 * For a plain session: when a server closes a connection without a byte in answer to our
 * handshake, asks it once (one probe at a time) whether it speaks TLS there, with a bare TLS
 * handshake (no certificates: a TLS server answers with its own, or with an alert). A port that
 * does is a `secureClientPort` the session was not told about: reported as a failed handshake,
 * so that `connect` fails typed and fast instead of redialling until its deadline. Installed
 * before {@link interceptHandshake} wraps the handshake.
 * @internal
 */
export function detectTlsPorts(client: RawClient, hooks: TlsHooks): void {
  const cm = client.connectionManager;
  const handshake = cm.onSocketConnected;
  let probing = false;
  cm.onSocketConnected = function (this: RawConnectionManager): void {
    const socket = this.socket;
    if (socket) {
      let answered = false;
      // Read now: a closed socket no longer knows its peer.
      const host = socket.remoteAddress;
      const port = socket.remotePort;
      socket.once('data', () => (answered = true));
      socket.once('close', () => {
        if (answered || probing || host === undefined || port === undefined) return;
        probing = true;
        probeTls(host, port, (speaks) => {
          probing = false;
          if (speaks) hooks.failed(new TlsError(`${host}:${port} speaks TLS (a secureClientPort) and closed our plain connection: give the session the tls option, or connect to the plain clientPort`, `${host}:${port}`));
        });
      });
    }
    handshake.call(this);
  };
}

/** Whether `host:port` answers a TLS ClientHello as a TLS server (within a second). */
function probeTls(host: string, port: number, done: (speaks: boolean) => void): void {
  let settled = false;
  const finish = (speaks: boolean): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    socket.destroy();
    done(speaks);
  };
  const socket = tlsConnect({ host, port, rejectUnauthorized: false, checkServerIdentity: () => undefined });
  const timer = setTimeout(() => finish(false), 1000);
  // A probe never keeps the process alive.
  timer.unref();
  socket.unref();
  socket.once('secureConnect', () => finish(true));
  // A TLS alert (e.g. the server wants a client certificate) is a TLS server too; a reset or
  // bytes that are no TLS record are not.
  socket.once('error', (err: NodeJS.ErrnoException) => finish(/^ERR_SSL_(SSLV3_|TLSV1_|TLSV13_)?ALERT/.test(err.code ?? '')));
  socket.once('close', () => finish(false));
}
