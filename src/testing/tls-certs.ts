import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkNonEmptyString, checkOptions, optionKeys } from './check.js';
import { makeWorkDir } from './server.js';
import type { TlsOptions } from '../client/tls.js';

const run = promisify(execFile);

/**
 * What a ZooKeeper server needs for its `secureClientPort`, as PEM files (ZooKeeper 3.8 reads
 * them with `ssl.keyStore.type=PEM`): pass it as the `tls` option of {@link TestingServer.start}
 * or {@link TestingCluster.start}.
 * @group Testing
 */
export interface ServerTlsFiles {
  /** PEM file holding the server's private key (unencrypted PKCS#8) and its certificate. */
  readonly keyStore: string;
  /** PEM file of the CA certificate(s) a client certificate must chain to. */
  readonly trustStore: string;
  /** Whether the server asks clients for a certificate: `need` (default, ZooKeeper's), `want` or `none`. */
  readonly clientAuth?: 'need' | 'want' | 'none';
}

/** The keys of {@link ServerTlsFiles}. @internal */
export const SERVER_TLS_KEYS = optionKeys<ServerTlsFiles>({ keyStore: true, trustStore: true, clientAuth: true });

/** A certificate and its key, as PEM files. @group Testing */
export interface CertificateFiles {
  /** The certificate, PEM. */
  readonly cert: string;
  /** Its private key, PEM (unencrypted PKCS#8). */
  readonly key: string;
}

/**
 * Certificates for TLS tests, made by {@link generateTestCertificates} (all EC P-256, on the
 * `openssl` command line): a CA, a server certificate for `127.0.0.1` and `localhost`, a client
 * certificate, and for negative tests an expired server certificate and a second, unrelated CA
 * with a client certificate of its own.
 * @group Testing
 */
export interface TestCertificates {
  /** Folder holding every file. */
  readonly dir: string;
  /** The CA that signs the server and client certificates. */
  readonly ca: CertificateFiles;
  /** Server certificate, SAN `IP:127.0.0.1` and `DNS:localhost`, valid for ten years. */
  readonly server: CertificateFiles;
  /** Client certificate (`CN=zk-recipes test client`). */
  readonly client: CertificateFiles;
  /** A server certificate of the same CA and names that expired yesterday. */
  readonly expiredServer: CertificateFiles;
  /** A second CA, unrelated to the first. */
  readonly otherCa: CertificateFiles;
  /** A client certificate signed by {@link TestCertificates.otherCa} (a server trusting `ca` refuses it). */
  readonly otherClient: CertificateFiles;
  /** The server side: key store of `server`, trust store of `ca`. */
  readonly serverTls: ServerTlsFiles;
  /** The server side with the expired certificate. */
  readonly expiredServerTls: ServerTlsFiles;
  /** The session's `tls` option: trusts `ca`, presents `client` (contents read, as Buffers). */
  readonly clientTls: TlsOptions;
  /** A client that trusts only `otherCa` (and presents `client`): refuses the test servers. */
  readonly otherCaTls: TlsOptions;
  /** A client that trusts `ca` but presents `otherClient`: the test servers refuse it. */
  readonly otherClientTls: TlsOptions;
}

/** Options of {@link generateTestCertificates}. @group Testing */
export interface GenerateCertificatesOptions {
  /** Folder to write into (created if needed); default a new temp folder, removed with the process's test kit folders. */
  dir?: string;
  /** The `openssl` executable (default `openssl` on `PATH`). */
  openssl?: string;
}

/** The keys of {@link GenerateCertificatesOptions}. @internal */
export const GENERATE_CERTIFICATES_KEYS = optionKeys<GenerateCertificatesOptions>({ dir: true, openssl: true });

/** Thrown when the `openssl` command line tool is missing or fails. @group Testing */
export class CertificateToolError extends Error {
  /** Stable error code. */
  readonly code = 'CERTIFICATE_TOOL_FAILED';
  /** Creates the error; the message says what failed and how to install openssl. */
  constructor(message: string, options?: ErrorOptions) {
    super(`${message}. The test kit makes certificates with the openssl command line tool (Debian: apt-get install openssl; or set the openssl option)`, options);
    this.name = 'CertificateToolError';
  }
}

