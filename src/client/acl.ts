/**
 * ACLs of the nodes a session creates: the session-wide {@link AclProvider} (Curator's
 * `ACLProvider`, kazoo's `default_acl`), ready-made ACLs, digest identities, and the getACL /
 * setACL requests.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';
import { sendFrame, type RawClient, type RawError } from './nzc.js';
import { Acls, Perms, type Acl, type AuthInfo, type Stat } from './types.js';
import { describe } from './validate.js';
import { Frame, type Decoder, encodeAcls } from './wire.js';
import { serverPath } from './encoding.js';

/**
 * Chooses the ACL of every node a session creates without an explicit `acl` (what the recipes
 * and {@link ZkSession.mkdirp} create, parents included): Curator's `ACLProvider`.
 *
 * A recipe's own `acl` option comes first, then {@link AclProvider.aclForPath}, then
 * {@link AclProvider.defaultAcl}.
 *
 * @example
 * ```ts
 * import { CREATOR_ALL_ACL, ZkSession, digestAuth } from 'zk-recipes';
 *
 * await using zk = await ZkSession.connect('127.0.0.1:2181', {
 *   auth: [digestAuth('billing', process.env.ZK_PASSWORD ?? '')],
 *   aclProvider: { defaultAcl: CREATOR_ALL_ACL },
 * });
 * ```
 * @group Security
 */
export interface AclProvider {
  /** The ACL of a node for which {@link AclProvider.aclForPath} has no answer. */
  defaultAcl: readonly Acl[];
  /**
   * The ACL of the node to be created at `path` (as the session sees it, without chroot), or
   * `undefined` for {@link AclProvider.defaultAcl}. Called for every create: keep it cheap and
   * pure; a throw or a malformed answer rejects that create with {@link InvalidArgumentError}.
   */
  aclForPath?(path: string): readonly Acl[] | undefined;
}

/** ZooKeeper's `OPEN_ACL_UNSAFE`: anyone reaching the server may do anything. @group Security */
export const OPEN_ACL_UNSAFE: readonly Acl[] = Acls.OPEN;
/**
 * ZooKeeper's `CREATOR_ALL_ACL`: every permission to the identities the creating session
 * authenticated with (its `auth` option), nobody else. The server refuses it (`INVALID_ACL`)
 * from a session with no authenticated identity.
 * @group Security
 */
export const CREATOR_ALL_ACL: readonly Acl[] = Acls.CREATOR_ALL;
/** ZooKeeper's `READ_ACL_UNSAFE`: anyone may read, nobody may change. @group Security */
export const READ_ACL_UNSAFE: readonly Acl[] = Acls.READ_ONLY;

/**
 * The `digest` identity of `user` with `password` as ZooKeeper stores it in an ACL:
 * `user:base64(sha1("user:password"))` (what `DigestAuthenticationProvider.generateDigest` makes).
 * @group Security
 */
export function digestId(user: string, password: string): string {
  checkUser(user, 'digestId');
  if (typeof password !== 'string') throw new InvalidArgumentError(`digestId: password must be a string, got ${describe(password)}`);
  return `${user}:${createHash('sha1').update(`${user}:${password}`, 'utf8').digest('base64')}`;
}

/**
 * One ACL entry granting `perms` (default {@link Perms.ALL}) to the digest identity `user` /
 * `password`: give another service's identity read access, or name an identity explicitly
 * instead of {@link CREATOR_ALL_ACL}.
 *
 * @example
 * ```ts
 * import { Mutex, Perms, digestAcl } from 'zk-recipes';
 *
 * const env = (name: string): string => process.env[name] ?? '';
 * const acl = [digestAcl('billing', env('BILLING_PW')), digestAcl('auditor', env('AUDITOR_PW'), Perms.READ)];
 * const lock = new Mutex(session, '/locks/invoices', { acl });
 * ```
 * @group Security
 */
export function digestAcl(user: string, password: string, perms: number = Perms.ALL): Acl {
  checkPerms(perms, 'digestAcl: perms');
  return { perms, scheme: 'digest', id: digestId(user, password) };
}

/**
 * The session `auth` entry of the digest identity `user` / `password`
 * (`{ scheme: 'digest', credentials: 'user:password' }`).
 * @group Security
 */
export function digestAuth(user: string, password: string): AuthInfo {
  checkUser(user, 'digestAuth');
  if (typeof password !== 'string') throw new InvalidArgumentError(`digestAuth: password must be a string, got ${describe(password)}`);
  return { scheme: 'digest', credentials: `${user}:${password}` };
}

function checkUser(user: unknown, what: string): asserts user is string {
  if (typeof user !== 'string' || user === '' || user.includes(':')) throw new InvalidArgumentError(`${what}: user must be a non-empty string without ":", got ${describe(user)}`);
}

function checkPerms(perms: unknown, what: string): void {
  if (!Number.isInteger(perms) || (perms as number) < 0 || (perms as number) > Perms.ALL) throw new InvalidArgumentError(`${what} must be an integer bit mask of Perms (0..31), got ${describe(perms)}`);
}

