import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { checkEnv } from './check.js';

/** Where the Debian `zookeeper` package puts its jars. @group Testing */
export const DEFAULT_ZK_JARS_DIR = '/usr/share/java';

/**
 * The jars a ZooKeeper server needs from a jars folder (`ZK_JARS_DIR`, Debian's
 * /usr/share/java): the NIO connection factory, so no netty. Versioned names count too
 * (`zookeeper-3.8.4.jar`, `slf4j-api-1.7.36.jar`, ...). An slf4j binding is optional and taken
 * when present: slf4j-simple (the server's warnings reach its log tail), slf4j-nop, or logback
 * (classic and core), in that order.
 * @group Testing
 */
export const REQUIRED_ZK_JARS: readonly string[] = ['zookeeper.jar', 'zookeeper-jute.jar', 'slf4j-api.jar'];

/**
 * Where Homebrew installs ZooKeeper (`brew install zookeeper`): an Apache tarball's layout,
 * looked at when neither `ZK_JARS_DIR` nor `ZOOKEEPER_HOME` is set and the Debian jars are absent.
 * @group Testing
 */
export const HOMEBREW_ZOOKEEPER_HOMES: readonly string[] = ['/opt/homebrew/opt/zookeeper/libexec', '/usr/local/opt/zookeeper/libexec'];

/** Where Homebrew's (keg-only) JDK lives; looked at on macOS before `java` on `PATH`. @group Testing */
export const HOMEBREW_JAVA: readonly string[] = ['/opt/homebrew/opt/openjdk/bin/java', '/usr/local/opt/openjdk/bin/java'];

/** The command that installs what {@link locateZooKeeper} looks for, on Debian. @group Testing */
export const ZOOKEEPER_INSTALL_COMMAND = 'apt-get update && apt-get install -y zookeeper';

/**
 * Error thrown when java or the ZooKeeper jars cannot be found.
 * Its message names what is missing and how to install it (Debian, macOS, an Apache tarball).
 * @group Testing
 */
export class ZooKeeperNotInstalledError extends Error {
  /** Stable error code. */
  readonly code = 'ZOOKEEPER_NOT_INSTALLED';
  /** The files (java binary or jar paths) that were looked for and not found. */
  readonly missing: readonly string[];

  /** Builds the error from the list of missing files. */
  constructor(missing: readonly string[], options?: ErrorOptions) {
    const javaMissing = missing.some((m) => !m.endsWith('.jar') && !m.endsWith('/'));
    super(
      `ZooKeeper test server cannot start: not found: ${missing.join(', ')}. ` +
        `On Debian/Ubuntu: ${ZOOKEEPER_INSTALL_COMMAND}${javaMissing ? ' default-jre-headless' : ''}. ` +
        'On macOS: brew install zookeeper (it brings a JDK: set JAVA_HOME=$(brew --prefix openjdk)). ' +
        'Elsewhere: unpack an Apache ZooKeeper release (apache-zookeeper-X.Y.Z-bin.tar.gz) and set ZOOKEEPER_HOME to it, ' +
        `or set ZK_JARS_DIR to a folder holding ${REQUIRED_ZK_JARS.join(', ')} and slf4j-nop.jar (versioned names too); ` +
        'JAVA or JAVA_HOME name a Java runtime (11+). No Java at all: point ZK_CONNECT at a running server (the demo and bench take --connect).',
      options,
    );
    this.name = 'ZooKeeperNotInstalledError';
    this.missing = missing;
  }
}

/** Which slf4j binding a ZooKeeper classpath carries. @group Testing */
export type ZooKeeperLogging = 'slf4j-simple' | 'logback' | 'slf4j-nop' | 'none';