const CURVE = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/**
 * Generates the certificates of {@link TestCertificates} into `dir` (about a dozen `openssl`
 * calls, well under a second). Not for production: keys are unencrypted and the CA's key is
 * left beside its certificate.
 * @throws CertificateToolError when `openssl` is missing or fails.
 * @group Testing
 */
export async function generateTestCertificates(options: GenerateCertificatesOptions = {}): Promise<TestCertificates> {
  const o = checkOptions(options, 'generateTestCertificates', GENERATE_CERTIFICATES_KEYS);
  if (o.dir !== undefined) checkNonEmptyString(o.dir, 'dir');
  if (o.openssl !== undefined) checkNonEmptyString(o.openssl, 'openssl');
  const openssl = o.openssl ?? 'openssl';
  const dir = o.dir ?? (await makeWorkDir('zk-recipes-certs-'));
  await mkdir(dir, { recursive: true });
  const at = (name: string): string => join(dir, name);
  const tool = async (args: string[]): Promise<void> => {
    try {
      await run(openssl, args, { cwd: dir, timeout: 30_000 });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      throw new CertificateToolError(e.code === 'ENOENT' ? `${openssl} not found` : `${openssl} ${args[0]} failed: ${(e.stderr ?? e.message).trim()}`, { cause: err });
    }
  };
  const selfSigned = async (name: string, cn: string): Promise<CertificateFiles> => {
    const files = { cert: at(`${name}.pem`), key: at(`${name}.key`) };
    await tool(['req', '-x509', ...CURVE, '-keyout', files.key, '-out', files.cert, '-days', '3650', '-subj', `/CN=${cn}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    return files;
  };
  const signed = async (name: string, cn: string, ca: CertificateFiles, days: number, ext: string): Promise<CertificateFiles> => {
    const files = { cert: at(`${name}.pem`), key: at(`${name}.key`) };
    const csr = at(`${name}.csr`);
    const extFile = at(`${name}.ext`);
    await writeFile(extFile, `${ext}\n`);
    await tool(['req', '-new', ...CURVE, '-keyout', files.key, '-out', csr, '-subj', `/CN=${cn}`]);
    // -days -1: not after a day ago, i.e. expired (OpenSSL 3.0 has no explicit start date here).
    await tool(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', `0x7${randomBytes(8).toString('hex')}`, '-days', String(days), '-extfile', extFile, '-out', files.cert]);
    await rm(csr, { force: true });
    await rm(extFile, { force: true });
    return files;
  };
  const serverExt = 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature';
  const clientExt = 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature';
  const ca = await selfSigned('ca', 'zk-recipes test CA');
  const otherCa = await selfSigned('other-ca', 'zk-recipes unrelated test CA');
  const server = await signed('server', 'localhost', ca, 3650, serverExt);
  const expiredServer = await signed('expired-server', 'localhost', ca, -1, serverExt);
  const client = await signed('client', 'zk-recipes test client', ca, 3650, clientExt);
  const otherClient = await signed('other-client', 'zk-recipes unrelated test client', otherCa, 3650, clientExt);
  const keyStore = async (name: string, files: CertificateFiles): Promise<string> => {
    const path = at(`${name}-keystore.pem`);
    await writeFile(path, Buffer.concat([await readFile(files.key), await readFile(files.cert)]));
    return path;
  };
  const clientOptions = async (trust: CertificateFiles, id: CertificateFiles): Promise<TlsOptions> => ({
    ca: await readFile(trust.cert),
    cert: await readFile(id.cert),
    key: await readFile(id.key),
  });
  return {
    dir,
    ca,
    server,
    client,
    expiredServer,
    otherCa,
    otherClient,
    serverTls: { keyStore: await keyStore('server', server), trustStore: ca.cert },
    expiredServerTls: { keyStore: await keyStore('expired-server', expiredServer), trustStore: ca.cert },
    clientTls: await clientOptions(ca, client),
    otherCaTls: await clientOptions(otherCa, client),
    otherClientTls: await clientOptions(ca, otherClient),
  };
}
