import { readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { InvalidArgumentError } from '../errors.js';
import { checkNonEmptyString, checkOptions, describe } from './check.js';
import { pickJar, ZooKeeperNotInstalledError, type ZooKeeperInstallation } from './java.js';
import { LOOPBACK } from './ports.js';
import { generateTestCertificates, SERVER_TLS_KEYS, type ServerTlsFiles, type TestCertificates } from './tls-certs.js';

/**
 * The Netty 4 jars ZooKeeper's `NettyServerCnxnFactory` needs (the only connection factory with
 * TLS); Debian's `libnetty-java`, which `zookeeper` depends on, puts them in /usr/share/java.
 * @internal
 */
export const NETTY_JARS: readonly string[] = [
  'netty-buffer',
  'netty-codec',
  'netty-common',
  'netty-handler',
  'netty-resolver',
  'netty-transport',
  'netty-transport-native-epoll',
  'netty-transport-native-unix-common',
];

/**
 * The installation with Netty on its classpath: an Apache release's lib/ has it already;
 * from a jars folder (Debian's) the Netty jars are added.
 * @throws ZooKeeperNotInstalledError naming the missing jars.
 * @internal
 */
export function withNetty(installation: ZooKeeperInstallation): ZooKeeperInstallation {
  if (/netty-handler[-.]/.test(installation.classpath)) return installation;
  let jars: string[] = [];
  try {
    jars = readdirSync(installation.jarsDir).filter((f) => f.endsWith('.jar'));
  } catch {
    // reported as missing below
  }
  const found = NETTY_JARS.map((a) => pickJar(jars, a));
  const missing = NETTY_JARS.filter((_, i) => found[i] === undefined).map((a) => join(installation.jarsDir, `${a}.jar`));
  if (missing.length > 0) throw new ZooKeeperNotInstalledError(missing);
  return { ...installation, classpath: [installation.classpath, ...(found as string[]).map((j) => join(installation.jarsDir, j))].join(delimiter) };
}

/**
 * Checks the test kit's `tls` option (`true`, or {@link ServerTlsFiles}) before anything starts.
 * @internal
 */
export function checkServerTls(value: unknown): boolean | ServerTlsFiles | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  if (value === null || typeof value !== 'object') throw new InvalidArgumentError(`tls must be true, false or { keyStore, trustStore, clientAuth? } (PEM files), got ${describe(value)}`);
  const o = checkOptions(value as ServerTlsFiles, 'tls', SERVER_TLS_KEYS);
  checkNonEmptyString(o.keyStore, 'tls.keyStore');
  checkNonEmptyString(o.trustStore, 'tls.trustStore');
  if (o.clientAuth !== undefined && !['need', 'want', 'none'].includes(o.clientAuth)) throw new InvalidArgumentError(`tls.clientAuth must be 'need', 'want' or 'none', got ${describe(o.clientAuth)}`);
  return value as ServerTlsFiles;
}

/** The server side of a test server's TLS: generated certificates for `true`. @internal */
export async function serverTls(option: true | ServerTlsFiles, dir: string): Promise<{ files: ServerTlsFiles; certificates?: TestCertificates }> {
  if (option !== true) return { files: option };
  const certificates = await generateTestCertificates({ dir });
  return { files: certificates.serverTls, certificates };
}

/**
 * zoo.cfg lines of a `secureClientPort` on 127.0.0.1 (the plain `clientPort` stays, for
 * four-letter words and plain clients). @internal
 */
export function tlsConfig(files: ServerTlsFiles, securePort: number): string[] {
  return [
    `secureClientPort=${securePort}`,
    `secureClientPortAddress=${LOOPBACK}`,
    // Why: only the Netty factory speaks TLS; it serves the plain port too.
    'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
    `ssl.keyStore.location=${files.keyStore}`,
    'ssl.keyStore.type=PEM',
    `ssl.trustStore.location=${files.trustStore}`,
    'ssl.trustStore.type=PEM',
    `ssl.clientAuth=${files.clientAuth ?? 'need'}`,
  ];
}