/** A Java runtime and the classpath that runs a ZooKeeper server. @group Testing */
export interface ZooKeeperInstallation {
  /** Absolute path of the java executable. */
  readonly java: string;
  /** Folder the jars were taken from. */
  readonly jarsDir: string;
  /** Classpath (joined with the platform delimiter). */
  readonly classpath: string;
  /** True when the server's WARN/ERROR lines reach its stderr (slf4j-simple or logback). */
  readonly logs: boolean;
  /**
   * The slf4j binding on the classpath. With `'logback'` the test kit hands the JVM a
   * configuration of its own (warnings to stderr); `'none'` is slf4j's silent fallback.
   */
  readonly logging: ZooKeeperLogging;
}

/** Where {@link locateZooKeeperIn} looks, besides the environment. @internal */
export interface ZooKeeperPlaces {
  /** The Debian jars folder. */
  readonly debianDir: string;
  /** Apache-layout installations to try after it (Homebrew's). */
  readonly homes: readonly string[];
  /** java executables to try after `JAVA`/`JAVA_HOME` and before `PATH`. */
  readonly javas: readonly string[];
}

function isFile(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function jarsIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.jar') && !/-(sources|javadoc|tests|test-sources)\.jar$/.test(f))
      .filter((f) => isFile(join(dir, f), constants.R_OK))
      .sort();
  } catch {
    return [];
  }
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[^0-9]+/).filter(Boolean).map(Number);
  const pb = b.split(/[^0-9]+/).filter(Boolean).map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1);
    if (d !== 0) return d;
  }
  return a.localeCompare(b);
}

/**
 * The jar of `artifact` among `jars`: `artifact.jar`, else the highest `artifact-<version>.jar`
 * (a version starts with a digit, so `zookeeper-jute-3.8.4.jar` is not a `zookeeper` jar).
 * @internal
 */
export function pickJar(jars: readonly string[], artifact: string): string | undefined {
  if (jars.includes(`${artifact}.jar`)) return `${artifact}.jar`;
  const prefix = `${artifact}-`;
  const versioned = jars.filter((j) => j.startsWith(prefix) && /^\d/.test(j.slice(prefix.length)));
  return versioned.sort((a, b) => compareVersions(a.slice(prefix.length, -4), b.slice(prefix.length, -4))).pop();
}

/** slf4j-simple shows the server's warnings; nop is silent; logback gets a config of ours. */
function pickBinding(jars: readonly string[]): { logging: ZooKeeperLogging; jars: string[] } {
  const simple = pickJar(jars, 'slf4j-simple');
  if (simple) return { logging: 'slf4j-simple', jars: [simple] };
  const nop = pickJar(jars, 'slf4j-nop');
  if (nop) return { logging: 'slf4j-nop', jars: [nop] };
  const classic = pickJar(jars, 'logback-classic');
  const core = pickJar(jars, 'logback-core');
  if (classic && core) return { logging: 'logback', jars: [classic, core] };
  return { logging: 'none', jars: [] };
}

const BINDING = /^(slf4j-(simple|nop|log4j12|jdk14|jcl|reload4j)|logback-(classic|core)|log4j-slf4j2?-impl)[-.]/;

interface Classpath {
  jarsDir: string;
  jars: string[];
  logging: ZooKeeperLogging;
}

/** A jars folder: ZooKeeper's own jars picked by name (Debian's /usr/share/java holds many others). */
function fromJarsDir(dir: string): Classpath | { missing: string[] } {
  const jars = jarsIn(dir);
  const wanted = ['zookeeper', 'zookeeper-jute', 'slf4j-api'];
  const found = wanted.map((a) => pickJar(jars, a));
  const missing = wanted.filter((_, i) => found[i] === undefined).map((a) => join(dir, `${a}.jar`));
  if (missing.length > 0) return { missing };
  const binding = pickBinding(jars);
  return { jarsDir: dir, jars: [...(found as string[]), ...binding.jars].map((j) => join(dir, j)), logging: binding.logging };
}

/**
 * An Apache ZooKeeper installation (`ZOOKEEPER_HOME`, Homebrew's libexec): every jar of its
 * `lib/`, as zkServer.sh runs it, with one slf4j binding.
 */
