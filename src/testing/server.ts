import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDeadline, checkEnv, checkInt, checkLines, checkNonEmptyString, checkOptions, checkPort, MAX_TIMER_MS, optionKeys } from './check.js';
import { trackDir, untrackDir } from './cleanup.js';
import { locateZooKeeper, type ZooKeeperInstallation } from './java.js';
import { freePorts, LOOPBACK } from './ports.js';
import { ZooKeeperProcess, ZooKeeperStartError } from './zk-process.js';
import { InvalidArgumentError } from '../errors.js';
import { checkServerTls, serverTls, tlsConfig, withNetty } from './tls-server.js';
import type { ServerTlsFiles, TestCertificates } from './tls-certs.js';
import { checkSaslServer, withSasl, type SaslServerOptions } from './jaas.js';

/** Options shared by {@link TestingServer.start} and {@link TestingCluster.start}. @group Testing */
export interface ZooKeeperTestOptions {
  /**
   * ZooKeeper tick in milliseconds (default 200). The minimum session timeout is two ticks,
   * so the default allows 400 ms sessions and expiry tests take seconds.
   */
  tickTime?: number;
  /** Smallest session timeout the server grants, in milliseconds (default 2 x tickTime). */
  minSessionTimeout?: number;
  /** Largest session timeout the server grants, in milliseconds (default 60000). */
  maxSessionTimeout?: number;
  /** Extra zoo.cfg lines (`key=value`); they come last, so they override the defaults. */
  extraConfig?: readonly string[];
  /** Extra JVM flags. */
  jvmArgs?: readonly string[];
  /** Deadline for a JVM to serve after a start or restart, in milliseconds (default 30000). */
  startTimeoutMs?: number;
  /** Environment used to locate java and the jars (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /**
   * Also serve TLS on a `secureClientPort` (`secureConnectString`), on ZooKeeper's Netty
   * connection factory: `true` generates certificates ({@link generateTestCertificates}; the
   * server's `certificates`, with `certificates.clientTls` for the session's `tls` option), or
   * give the server's PEM files. The plain `clientPort` stays. Guide: [TLS](../../docs/security.md#tls).
   */
  tls?: boolean | ServerTlsFiles;
  /**
   * SASL DIGEST-MD5 users (a JAAS file the server logs in with) and the `sasl` ACL scheme;
   * see {@link SaslServerOptions}. Default none.
   */
  sasl?: SaslServerOptions;
}

/** The keys of {@link ZooKeeperTestOptions}. @internal */
export const ZOOKEEPER_TEST_OPTION_KEYS = optionKeys<ZooKeeperTestOptions>({
  tickTime: true,
  minSessionTimeout: true,
  maxSessionTimeout: true,
  extraConfig: true,
  jvmArgs: true,
  startTimeoutMs: true,
  env: true,
  tls: true,
  sasl: true,
});

/** Options of {@link TestingServer.start}. @group Testing */
export interface TestingServerOptions extends ZooKeeperTestOptions {
  /** Client port; default a free one (and another one if it turns out busy). */
  port?: number;
  /** Data directory; default a temp dir removed by `close()`. A given one is kept. */
  dataDir?: string;
}

/** The keys of {@link TestingServerOptions}. @internal */
export const TESTING_SERVER_OPTION_KEYS = optionKeys<TestingServerOptions, ZooKeeperTestOptions>({ port: true, dataDir: true }, ZOOKEEPER_TEST_OPTION_KEYS);

const PORT_ATTEMPTS = 5;

/**
 * Checks the options shared by servers and ensembles, before anything starts. @internal
 * @throws InvalidArgumentError naming the first bad option.
 */
export function checkTestOptions(options: ZooKeeperTestOptions, what: string, known: readonly string[]): void {
  checkOptions(options, what, known);
  const tick = checkInt(options.tickTime, 'tickTime', 1, 60_000, 200);
  const min = checkInt(options.minSessionTimeout, 'minSessionTimeout', 1, MAX_TIMER_MS, 2 * tick);
  const max = checkInt(options.maxSessionTimeout, 'maxSessionTimeout', 1, MAX_TIMER_MS, Math.max(60_000, min));
  if (max < min) throw new InvalidArgumentError(`maxSessionTimeout (${max}) must not be below minSessionTimeout (${min})`);
  checkLines(options.extraConfig, 'extraConfig');
  checkLines(options.jvmArgs, 'jvmArgs');
  checkDeadline(options.startTimeoutMs, 'startTimeoutMs', 30_000);
  checkEnv(options.env);
  checkSaslServer(options.sasl);
  checkServerTls(options.tls);
}

/**
 * The TLS part of a test server (see {@link ZooKeeperTestOptions.tls}): its zoo.cfg lines and, for
 * `tls: true`, the certificates generated into `dir`. @internal
 */
export async function testServerTls(options: ZooKeeperTestOptions, dir: string): Promise<{ lines(securePort: number | undefined): string[]; certificates?: TestCertificates }> {
  if (!options.tls) return { lines: () => [] };
  const { files, certificates } = await serverTls(options.tls, dir);
  return { lines: (securePort) => (securePort === undefined ? [] : tlsConfig(files, securePort)), certificates };
}

