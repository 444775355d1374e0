import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { ClosedError, IllegalStateError } from '../errors.js';
import { checkBoolean, checkDeadline, checkOptions, checkTimeout, optionKeys } from './check.js';
import { trackPid, untrackPid } from './cleanup.js';
import * as fourLetter from './four-letter.js';
import type { ConnectionInfo, MntrStats, ServerStatus, SessionDump } from './four-letter.js';
import type { ZooKeeperInstallation } from './java.js';
import { LOOPBACK } from './ports.js';
import { WaitTimeoutError } from './wait.js';

/** JVM flags of every test server: small heap, quick start, findable with `pgrep -f zkrecipes.testing`. @group Testing */
export const TEST_JVM_ARGS: readonly string[] = [
  '-Xmx128m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Xshare:auto',
  '-XX:-UsePerfData',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.net.preferIPv4Stack=true',
  '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
  '-Dzkrecipes.testing=1',
];

// Why a wrapper: if node is SIGKILLed no handler runs, but the pipe on the wrapper's
// stdin hits EOF; a watcher subshell then SIGKILLs java and removes the temp dir ($1).
// Java's pid goes out on fd 3. Background jobs get /dev/null as stdin unless
// redirected, hence the fd 4 copy.
const WRAPPER = `
dir=$1
shift
exec 4<&0
"$@" </dev/null 3>&- 4<&- &
jpid=$!
echo "$jpid" >&3
exec 3>&-
{
  while IFS= read -r _; do :; done
  kill -KILL "$jpid"
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$jpid" || break; sleep 0.1; done
  if [ -n "$dir" ]; then rm -rf -- "$dir"; fi
} <&4 >/dev/null 2>&1 &
wpid=$!
exec 4<&-
wait "$jpid"
rc=$?
kill "$wpid" 2>/dev/null
exit "$rc"
`;

const LOG_LINES = 300;

/** What a server with logback on its classpath (an Apache release's lib/) logs: warnings, to stderr. */
const LOGBACK_XML = `<configuration>
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR"/></root>
</configuration>
`;

/** Error thrown when a ZooKeeper JVM exits or does not serve before its deadline. @group Testing */
export class ZooKeeperStartError extends Error {
  /** Stable error code. */
  readonly code = 'ZOOKEEPER_START_FAILED';
  /** Last lines the JVM printed. */
  readonly logTail: string;
  /** True when the JVM could not bind a port (another process holds it). */
  readonly portInUse: boolean;

  /** Builds the error; `logTail` is appended to the message. */
  constructor(message: string, logTail: string, portInUse: boolean) {
    super(`${message}${logTail ? `\n--- ZooKeeper output (tail) ---\n${logTail}` : ''}`);
    this.name = 'ZooKeeperStartError';
    this.logTail = logTail;
    this.portInUse = portInUse;
  }
}

/** How a ZooKeeper JVM is launched. @internal */
export interface ZooKeeperProcessInit {
  /** Java and classpath. */
  readonly installation: ZooKeeperInstallation;
  /** Folder owned by this process: config file and JVM working directory. */
  readonly workDir: string;
  /** Folder the wrapper removes if node dies without cleaning up (`''`: none). */
  readonly cleanupDir: string;
  /** ZooKeeper data directory. */
  readonly dataDir: string;
  /** Client port. */
  readonly port: number;
  /** TLS client port (`secureClientPort`), if the server has one. */
  readonly securePort?: number;
  /** Full text of zoo.cfg. */
  readonly config: string;
  /** Default deadline for the JVM to come up, in milliseconds. */
  readonly startTimeoutMs: number;
  /** Extra JVM flags, after {@link TEST_JVM_ARGS}. */
  readonly jvmArgs: readonly string[];
}

/** Options of {@link ZooKeeperProcess.restart}. @group Testing */
export interface RestartOptions {
  /** Deadline for the JVM to come up, in milliseconds (default: the start timeout). */
  timeoutMs?: number;
  /**
   * Wait until the server serves clients (`srvr` reports a mode). Default true.
   * Set false to restart a member of an ensemble that has no quorum yet.
   */
  waitUntilServing?: boolean;
}

/** The keys of {@link RestartOptions}. @internal */
export const RESTART_OPTION_KEYS = optionKeys<RestartOptions>({ timeoutMs: true, waitUntilServing: true });
/** The keys of the options of {@link ZooKeeperProcess.stop}. @internal */
export const STOP_OPTION_KEYS = optionKeys<NonNullable<Parameters<ZooKeeperProcess['stop']>[0]>>({ timeoutMs: true });

/**
 * One ZooKeeper JVM on 127.0.0.1: the common base of {@link TestingServer} and
 * {@link ClusterMember}. It starts, stops, kills and restarts the JVM on the same port and
 * data dir, and asks it four-letter words.
 * @group Testing
 */
export abstract class ZooKeeperProcess {
  /** Address the server listens on: always 127.0.0.1. */
  readonly host = LOOPBACK;
  /** Client port. */
  readonly port: number;
  /** Data directory (snapshots and transaction logs). */
  readonly dataDir: string;
  /** Folder holding zoo.cfg; the JVM's working directory. */
  readonly workDir: string;
  /** TLS client port (`secureClientPort`), when started with the `tls` option. */
  readonly securePort: number | undefined;

