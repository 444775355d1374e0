/**
 * Runs real Apache Curator semaphores for the interop tests: finds Debian's Curator jars (like
 * src/testing/java.ts finds ZooKeeper's), compiles CuratorSemaphoreAgent.java with javac into a
 * temp dir, and drives one agent JVM per call of {@link CuratorAgent.start} over stdin/stdout.
 * Missing Java or Curator is an error naming the package to install, never a skipped test.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { locateZooKeeper } from '../../src/testing/index.js';
import { pickJar } from '../../src/testing/java.js';
import { JavaAgent } from './agent.js';

/**
 * Curator's jars (Debian's libcurator-recipes-java, libcurator-discovery-java and their
 * dependencies: curator-x-discovery reads and writes its instances with Jackson), beside ZooKeeper's.
 */
export const CURATOR_JARS: readonly string[] = [
  'curator-recipes.jar',
  'curator-framework.jar',
  'curator-client.jar',
  'guava.jar',
  'curator-x-discovery.jar',
  'jackson-databind.jar',
  'jackson-core.jar',
  'jackson-annotations.jar',
];

/** What installs them (and javac) on Debian. */
export const CURATOR_INSTALL_COMMAND = 'apt-get update && apt-get install -y libcurator-recipes-java libcurator-discovery-java';

/** An agent's source in the repository's test/java/ (from build/test/java/curator.js up to it). */
function agentSource(className: string): string {
  return fileURLToPath(new URL(`../../../test/java/${className}.java`, import.meta.url));
}

function readable(path: string, mode = constants.R_OK): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** Java, javac and the classpath that runs Curator. */
export interface CuratorInstallation {
  readonly java: string;
  readonly javac: string;
  readonly classpath: string;
}

/**
 * Locates java, javac and the Curator jars: in `CURATOR_JARS_DIR`, else where ZooKeeper's jars
 * were found (`ZK_JARS_DIR`, default /usr/share/java); versioned names (`guava-31.1-jre.jar`) too.
 * @throws Error naming what is missing and the command that installs it.
 */
export function locateCurator(env: NodeJS.ProcessEnv = process.env): CuratorInstallation {
  const zk = locateZooKeeper(env);
  const dir = env.CURATOR_JARS_DIR || zk.jarsDir;
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => readable(join(dir, f)));
  } catch {
    // missing below
  }
  const jars = CURATOR_JARS.map((jar) => pickJar(files, jar.slice(0, -'.jar'.length)));
  const missing = CURATOR_JARS.filter((_, i) => jars[i] === undefined).map((jar) => join(dir, jar));
  const candidates = [env.JAVAC, join(dirname(zk.java), 'javac'), ...(env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, 'javac'))];
  const javac = candidates.find((c): c is string => c !== undefined && readable(c, constants.X_OK));
  if (!javac) missing.push('javac (JAVAC, next to java, or on PATH)');
  if (missing.length > 0 || !javac) {
    throw new Error(
      `Curator interop tests cannot run: not found: ${missing.join(', ')}. Install with: ${CURATOR_INSTALL_COMMAND}${javac ? '' : ' default-jdk-headless'} ` +
        '(node scripts/ensure-zookeeper.mjs does it as root); these tests fail rather than skip without them.',
    );
  }
  // The agent talks on stdout, where an unconfigured logback (an Apache release's lib/) would log.
  const zkJars = zk.classpath.split(delimiter).filter((j) => !/\/logback-[^/]*$/.test(j));
  return { java: zk.java, javac, classpath: [...jars.map((jar) => join(dir, jar as string)), ...zkJars].join(delimiter) };
}

const compiled = new Map<string, { dir: string; installation: CuratorInstallation }>();

/**
 * Compiles the agent `className` (test/java/<className>.java) once per test process into a temp
 * dir (removed at exit); the dir to put on the classpath, and the installation that runs it.
 */
