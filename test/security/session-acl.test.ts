// The session's ACLs against a real server: the aclProvider (default and per path) on create,
// createWithStat, multi and mkdirp (parents included, checked with getAcl), an explicit acl
// first, getAcl/setAcl, digest identities, CREATOR_ALL without auth refused typed, bad input
// refused before anything is sent, and the test kit's super user and secured paths.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CREATOR_ALL_ACL, digestAcl, digestId, OPEN_ACL_UNSAFE, Perms, READ_ACL_UNSAFE, ZkSession, type Acl } from '../../src/index.js';
import { BadVersionError, InvalidAclError, InvalidArgumentError, NoAuthError } from '../../src/errors.js';
import { connectAs, createSecuredPath, superDigestConfig, testIdentity } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const admin = testIdentity('super');
const fx = new ServerFixture({ extraConfig: [superDigestConfig(admin)] });
const alice = testIdentity('alice');
const bob = testIdentity('bob');

/** The ACL of `path` as the super user reads it. */
async function aclOf(path: string): Promise<Acl[]> {
  const su = await fx.pool.connect(fx.server.connectString, { auth: [admin.auth] });
  return (await su.getAcl(path)).acl;
}

const aliceOnly = (): Acl[] => [{ perms: Perms.ALL, scheme: 'digest', id: alice.id }];

test('digestId is ZooKeeper digest: user:base64(sha1(user:password))', () => {
  // The value ZooKeeper's DigestAuthenticationProvider.generateDigest("super:test") prints.
  assert.equal(digestId('super', 'test'), 'super:D/InIHSb7yEEbrWz8b9l71RjZJU=');
  assert.deepEqual(digestAcl('a', 'b', Perms.READ), { perms: Perms.READ, scheme: 'digest', id: digestId('a', 'b') });
  assert.throws(() => digestId('a:b', 'x'), InvalidArgumentError);
  assert.throws(() => digestAcl('a', 'b', 99), InvalidArgumentError);
});

test('aclProvider: its default ACL goes on every create without one, parents of mkdirp included; an explicit acl comes first', async () => {
  const base = uniquePath('acl-default');
  const s = await fx.pool.connect(fx.server.connectString, { auth: [alice.auth], aclProvider: { defaultAcl: CREATOR_ALL_ACL } });
  assert.deepEqual(s.aclFor('/anything'), CREATOR_ALL_ACL);
  await s.mkdirp(`${base}/a/b/c`);
  for (const p of [base, `${base}/a`, `${base}/a/b`, `${base}/a/b/c`]) assert.deepEqual(await aclOf(p), aliceOnly(), p);
  await s.create(`${base}/a/x`, { data: 'x' });
  await s.createWithStat(`${base}/a/y`);
  await s.multi([{ type: 'create', path: `${base}/a/z` }]);
  for (const p of ['x', 'y', 'z']) assert.deepEqual(await aclOf(`${base}/a/${p}`), aliceOnly(), p);
  // An explicit acl wins over the provider.
  await s.create(`${base}/open`, { acl: OPEN_ACL_UNSAFE });
  assert.deepEqual(await aclOf(`${base}/open`), [...OPEN_ACL_UNSAFE]);
  // Bob (another identity) can neither read nor delete, and is told at once, typed.
  const b = await fx.pool.connect(fx.server.connectString, { auth: [bob.auth] });
  await assert.rejects(b.getData(`${base}/a/x`), NoAuthError);
  await assert.rejects(b.create(`${base}/a/b/evil`), NoAuthError);
  await assert.rejects(b.delete(`${base}/a/x`), NoAuthError);
  await s.deleteRecursive(base);
});

test('aclProvider.aclForPath decides per path (the default elsewhere); a throw or a bad answer refuses the create typed', async () => {
  const base = uniquePath('acl-per-path');
  const s = await fx.pool.connect(fx.server.connectString, {
    auth: [alice.auth],
    aclProvider: {
      defaultAcl: CREATOR_ALL_ACL,
      aclForPath: (p) => (p.endsWith('/public') ? READ_ACL_UNSAFE.concat(alice.acl()) : p.endsWith('/bad') ? ([] as Acl[]) : p.endsWith('/throws') ? (() => { throw new Error('nope'); })() : undefined),
    },
  });
  await s.mkdirp(`${base}/public`);
  assert.deepEqual(await aclOf(base), aliceOnly());
  assert.deepEqual(await aclOf(`${base}/public`), [{ perms: Perms.READ, scheme: 'world', id: 'anyone' }, ...aliceOnly()]);
  const before = s.counters.create;
  await assert.rejects(s.create(`${base}/bad`), InvalidArgumentError);
  await assert.rejects(s.create(`${base}/throws`), (err: unknown) => err instanceof InvalidArgumentError && /threw: nope/.test(err.message));
  assert.equal(s.counters.create, before, 'refused before sending');
  await s.deleteRecursive(base);
});

