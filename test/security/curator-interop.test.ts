// A CREATOR_ALL lock path shared with Apache Curator (Debian's jars, test/java's
// CuratorSemaphoreAgent in its mutex mode, authenticated with `authorization("digest", ...)` and
// an ACLProvider of CREATOR_ALL_ACL): with the same digest identity, Curator's InterProcessMutex
// and our Mutex exclude each other and hand over, and each side's lock node carries that
// identity's ACL; Curator with another identity is refused (NoAuth) at once, and so are we on
// its path. Without Java or the Curator jars this fails (locateCurator names the package),
// never skips.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { CREATOR_ALL_ACL, Mutex, Perms } from '../../src/index.js';
import { NoAuthError } from '../../src/errors.js';
import { connectAs, createSecuredPath, superDigestConfig, testIdentity, waitFor, type TestIdentity } from '../../src/testing/index.js';
import { CuratorAgent } from '../java/curator.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const admin = testIdentity('super');
const fx = new ServerFixture({ extraConfig: [superDigestConfig(admin)] });
const alice = testIdentity('alice');
const bob = testIdentity('bob');
const agents = new Set<CuratorAgent>();
after(async () => {
  await Promise.all([...agents].map((a) => a.close()));
});

async function curatorAs(identity: TestIdentity, path: string): Promise<CuratorAgent> {
  const a = await CuratorAgent.start(fx.server.connectString, path, 1, 'mutex', { digest: `${identity.user}:${identity.password}` });
  agents.add(a);
  return a;
}

test('Curator and zk-recipes with one digest identity share a CREATOR_ALL lock path; another identity is refused on either side', async () => {
  const zk = fx.pool.track(await connectAs(fx.server.connectString, alice, { sessionTimeoutMs: 4000 }));
  const su = await fx.pool.connect(fx.server.connectString, { auth: [admin.auth] });
  const base = await createSecuredPath(zk, uniquePath('sec-curator'));
  const path = `${base}/lock`;
  const aliceOnly = [{ perms: Perms.ALL, scheme: 'digest', id: alice.id }];

  // We hold: Curator (same identity) times out, then is granted after our release.
  const mutex = new Mutex(zk, path, { acl: CREATOR_ALL_ACL });
  const ours = await mutex.acquire({ timeoutMs: 5000 });
  assert.deepEqual((await su.getAcl(ours.path)).acl, aliceOnly);
  const curator = await curatorAs(alice, path);
  assert.equal(await curator.acquire('late', { timeoutMs: 300 }).granted, null, 'Curator timed out while we hold');
  const waiting = curator.acquire('c1');
  await waitFor(async () => (await su.getChildren(path)).children.length === 2, { timeoutMs: 10_000, message: 'Curator queued behind us' });
  await ours.release();
  assert.deepEqual(await waiting.granted, ['mutex']);
  // Curator holds, its node ours by ACL too: we are busy, then granted after its release.
  const [theirs] = (await su.getChildren(path)).children;
  assert.ok(theirs);
  assert.deepEqual((await su.getAcl(`${path}/${theirs}`)).acl, aliceOnly);
  assert.equal(await mutex.tryAcquire(), null);
  const next = mutex.acquire({ timeoutMs: 10_000 });
  await curator.release('c1');
  await (await next).release();

  // Curator as another identity: refused (NoAuth), at once.
  const intruder = await curatorAs(bob, path);
  const started = performance.now();
  await assert.rejects(intruder.acquire('x', { timeoutMs: 10_000 }).granted, /NoAuth/);
  assert.ok(performance.now() - started < 5000, 'refused at once');
  await intruder.close();
  agents.delete(intruder);

  // And we, as another identity, on a path Curator secured.
  const curatorPath = `${uniquePath('sec-curator-own')}`;
  const bobs = await curatorAs(bob, curatorPath);
  assert.deepEqual(await bobs.acquire('b1').granted, ['mutex']);
  await assert.rejects(new Mutex(zk, curatorPath).acquire({ timeoutMs: 10_000 }), NoAuthError);
  await bobs.release('b1');
  await Promise.all([curator.close(), bobs.close()]);
  agents.clear();
  await mutex.close();
  await su.deleteRecursive(base);
  await su.deleteRecursive(curatorPath);
});