export function compileAgent(className = 'CuratorSemaphoreAgent'): { dir: string; installation: CuratorInstallation } {
  const done = compiled.get(className);
  if (done) return done;
  const installation = locateCurator();
  const source = agentSource(className);
  const dir = mkdtempSync(join(tmpdir(), 'zk-recipes-curator-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  // Every agent runs on the shared loop of AgentLoop.java.
  const r = spawnSync(installation.javac, ['-nowarn', '-d', dir, '-cp', installation.classpath, source, agentSource('AgentLoop')], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`javac ${source} failed (exit ${r.status ?? r.signal}): ${r.stderr}${r.stdout}`);
  const entry = { dir, installation };
  compiled.set(className, entry);
  return entry;
}

/** Which Curator class the agent uses (`mutex`: InterProcessMutex; its maxLeases is unused). */
export type CuratorSemaphoreClass = 'v2' | 'v1' | 'mutex';

/** The result of a stress run of the agent. */
export interface StressResult {
  grants: number;
  /** The highest value of the shared counter this side saw right after raising it. */
  maxSeen: number;
  /** How often this side saw the counter above maxLeases. */
  violations: number;
}

/**
 * One JVM with one Curator session, holding and waiting for leases of one semaphore on command.
 * Each `acquire` runs on its own thread with its own semaphore instance (a participant).
 */
export class CuratorAgent {
  private constructor(private readonly agent: JavaAgent) {}

  /** The agent's session id, as `wchc` prints it. */
  get sessionId(): string {
    return this.agent.sessionId;
  }

  /**
   * Starts an agent on `path` with `maxLeases`, and resolves once its session is up. With
   * `digest` (`user:password`) its client authenticates as that identity and creates every node
   * with `CREATOR_ALL_ACL`.
   */
  static async start(connectString: string, path: string, maxLeases: number, kind: CuratorSemaphoreClass = 'v2', options: { digest?: string } = {}): Promise<CuratorAgent> {
    const jvmArgs = options.digest === undefined ? [] : [`-Dcurator.test.digest=${options.digest}`];
    return new CuratorAgent(await JavaAgent.start('CuratorSemaphoreAgent', [connectString, path, String(maxLeases), kind], { name: 'Curator agent', jvmArgs }));
  }

  private next(match: (words: readonly string[]) => boolean, timeoutMs: number, what: string): Promise<readonly string[]> {
    return this.agent.next(match, timeoutMs, what);
  }

  private send(line: string): void {
    this.agent.send(line);
  }
  /**
   * Asks for `qty` leases under `id` (timeoutMs < 0: no limit). `started` resolves when the
   * agent's thread begins; `granted` with the lease node names, or null on Curator's timeout.
   */
  acquire(id: string, options: { timeoutMs?: number; qty?: number; deadlineMs?: number } = {}): { started: Promise<void>; granted: Promise<string[] | null> } {
    const deadline = options.deadlineMs ?? 60_000;
    const started = this.next((w) => w[0] === 'waiting' && w[1] === id, deadline, `"waiting ${id}"`).then(() => undefined);
    const granted = this.next((w) => ['acquired', 'timeout', 'error'].includes(w[0] ?? '') && w[1] === id, deadline, `the outcome of acquire ${id}`).then((w) => {
      if (w[0] === 'error') throw new Error(`Curator acquire ${id} failed: ${w.slice(2).join(' ')}`);
      return w[0] === 'acquired' ? w.slice(2) : null;
    });
    started.catch(() => undefined);
    granted.catch(() => undefined);
    this.send(`acquire ${id} ${options.timeoutMs ?? -1} ${options.qty ?? 1}`);
    return { started, granted };
  }

  /** Returns the leases of `id`; resolves once their nodes are deleted. */
  async release(id: string): Promise<void> {
    const done = this.next((w) => (w[0] === 'released' || w[0] === 'error') && w[1] === id, 30_000, `the release of ${id}`);
    this.send(`release ${id}`);
    const w = await done;
    if (w[0] === 'error') throw new Error(`Curator release ${id} failed: ${w.slice(2).join(' ')}`);
  }

  /** `threads` participants, each `iterations` times: acquire, raise the counter, hold, lower it, release. */
  async stress(id: string, threads: number, iterations: number, counterPath: string, holdMs: number, deadlineMs = 120_000): Promise<StressResult> {
    const done = this.next((w) => (w[0] === 'stress-done' || w[0] === 'error') && w[1] === id, deadlineMs, `the stress run ${id}`);
    this.send(`stress ${id} ${threads} ${iterations} ${counterPath} ${holdMs}`);
    const w = await done;
    if (w[0] === 'error') throw new Error(`Curator stress ${id} failed: ${w.slice(2).join(' ')}`);
    return { grants: Number(w[2]), maxSeen: Number(w[3]), violations: Number(w[4]) };
  }

  /** Closes the Curator client (its session) and waits for the JVM to exit; kills it past 20 s. */
  close(): Promise<void> {
    return this.agent.close();
  }
}