  readonly #init: ZooKeeperProcessInit;
  readonly #log: string[] = [];
  #child: ChildProcess | undefined;
  #javaPid: number | undefined;
  #exited: Promise<void> = Promise.resolve();
  #closed = false;

  /** Sets up the process; nothing runs until {@link ZooKeeperProcess.restart}. */
  protected constructor(init: ZooKeeperProcessInit) {
    this.#init = init;
    this.port = init.port;
    this.dataDir = init.dataDir;
    this.workDir = init.workDir;
    this.securePort = init.securePort;
  }

  /** `127.0.0.1:PORT`, for a client. */
  get connectString(): string {
    return `${this.host}:${this.port}`;
  }

  /**
   * `127.0.0.1:SECUREPORT`, for a client with the `tls` option.
   * @throws IllegalStateError when the server was started without `tls`.
   */
  get secureConnectString(): string {
    if (this.securePort === undefined) throw new IllegalStateError(`ZooKeeper server ${this.connectString} has no TLS port: start it with the tls option`);
    return `${this.host}:${this.securePort}`;
  }

  /** Pid of the java process while it runs. */
  get pid(): number | undefined {
    return this.#javaPid;
  }

  /** True between a start and the JVM's exit. */
  get running(): boolean {
    return this.#child !== undefined;
  }

