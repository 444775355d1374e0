import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { checkEnv } from './check.js';

/** Where the Debian `zookeeper` package puts its jars. */
export const DEFAULT_ZK_JARS_DIR = '/usr/share/java';

/** The jars a ZooKeeper server needs: the NIO connection factory, so no netty. */
export const REQUIRED_ZK_JARS: readonly string[] = [
  'zookeeper.jar',
  'zookeeper-jute.jar',
  'slf4j-api.jar',
  'slf4j-nop.jar',
];

/** The command that installs what {@link locateZooKeeper} looks for, on Debian. */
export const ZOOKEEPER_INSTALL_COMMAND = 'apt-get update && apt-get install -y zookeeper';

/**
 * Error thrown when java or the ZooKeeper jars cannot be found.
 * Its message names what is missing and the command that installs it.
 */
export class ZooKeeperNotInstalledError extends Error {
  /** Stable error code. */
  readonly code = 'ZOOKEEPER_NOT_INSTALLED';
  /** The files (java binary or jar paths) that were looked for and not found. */
  readonly missing: readonly string[];

  /** Builds the error from the list of missing files. */
  constructor(missing: readonly string[], options?: ErrorOptions) {
    const javaMissing = missing.some((m) => !m.endsWith('.jar'));
    super(
      `ZooKeeper test server cannot start: not found: ${missing.join(', ')}. ` +
        `Install the Debian package with: ${ZOOKEEPER_INSTALL_COMMAND}${javaMissing ? ' default-jre-headless' : ''} ` +
        `(or set ZK_JARS_DIR to a folder holding ${REQUIRED_ZK_JARS.join(', ')}, ` +
        `and JAVA or JAVA_HOME to a Java runtime).`,
      options,
    );
    this.name = 'ZooKeeperNotInstalledError';
    this.missing = missing;
  }
}

/** A Java runtime and the classpath that runs a ZooKeeper server. */
export interface ZooKeeperInstallation {
  /** Absolute path of the java executable. */
  readonly java: string;
  /** Folder the jars were taken from. */
  readonly jarsDir: string;
  /** Classpath (joined with the platform delimiter). */
  readonly classpath: string;
  /** True when slf4j-simple is used, so the server's WARN/ERROR lines reach its stderr. */
  readonly logs: boolean;
}

function isFile(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** Finds java: `JAVA`, then `JAVA_HOME/bin/java`, then `java` on `PATH`. */
function findJava(env: NodeJS.ProcessEnv): { found: string } | { found?: undefined; looked: string } {
  if (env.JAVA) return isFile(env.JAVA, constants.X_OK) ? { found: env.JAVA } : { looked: env.JAVA };
  if (env.JAVA_HOME) {
    const java = join(env.JAVA_HOME, 'bin', 'java');
    return isFile(java, constants.X_OK) ? { found: java } : { looked: java };
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isFile(join(dir, 'java'), constants.X_OK)) return { found: join(dir, 'java') };
  }
  return { looked: 'java (on PATH)' };
}

/**
 * Locates java and the ZooKeeper jars.
 * `ZK_JARS_DIR` overrides /usr/share/java; `JAVA` or `JAVA_HOME` override java on `PATH`.
 * @throws ZooKeeperNotInstalledError when something is missing; InvalidArgumentError when `env` is not an object.
 */
export function locateZooKeeper(env: NodeJS.ProcessEnv = process.env): ZooKeeperInstallation {
  checkEnv(env);
  const jarsDir = env.ZK_JARS_DIR || DEFAULT_ZK_JARS_DIR;
  const missing = REQUIRED_ZK_JARS.map((jar) => join(jarsDir, jar)).filter(
    (path) => !isFile(path, constants.R_OK),
  );
  const java = findJava(env);
  if (java.found === undefined) missing.push(java.looked);
  if (missing.length > 0 || java.found === undefined) throw new ZooKeeperNotInstalledError(missing);

  // slf4j-simple (same Debian package) makes startup errors visible; nop stays the fallback.
  // Only one binding goes on the classpath, or slf4j warns about several.
  const simple = join(jarsDir, 'slf4j-simple.jar');
  const logs = isFile(simple, constants.R_OK);
  const jars = REQUIRED_ZK_JARS.filter((jar) => !(logs && jar === 'slf4j-nop.jar')).map((jar) =>
    join(jarsDir, jar),
  );
  if (logs) jars.push(simple);
  return { java: java.found, jarsDir, classpath: jars.join(delimiter), logs };
}
