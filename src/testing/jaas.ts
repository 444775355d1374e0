/**
 * SASL (DIGEST-MD5) on test servers: the JAAS file with the users, the JVM flag that points the
 * server at it, and the zoo.cfg lines that turn on the `sasl` ACL scheme and, optionally,
 * refuse sessions that did not authenticate. Guide: [SASL](../../docs/security.md#sasl).
 *
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkBoolean, checkOptions, describe, optionKeys } from './check.js';
import { InvalidArgumentError } from '../errors.js';

/**
 * SASL on a {@link TestingServer} or every member of a {@link TestingCluster}: the server gets a
 * JAAS `Server` section with a `DigestLoginModule` holding `users`, and the SASL authentication
 * provider (ACL scheme `sasl`). Sessions log in with the session option
 * `sasl: { mechanism: 'DIGEST-MD5', username, password }`.
 * @group Testing
 */
export interface SaslServerOptions {
  /** The users the server accepts: name to password. Names are letters, digits, `_`, `.` or `-`. */
  users: Readonly<Record<string, string>>;
  /**
   * Refuse every session that did not authenticate by SASL (ZooKeeper's
   * `sessionRequireClientSASLAuth=true`): its first request is answered
   * `SESSION_CLOSED_REQUIRE_SASL_AUTH` and its connection closed. Default false.
   */
  requireAuth?: boolean;
}

/** The keys of {@link SaslServerOptions}. @internal */
export const SASL_SERVER_OPTION_KEYS = optionKeys<SaslServerOptions>({ users: true, requireAuth: true });

/** The JAAS login module of ZooKeeper's DIGEST-MD5 server side. */
const DIGEST_LOGIN_MODULE = 'org.apache.zookeeper.server.auth.DigestLoginModule';
/** The authentication provider behind the `sasl` ACL scheme. */
const SASL_PROVIDER = 'org.apache.zookeeper.server.auth.SASLAuthenticationProvider';

/**
 * Checks the `sasl` option of a test server (undefined: no SASL).
 * @throws InvalidArgumentError naming what is wrong.
 * @internal
 */
export function checkSaslServer(value: unknown): SaslServerOptions | undefined {
  if (value === undefined) return undefined;
  const o = checkOptions(value as SaslServerOptions, 'sasl', SASL_SERVER_OPTION_KEYS);
  const users = o.users as unknown;
  if (users === null || typeof users !== 'object' || Array.isArray(users) || Object.keys(users).length === 0) {
    throw new InvalidArgumentError(`sasl.users must be an object of at least one user name to password, got ${describe(users)}`);
  }
  for (const [name, password] of Object.entries(users)) {
    // A JAAS option name is a word: keep user names to what it takes unquoted.
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new InvalidArgumentError(`sasl.users: user name ${describe(name)} must be letters, digits, '_', '.' or '-'`);
    if (typeof password !== 'string' || password === '' || /[\r\n]/.test(password)) throw new InvalidArgumentError(`sasl.users.${name} must be a non-empty password on one line, got ${describe(password)}`);
  }
  checkBoolean(o.requireAuth, 'sasl.requireAuth', false);
  return o as SaslServerOptions;
}

/** A JAAS quoted string (`"` and `\` escaped, as its parser reads them). */
function jaasString(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The text of a JAAS file whose `Server` section lets `users` log in by DIGEST-MD5: what a
 * ZooKeeper server needs for SASL (pass its path as `-Djava.security.auth.login.config=`).
 *
 * @example
 * ```ts
 * import { jaasServerConfig } from 'zk-recipes/testing';
 *
 * jaasServerConfig({ alice: 'alice-secret' });
 * // Server {
 * //   org.apache.zookeeper.server.auth.DigestLoginModule required
 * //   user_alice="alice-secret";
 * // };
 * ```
 * @group Testing
 */
export function jaasServerConfig(users: Readonly<Record<string, string>>): string {
  checkSaslServer({ users });
  const lines = Object.entries(users).map(([name, password]) => `  user_${name}=${jaasString(password)}`);
  return `Server {\n  ${DIGEST_LOGIN_MODULE} required\n${lines.join('\n')};\n};\n`;
}

/**
 * Writes `jaas.conf` into `dir` and returns what a server needs besides: its zoo.cfg lines (the
 * SASL provider; with `requireAuth`, the refusal of sessions without SASL) and JVM flags.
 * @internal
 */
export async function saslServerSetup(dir: string, sasl: SaslServerOptions): Promise<{ config: string[]; jvmArgs: string[] }> {
  const file = join(dir, 'jaas.conf');
  await writeFile(file, jaasServerConfig(sasl.users));
  return {
    config: [`authProvider.1=${SASL_PROVIDER}`, ...(sasl.requireAuth ? ['sessionRequireClientSASLAuth=true'] : [])],
    jvmArgs: [`-Djava.security.auth.login.config=${file}`],
  };
}

/**
 * Options with SASL's lines and flags put in front of the caller's own `extraConfig` and
 * `jvmArgs` (which come later, so they still override). @internal
 */
export async function withSasl<T extends { sasl?: SaslServerOptions; extraConfig?: readonly string[]; jvmArgs?: readonly string[] }>(dir: string, options: T): Promise<T> {
  if (options.sasl === undefined) return options;
  const { config, jvmArgs } = await saslServerSetup(dir, options.sasl);
  return { ...options, extraConfig: [...config, ...(options.extraConfig ?? [])], jvmArgs: [...jvmArgs, ...(options.jvmArgs ?? [])] };
}
