import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDeadline, checkEnv, checkInt, checkLines, checkNonEmptyString, checkOptions, checkPort, MAX_TIMER_MS, optionKeys } from './check.js';
import { trackDir, untrackDir } from './cleanup.js';
import { locateZooKeeper, type ZooKeeperInstallation } from './java.js';
import { freePort, LOOPBACK } from './ports.js';
import { ZooKeeperProcess, ZooKeeperStartError } from './zk-process.js';
import { InvalidArgumentError } from '../errors.js';
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

  private constructor(
    installation: ZooKeeperInstallation,
    workDir: string,
    dataDir: string,
    port: number,
    options: TestingServerOptions,
  ) {
    const config = [...baseConfig(options, dataDir, port), ...(options.extraConfig ?? [])];
    super({
      installation,
      workDir,
      cleanupDir: workDir,
      dataDir,
      port,
      config: `${config.join('\n')}\n`,
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      jvmArgs: options.jvmArgs ?? [],
    });
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
    const installation = locateZooKeeper(options.env);
    for (let attempt = 1; ; attempt++) {
      const workDir = await makeWorkDir('zk-recipes-server-');
      const dataDir = options.dataDir ?? join(workDir, 'data');
      await mkdir(dataDir, { recursive: true });
      const port = options.port ?? (await freePort());
      const server = new TestingServer(
        installation,
        workDir,
        dataDir,
        port,
        await withSasl(workDir, options),
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