test('getAcl and setAcl: ACL versions, ADMIN needed, bad input refused before sending', async () => {
  const base = uniquePath('acl-set');
  const s = await connectAs(fx.server.connectString, alice, { sessionTimeoutMs: 4000 });
  try {
    await s.create(base, { acl: CREATOR_ALL_ACL });
    const first = await s.getAcl(base);
    assert.equal(first.stat.aversion, 0);
    const stat = await s.setAcl(base, [alice.acl(), bob.acl(Perms.READ)], { version: 0 });
    assert.equal(stat.aversion, 1);
    await assert.rejects(s.setAcl(base, OPEN_ACL_UNSAFE, { version: 0 }), BadVersionError);
    // Bob may read now, but not change the ACL (no ADMIN).
    const b = await connectAs(fx.server.connectString, bob, { sessionTimeoutMs: 4000 });
    try {
      await b.getData(base);
      await assert.rejects(b.setAcl(base, OPEN_ACL_UNSAFE), NoAuthError);
    } finally {
      await b.close();
    }
    const sent = s.counters.setAcl;
    await assert.rejects(s.setAcl(base, []), InvalidArgumentError);
    await assert.rejects(s.setAcl(base, [{ perms: 64, scheme: 'world', id: 'anyone' }]), InvalidArgumentError);
    await assert.rejects(s.setAcl(base, OPEN_ACL_UNSAFE, { nope: 1 } as never), InvalidArgumentError);
    assert.equal(s.counters.setAcl, sent);
    await s.delete(base);
  } finally {
    await s.close();
  }
});

test('CREATOR_ALL from a session without auth is refused typed (InvalidAclError), at once', async () => {
  const s = await fx.pool.connect(fx.server.connectString, { aclProvider: { defaultAcl: CREATOR_ALL_ACL } });
  const base = uniquePath('acl-noauth');
  await assert.rejects(s.create(base), InvalidAclError);
  assert.equal(await fx.observer.exists(base), null);
});

test('bad aclProvider options are refused by the constructor', () => {
  const cs = fx.server.connectString;
  assert.throws(() => new ZkSession(cs, { aclProvider: {} as never }), InvalidArgumentError);
  assert.throws(() => new ZkSession(cs, { aclProvider: { defaultAcl: [] } }), InvalidArgumentError);
  assert.throws(() => new ZkSession(cs, { aclProvider: { defaultAcl: OPEN_ACL_UNSAFE, aclForPath: 'x' as never } }), InvalidArgumentError);
  assert.throws(() => new ZkSession(cs, { aclProvider: { defaultAcl: OPEN_ACL_UNSAFE, extra: 1 } as never }), InvalidArgumentError);
});

test('test kit: createSecuredPath makes a CREATOR_ALL base (ancestors open); the super user can read and clean it up', async () => {
  const base = uniquePath('acl-kit');
  const s = await connectAs(fx.server.connectString, alice, { sessionTimeoutMs: 4000 });
  try {
    assert.equal(await createSecuredPath(s, `${base}/secured`), `${base}/secured`);
    assert.deepEqual(await aclOf(`${base}/secured`), aliceOnly());
    assert.deepEqual(await aclOf(base), [...OPEN_ACL_UNSAFE]);
    await s.create(`${base}/secured/child`, { acl: CREATOR_ALL_ACL });
    // Again: the ACL is set on the existing node.
    await createSecuredPath(s, `${base}/secured`, [alice.acl(), bob.acl(Perms.READ)]);
    assert.equal((await aclOf(`${base}/secured`)).length, 2);
    await assert.rejects(fx.observer.delete(`${base}/secured/child`), NoAuthError);
  } finally {
    await s.close();
  }
  const su = await fx.pool.connect(fx.server.connectString, { auth: [admin.auth] });
  await su.deleteRecursive(base);
  assert.equal(await fx.observer.exists(base), null);
});