function fromHome(home: string): Classpath | { missing: string[] } {
  const dir = isDir(join(home, 'lib')) ? join(home, 'lib') : home;
  const jars = jarsIn(dir);
  const missing = ['zookeeper', 'zookeeper-jute', 'slf4j-api'].filter((a) => pickJar(jars, a) === undefined).map((a) => join(dir, `${a}-<version>.jar`));
  if (missing.length > 0) return { missing };
  const binding = pickBinding(jars);
  const rest = jars.filter((j) => !BINDING.test(j));
  return { jarsDir: dir, jars: [...rest, ...binding.jars].map((j) => join(dir, j)), logging: binding.logging };
}

/** Finds java: `JAVA`, then `JAVA_HOME/bin/java`, then `places.javas`, then `java` on `PATH`. */
function findJava(env: NodeJS.ProcessEnv, javas: readonly string[]): { found: string } | { found?: undefined; looked: string } {
  if (env.JAVA) return isFile(env.JAVA, constants.X_OK) ? { found: env.JAVA } : { looked: env.JAVA };
  if (env.JAVA_HOME) {
    const java = join(env.JAVA_HOME, 'bin', 'java');
    return isFile(java, constants.X_OK) ? { found: java } : { looked: java };
  }
  for (const java of javas) if (isFile(java, constants.X_OK)) return { found: java };
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isFile(join(dir, 'java'), constants.X_OK)) return { found: join(dir, 'java') };
  }
  return { looked: 'java (on PATH)' };
}

/** The default places: Debian's folder, Homebrew's installation, Homebrew's JDK on macOS. @internal */
export function defaultPlaces(platform: NodeJS.Platform = process.platform): ZooKeeperPlaces {
  return { debianDir: DEFAULT_ZK_JARS_DIR, homes: HOMEBREW_ZOOKEEPER_HOMES, javas: platform === 'darwin' ? HOMEBREW_JAVA : [] };
}

/**
 * {@link locateZooKeeper} with the places to look in given (tests use temp folders).
 * @internal
 */
export function locateZooKeeperIn(env: NodeJS.ProcessEnv, places: ZooKeeperPlaces): ZooKeeperInstallation {
  let found: Classpath | { missing: string[] };
  if (env.ZK_JARS_DIR) found = fromJarsDir(env.ZK_JARS_DIR);
  else if (env.ZOOKEEPER_HOME) found = fromHome(env.ZOOKEEPER_HOME);
  else {
    found = fromJarsDir(places.debianDir);
    for (const home of places.homes) {
      if (!('missing' in found)) break;
      if (isDir(home)) found = fromHome(home);
    }
  }
  const missing = 'missing' in found ? [...found.missing] : [];
  const java = findJava(env, places.javas);
  if (java.found === undefined) missing.push(java.looked);
  if ('missing' in found || java.found === undefined) throw new ZooKeeperNotInstalledError(missing);
  return {
    java: java.found,
    jarsDir: found.jarsDir,
    classpath: found.jars.join(delimiter),
    logs: found.logging === 'slf4j-simple' || found.logging === 'logback',
    logging: found.logging,
  };
}

/**
 * Locates java and the ZooKeeper jars, in this order:
 * - `ZK_JARS_DIR`: a folder of jars (`zookeeper`, `zookeeper-jute`, `slf4j-api` and an optional
 *   binding, with or without version numbers in their names);
 * - `ZOOKEEPER_HOME`: an Apache ZooKeeper release (its `lib/`, every jar, as zkServer.sh does);
 * - Debian's /usr/share/java (`apt-get install zookeeper`);
 * - Homebrew's ZooKeeper (`brew install zookeeper`).
 *
 * java: `JAVA`, `JAVA_HOME/bin/java`, on macOS Homebrew's `openjdk`, then `java` on `PATH`.
 * @throws ZooKeeperNotInstalledError when something is missing; InvalidArgumentError when `env` is not an object.
 * @group Testing
 */
export function locateZooKeeper(env: NodeJS.ProcessEnv = process.env): ZooKeeperInstallation {
  checkEnv(env);
  return locateZooKeeperIn(env, defaultPlaces());
}