  /** Last lines (up to 300) the JVM printed on stdout and stderr: WARN and above. */
  logs(): string[] {
    return [...this.#log];
  }

  /**
   * Starts the JVM again on the same port and data dir (stopping it first if it runs),
   * and waits until it serves. Options are checked before anything is stopped
   * (`InvalidArgumentError`); after `close()` it rejects with `ClosedError`.
   */
  async restart(options: RestartOptions = {}): Promise<void> {
    const o = checkOptions(options, 'restart', RESTART_OPTION_KEYS);
    checkDeadline(o.timeoutMs, 'timeoutMs', this.#init.startTimeoutMs);
    checkBoolean(o.waitUntilServing, 'waitUntilServing', true);
    if (this.#closed) throw new ClosedError(`ZooKeeper server ${this.connectString} is closed`);
    await this.stop();
    await this.launch(options);
  }

  /**
   * Stops the JVM gracefully (SIGTERM); SIGKILLs it if it has not exited after `timeoutMs` (0 to
   * 2^31-1, default 5000). A bad option is refused before anything is stopped.
   */
  async stop(options: { timeoutMs?: number } = {}): Promise<void> {
    const killAfterMs = checkTimeout(checkOptions(options, 'stop', STOP_OPTION_KEYS).timeoutMs, 'timeoutMs') ?? 5000;
    const pid = this.#javaPid;
    if (pid === undefined) return keepAlive(this.#exited);
    signal(pid, 'SIGTERM');
    const timer = setTimeout(() => signal(pid, 'SIGKILL'), killAfterMs);
    try {
      await keepAlive(this.#exited);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills the JVM at once (SIGKILL), like a crash, and waits for it to exit. */
  async kill(): Promise<void> {
    const pid = this.#javaPid;
    if (pid !== undefined) signal(pid, 'SIGKILL');
    await keepAlive(this.#exited);
  }

  /** Marks the process closed (no more restarts) and stops the JVM. */
  protected async shutdown(): Promise<void> {
    this.#closed = true;
    await this.stop();
  }

  /** Sends a four-letter word to this server and returns the raw reply. */
  fourLetterWord(word: string, options?: fourLetter.FourLetterWordOptions): Promise<string> {
    return fourLetter.fourLetterWord(this.host, this.port, word, options);
  }

  /** True when the server answers `ruok` with `imok`. */
  ruok(options?: fourLetter.FourLetterWordOptions): Promise<boolean> {
    return fourLetter.ruok(this.host, this.port, options);
  }

  /** Parsed `srvr`; undefined while the server does not serve. */
  srvr(options?: fourLetter.FourLetterWordOptions): Promise<ServerStatus | undefined> {
    return fourLetter.srvr(this.host, this.port, options);
  }

  /** Parsed `mntr` (`zk_znode_count`, `zk_watch_count`, `zk_server_state`, ...). */
  mntr(options?: fourLetter.FourLetterWordOptions): Promise<MntrStats> {
    return fourLetter.mntr(this.host, this.port, options);
  }

  /** Parsed `wchp`: watching session ids by path. */
  watchesByPath(options?: fourLetter.FourLetterWordOptions): Promise<Map<string, string[]>> {
    return fourLetter.watchesByPath(this.host, this.port, options);
  }

  /** Parsed `wchc`: watched paths by session id. */
  watchesBySession(options?: fourLetter.FourLetterWordOptions): Promise<Map<string, string[]>> {
    return fourLetter.watchesBySession(this.host, this.port, options);
  }

  /** Parsed `cons`: client connections. */
  connections(options?: fourLetter.FourLetterWordOptions): Promise<ConnectionInfo[]> {
    return fourLetter.cons(this.host, this.port, options);
  }

  /** Parsed `dump`: on the leader, the sessions it tracks; on any member, ephemerals by owner. */
  dump(options?: fourLetter.FourLetterWordOptions): Promise<SessionDump> {
    return fourLetter.dump(this.host, this.port, options);
  }

  /** Writes zoo.cfg, spawns the JVM and waits until it is up. */
  protected async launch(options: RestartOptions = {}): Promise<void> {
    const { installation, workDir, config, jvmArgs } = this.#init;
    const configFile = join(workDir, 'zoo.cfg');
    await writeFile(configFile, config);
    // logback without a configuration logs everything at DEBUG: give it ours (warnings, stderr).
    const logging: string[] = [];
    if (installation.logging === 'logback') {
      const logback = join(workDir, 'logback.xml');
      await writeFile(logback, LOGBACK_XML);
      logging.push(`-Dlogback.configurationFile=${logback}`);
    }
    this.#log.length = 0;
    const child = spawn(
      'bash',
      [
        '-c',
        WRAPPER,
        'zk-recipes-wrapper',
        this.#init.cleanupDir,
        installation.java,
        ...TEST_JVM_ARGS,
        ...logging,
        ...jvmArgs,
        '-cp',
        installation.classpath,
        'org.apache.zookeeper.server.quorum.QuorumPeerMain',
        configFile,
      ],
      { cwd: workDir, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] },
    );
    // Why unref: a test that forgets close() must not hang node; the exit handler
    // and the wrapper still kill the JVM. Every wait below holds a ref'd timer.
    child.unref();
    for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
    this.#child = child;
    // 'close', not 'exit': it waits for stdout/stderr to drain, so the log tail is complete.
    this.#exited = new Promise((resolve) => {
      child.once('close', () => {
        if (this.#javaPid !== undefined) untrackPid(this.#javaPid);
        this.#javaPid = undefined;
        this.#child = undefined;
        resolve();
      });
    });
    this.#capture(child.stdout);
    this.#capture(child.stderr);
    try {
      const up = (async () => {
        this.#javaPid = await readPid(child.stdio[3] as Readable, this.#exited);
        trackPid(this.#javaPid);
        await this.#waitUntilUp(options);
      })();
      await keepAlive(up);
    } catch (error) {
      await this.kill();
      if (error instanceof ZooKeeperStartError) throw error;
      throw this.#startError(error instanceof Error ? error.message : String(error));
    }
  }

  #capture(stream: Readable | null): void {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      this.#log.push(...lines);
      if (this.#log.length > LOG_LINES) this.#log.splice(0, this.#log.length - LOG_LINES);
    });
  }

  #startError(message: string): ZooKeeperStartError {
    const tail = this.#log.slice(-40).join('\n');
    const portInUse = /Address already in use|BindException/.test(tail);
    return new ZooKeeperStartError(
      `ZooKeeper on ${this.connectString} (data dir ${this.dataDir}) did not start: ${message}`,
      tail,
      portInUse,
    );
  }

  // Ready = our JVM (checked by its working dir, in case another server took the port)
  // answers ruok and, unless told otherwise, srvr reports a mode. Polls; no fixed sleeps.
  async #waitUntilUp(options: RestartOptions): Promise<void> {
    const { timeoutMs = this.#init.startTimeoutMs, waitUntilServing = true } = options;
    const deadline = performance.now() + timeoutMs;
    let exited = false;
    void this.#exited.then(() => (exited = true));
    let ours = false;
    while (!exited) {
      const left = deadline - performance.now();
      if (left <= 0) throw new WaitTimeoutError(`not serving after ${timeoutMs} ms`);
      const ask = { timeoutMs: Math.min(1000, left) };
      try {
        if (!ours && (await this.ruok(ask))) {
          const envi = await this.fourLetterWord('envi', ask);
          if (!envi.includes(`user.dir=${this.workDir}\n`)) {
            throw new ZooKeeperStartError(
              `port ${this.port} is answered by another ZooKeeper`,
              this.#log.slice(-40).join('\n'),
              true,
            );
          }
          ours = true;
        }
        if (ours && (!waitUntilServing || (await this.srvr(ask)) !== undefined)) return;
      } catch (error) {
        if (error instanceof ZooKeeperStartError) throw error;
        // not listening yet
      }
      await Promise.race([delay(50), this.#exited]);
    }
    throw this.#startError(`the JVM exited`);
  }
}

/** Awaits `promise` while holding a ref'd timer: the child and its pipes are unref'd. */
async function keepAlive<T>(promise: Promise<T>): Promise<T> {
  const timer = setInterval(() => {}, 60_000);
  try {
    return await promise;
  } finally {
    clearInterval(timer);
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** Reads the first line (java's pid) that the wrapper writes on fd 3. */
async function readPid(stream: Readable, exited: Promise<void>): Promise<number> {
  let text = '';
  const line = new Promise<string>((resolve, reject) => {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) resolve(text);
    });
    stream.once('error', reject);
  });
  const result = await Promise.race([line, exited.then(() => undefined)]);
  const pid = Number.parseInt(result ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error('the wrapper did not report a java pid');
  return pid;
}