/**
 * Checks an ACL: a non-empty array of `{ perms: 0..31, scheme, id }`. `what` names it in the
 * error (e.g. `acl`, `Mutex acl`). Returns it as given.
 *
 * @internal
 */
export function validateAcl(acl: unknown, what = 'acl'): readonly Acl[] {
  if (!Array.isArray(acl) || acl.length === 0) throw new InvalidArgumentError(`${what} must be a non-empty array of { perms, scheme, id }, got ${describe(acl)}`);
  for (const [i, a] of acl.entries()) {
    const e = a as Partial<Acl> | null;
    if (e === null || typeof e !== 'object' || typeof e.scheme !== 'string' || e.scheme === '' || typeof e.id !== 'string' || !Number.isInteger(e.perms) || (e.perms as number) < 0 || (e.perms as number) > 31) {
      throw new InvalidArgumentError(`${what}[${i}] must be { perms: 0..31, scheme: string, id: string }, got ${describe(a)}`);
    }
  }
  return acl as readonly Acl[];
}

/**
 * A recipe's `acl` option: `undefined` (the session's provider decides), or a checked ACL.
 *
 * @internal
 */
export function optionalAcl(acl: unknown, what: string): readonly Acl[] | undefined {
  return acl === undefined ? undefined : validateAcl(acl, `${what} acl`);
}

/**
 * Checks an {@link AclProvider} option; `undefined` gives the open ACL everywhere.
 *
 * @internal
 */
export function validateAclProvider(provider: unknown): AclProvider | undefined {
  if (provider === undefined) return undefined;
  if (provider === null || typeof provider !== 'object') throw new InvalidArgumentError(`aclProvider must be { defaultAcl, aclForPath? }, got ${describe(provider)}`);
  const p = provider as Partial<AclProvider>;
  for (const key of Object.keys(p)) {
    if (key !== 'defaultAcl' && key !== 'aclForPath') throw new InvalidArgumentError(`unknown option '${key}' of aclProvider (known: defaultAcl, aclForPath)`);
  }
  validateAcl(p.defaultAcl, 'aclProvider.defaultAcl');
  if (p.aclForPath !== undefined && typeof p.aclForPath !== 'function') throw new InvalidArgumentError(`aclProvider.aclForPath must be a function, got ${describe(p.aclForPath)}`);
  return p as AclProvider;
}

/**
 * The ACL of a node created at `path` with no explicit one: the provider's answer for the path,
 * its default, or the open ACL.
 *
 * @internal
 */
export function providedAcl(provider: AclProvider | undefined, path: string): readonly Acl[] {
  if (provider === undefined) return Acls.OPEN;
  if (provider.aclForPath === undefined) return provider.defaultAcl;
  let acl: readonly Acl[] | undefined;
  try {
    acl = provider.aclForPath(path);
  } catch (err) {
    throw new InvalidArgumentError(`aclProvider.aclForPath(${JSON.stringify(path)}) threw: ${(err as Error)?.message ?? String(err)}`, { path, cause: err });
  }
  return acl === undefined ? provider.defaultAcl : validateAcl(acl, `aclProvider.aclForPath(${JSON.stringify(path)})`);
}

// ---- getACL (6) and setACL (7) ------------------------------------------------------------

const GET_ACL = 6;
const SET_ACL = 7;

/** The ACL vector and Stat of a getACL reply. */
const aclAndStat: Decoder<{ acl: Acl[]; stat: Stat }> = (r) => {
  const n = r.int();
  const acl: Acl[] = [];
  for (let i = 0; i < n; i++) {
    const perms = r.int();
    const scheme = r.str();
    acl.push({ perms, scheme, id: r.str() });
  }
  return { acl, stat: r.stat() };
};

function chrootOf(client: RawClient): string {
  return client.connectionManager.chrootPath ?? '';
}

/**
 * getACL (opcode 6): the node's ACL and Stat.
 *
 * @internal
 */
export function sendGetAcl(client: RawClient, path: string, cb: (err: RawError | null, value?: { acl: Acl[]; stat: Stat }) => void): void {
  const full = serverPath(chrootOf(client), path);
  const bytes = Buffer.byteLength(full);
  sendFrame(client, GET_ACL, new Frame(GET_ACL, 4 + bytes).str(full, bytes), aclAndStat, cb);
}

/**
 * setACL (opcode 7): path, ACL vector, expected ACL version (`aversion`, -1 for any); answers
 * the new Stat.
 *
 * @internal
 */
export function sendSetAcl(client: RawClient, path: string, acl: readonly Acl[], version: number, cb: (err: RawError | null, value?: Stat) => void): void {
  const full = serverPath(chrootOf(client), path);
  const bytes = Buffer.byteLength(full);
  const acls = encodeAcls(acl);
  sendFrame(client, SET_ACL, new Frame(SET_ACL, 4 + bytes + acls.length + 4).str(full, bytes).raw(acls).int(version), (r) => r.stat(), cb);
}