/** The installation, with Netty for a TLS server. @internal */
export function installationFor(options: ZooKeeperTestOptions): ZooKeeperInstallation {
  const installation = locateZooKeeper(options.env);
  return options.tls ? withNetty(installation) : installation;
}

/** The zoo.cfg lines every test server gets (before per-kind and extra lines). @internal */
export function baseConfig(
  options: ZooKeeperTestOptions,
  dataDir: string,
  port: number,
): string[] {
  const tickTime = options.tickTime ?? 200;
  return [
    `tickTime=${tickTime}`,
    `dataDir=${dataDir}`,
    `clientPort=${port}`,
    `clientPortAddress=${LOOPBACK}`,
    `minSessionTimeout=${options.minSessionTimeout ?? 2 * tickTime}`,
    // Why explicit: ZooKeeper's default maximum is only 20 ticks (4 s with tickTime 200).
    `maxSessionTimeout=${options.maxSessionTimeout ?? 60_000}`,
    'admin.enableServer=false',
    '4lw.commands.whitelist=*',
    // Why: many clients of one test come from 127.0.0.1; the default limit is 60.
    'maxClientCnxns=0',
    // Why: no fsync per write; a killed JVM still leaves its writes in the page cache.
    'forceSync=no',
  ];
}

/** Creates a private temp folder (real path: the JVM reports its cwd resolved). @internal */
export async function makeWorkDir(prefix: string): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  trackDir(dir);
  return dir;
}

/** Removes a folder made by {@link makeWorkDir}. @internal */
export async function removeWorkDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  untrackDir(dir);
}

/**
 * A standalone ZooKeeper server on 127.0.0.1 for tests, run from the jars {@link locateZooKeeper} finds.
 * `await using server = await TestingServer.start()`; connect with `server.connectString`.
 * Start, stop, kill and restart keep the port and data dir; `close()` also removes the temp dir.
 * Guide: [Testing with real ZooKeeper](../../docs/testing.md).
 * @group Testing
 */
export class TestingServer extends ZooKeeperProcess {
  #closing: Promise<void> | undefined;
  /** The certificates generated for `tls: true` (`certificates.clientTls` for a session); undefined otherwise. */
  readonly certificates: TestCertificates | undefined;

  private constructor(
    installation: ZooKeeperInstallation,
    workDir: string,
    dataDir: string,
    port: number,
    options: TestingServerOptions,
    tls: { lines: string[]; certificates?: TestCertificates; securePort?: number } = { lines: [] },
  ) {
    const config = [...baseConfig(options, dataDir, port), ...tls.lines, ...(options.extraConfig ?? [])];
    super({
      securePort: tls.securePort,
      installation,
      workDir,
      cleanupDir: workDir,
      dataDir,
      port,
      config: `${config.join('\n')}\n`,
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      jvmArgs: options.jvmArgs ?? [],
    });
    this.certificates = tls.certificates;
  }

  /**
   * Starts a server and resolves once it serves. Every option is checked first.
   * @throws InvalidArgumentError for a bad option (nothing is started).
   * @throws ZooKeeperNotInstalledError when java or the jars are missing.
   * @throws ZooKeeperStartError when the JVM exits or does not serve in time.
   */
  static async start(options: TestingServerOptions = {}): Promise<TestingServer> {
    checkTestOptions(options, 'TestingServer.start', TESTING_SERVER_OPTION_KEYS);
    checkPort(options.port, 'port', true);
    if (options.dataDir !== undefined) checkNonEmptyString(options.dataDir, 'dataDir');
    const installation = installationFor(options);
    for (let attempt = 1; ; attempt++) {
      const workDir = await makeWorkDir('zk-recipes-server-');
      const dataDir = options.dataDir ?? join(workDir, 'data');
      await mkdir(dataDir, { recursive: true });
      const free = await freePorts(2);
      const port = options.port ?? (free[0] as number);
      const securePort = options.tls ? (free.find((p) => p !== port) as number) : undefined;
      const generated = await testServerTls(options, join(workDir, 'tls'));
      const tls = { securePort, lines: generated.lines(securePort), certificates: generated.certificates };
      const server = new TestingServer(
        installation,
        workDir,
        dataDir,
        port,
        await withSasl(workDir, options),
        tls,
      );
      try {
        await server.launch();
        return server;
      } catch (error) {
        await server.close();
        const retry =
          error instanceof ZooKeeperStartError &&
          error.portInUse &&
          options.port === undefined &&
          attempt < PORT_ATTEMPTS;
        if (!retry) throw error;
      }
    }
  }

  /** Stops the server and removes its temp folder (a caller's `dataDir` is kept). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.shutdown();
      // A caller's dataDir lives outside workDir, so removing workDir never touches it.
      await removeWorkDir(this.workDir);
    })();
    return this.#closing;
  }

  /** Same as {@link TestingServer.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
