/**
 * ACL'd paths for tests: digest identities, a super user that can clean up any path, sessions
 * that authenticate as an identity, and base paths only that identity may touch.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { CREATOR_ALL_ACL, digestAcl, digestAuth, digestId, OPEN_ACL_UNSAFE } from '../client/acl.js';
import { ZkSession, type SessionOptions } from '../client/session.js';
import type { Acl, AuthInfo } from '../client/types.js';
import { parentOf, validatePath } from '../client/validate.js';
import { InvalidArgumentError, NodeExistsError } from '../errors.js';

/** A digest identity for a test: a user name and a random password. @group Testing */
export interface TestIdentity {
  /** The user name. */
  readonly user: string;
  /** The password (random for each identity). */
  readonly password: string;
  /** The session `auth` entry that authenticates as it (`{ scheme: 'digest', credentials }`). */
  readonly auth: AuthInfo;
  /** Its id in an ACL entry (`user:base64(sha1(user:password))`). */
  readonly id: string;
  /** An ACL entry granting it `perms` (default all). */
  acl(perms?: number): Acl;
}

/**
 * A new digest identity `user` with a random password: two identities of one test never share
 * a password, so one can never act as the other.
 * @group Testing
 */
export function testIdentity(user: string): TestIdentity {
  const password = randomBytes(12).toString('base64url');
  return {
    user,
    password,
    auth: digestAuth(user, password),
    id: digestId(user, password),
    acl: (perms?: number) => digestAcl(user, password, perms),
  };
}

/**
 * The `zoo.cfg` line that makes `identity` ZooKeeper's super user (every permission on every
 * node, whatever its ACL): pass it in `extraConfig` of `TestingServer.start` or
 * `TestingCluster.start`, and clean up ACL'd test paths from a session authenticated as it.
 * (ZooKeeper turns an unknown `zoo.cfg` key into the system property `zookeeper.<key>`, here
 * `zookeeper.DigestAuthenticationProvider.superDigest`.) Never on a production server.
 *
 * @example
 * ```ts
 * import { TestingServer, connectAs, superDigestConfig, testIdentity } from 'zk-recipes/testing';
 *
 * const admin = testIdentity('super');
 * const server = await TestingServer.start({ extraConfig: [superDigestConfig(admin)] });
 * const cleaner = await connectAs(server.connectString, admin);
 * ```
 * @group Testing
 */
export function superDigestConfig(identity: TestIdentity): string {
  return `DigestAuthenticationProvider.superDigest=${identity.id}`;
}

/** Connects a session authenticated as `identity` (its digest `auth` added to `options`). @group Testing */
export function connectAs(connectString: string, identity: TestIdentity, options: SessionOptions & { signal?: AbortSignal } = {}): Promise<ZkSession> {
  return ZkSession.connect(connectString, { ...options, auth: [...(options.auth ?? []), identity.auth] });
}

/**
 * Creates `path` with `acl` (default `CREATOR_ALL_ACL`: only the
 * identities `session` authenticated with may read, write, create under or delete it), from
 * `session`; a `path` that exists already gets `acl` set on it. Missing ancestors are created
 * with the open ACL (a shared `/test` stays usable by every identity). Resolves to `path`.
 *
 * @example
 * ```ts
 * import { CREATOR_ALL_ACL, Mutex } from 'zk-recipes';
 * import { TestingServer, connectAs, createSecuredPath, testIdentity } from 'zk-recipes/testing';
 *
 * await using server = await TestingServer.start();
 * const alice = testIdentity('alice');
 * const zk = await connectAs(server.connectString, alice);
 * const base = await createSecuredPath(zk, '/test/secured-1');
 * await using lock = await new Mutex(zk, `${base}/lock`, { acl: CREATOR_ALL_ACL }).acquire();
 * ```
 * @group Testing
 */
export async function createSecuredPath(session: ZkSession, path: string, acl: readonly Acl[] = CREATOR_ALL_ACL): Promise<string> {
  validatePath(path);
  if (path === '/') throw new InvalidArgumentError('createSecuredPath: the root cannot be a test path');
  // Ancestors open: a shared `/test` must stay usable by every identity of the suite.
  const parent = parentOf(path);
  if (parent !== '/') await session.mkdirp(parent, { acl: OPEN_ACL_UNSAFE });
  try {
    await session.create(path, { acl });
  } catch (err) {
    if (!(err instanceof NodeExistsError)) throw err;
    await session.setAcl(path, acl);
  }
  return path;
}
