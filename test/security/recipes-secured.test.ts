// Every recipe works on a CREATOR_ALL path under one digest identity, its ACL given either per
// recipe (the `acl` option) or by the session's aclProvider: locks, leases, leadership, queue
// put/take/consume, barriers, PersistentNode, group, shared count, atomic number, multi-lock,
// discovery. While each holds, every node under the test's base path (the directories the
// recipe created included) carries that identity's ACL only, as the super user reads it; and
// each leaves nothing behind but what it documents.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AtomicNumber,
  Barrier,
  CREATOR_ALL_ACL,
  DistributedQueue,
  DoubleBarrier,
  GroupMember,
  LeaderLatch,
  LeaderSelector,
  MultiLock,
  Mutex,
  PersistentNode,
  Perms,
  ReadWriteLock,
  Semaphore,
  SharedCount,
  type Acl,
  type ZkSession,
} from '../../src/index.js';
import { ServiceDiscovery } from '../../src/discovery/index.js';
import { connectAs, createSecuredPath, superDigestConfig, testIdentity, waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const admin = testIdentity('super');
const fx = new ServerFixture({ extraConfig: [superDigestConfig(admin)] });
const alice = testIdentity('alice');

let su: ZkSession | undefined;
async function superSession(): Promise<ZkSession> {
  su ??= await fx.pool.connect(fx.server.connectString, { auth: [admin.auth], sessionTimeoutMs: 30000 });
  return su;
}

/** Every node under `base` (itself excluded), depth first. */
async function tree(base: string): Promise<string[]> {
  const s = await superSession();
  const out: string[] = [];
  const walk = async (p: string): Promise<void> => {
    for (const c of (await s.getChildren(p)).children.sort()) {
      out.push(`${p}/${c}`);
      await walk(`${p}/${c}`);
    }
  };
  await walk(base);
  return out;
}

/** Asserts that every node under `base` (at least `min` of them) carries alice's ACL only. */
async function aliceOnlyUnder(base: string, min = 1): Promise<void> {
  const s = await superSession();
  const nodes = await tree(base);
  assert.ok(nodes.length >= min, `at least ${min} nodes under ${base}, got ${nodes.join(', ')}`);
  const want: Acl[] = [{ perms: Perms.ALL, scheme: 'digest', id: alice.id }];
  for (const p of nodes) assert.deepEqual((await s.getAcl(p)).acl, want, `ACL of ${p}`);
}

type Exercise = (s: ZkSession, dir: string, acl: readonly Acl[] | undefined) => Promise<void>;

const acl = (a: readonly Acl[] | undefined): { acl?: readonly Acl[] } => (a === undefined ? {} : { acl: a });

const exercises: Record<string, Exercise> = {
  async mutex(s, dir, a) {
    const m = new Mutex(s, `${dir}/lock`, acl(a));
    const h = await m.acquire({ timeoutMs: 5000 });
    await aliceOnlyUnder(dir, 2);
    await h.release();
    await m.close();
  },
  async semaphore(s, dir, a) {
    const sem = new Semaphore(s, `${dir}/sem`, { maxLeases: 2, ...acl(a) });
    const h = await sem.acquire(2, { timeoutMs: 5000 });
    await aliceOnlyUnder(dir, 3);
    await h.release();
    await sem.close();
  },
  async 'semaphore (curator-v2 layout)'(s, dir, a) {
    const sem = new Semaphore(s, `${dir}/sem2`, { maxLeases: 2, layout: 'curator-v2', ...acl(a) });
    const h = await sem.acquire(1, { timeoutMs: 5000 });
    await aliceOnlyUnder(dir, 4);
    await h.release();
    await sem.close();
  },
  async 'read-write lock'(s, dir, a) {
    const rw = new ReadWriteLock(s, `${dir}/rw`, acl(a));
    const w = await rw.writeLock().acquire({ timeoutMs: 5000 });
    const r = await rw.readLock().acquire({ timeoutMs: 5000 });
    await aliceOnlyUnder(dir, 3);
    await r.release();
    await w.release();
    await rw.close();
  },
  async 'leader latch'(s, dir, a) {
    const latch = new LeaderLatch(s, `${dir}/latch`, acl(a));
    await latch.start({ timeoutMs: 5000 });
    await latch.awaitLeadership({ timeoutMs: 5000 });
    await aliceOnlyUnder(dir, 2);
    await latch.close();
  },
  async 'leader selector'(s, dir, a) {
    const sel = new LeaderSelector(s, `${dir}/sel`, acl(a));
    let led = false;
    await sel.run(async () => {
      led = true;
      await aliceOnlyUnder(dir, 2);
    });
    assert.ok(led);
    await sel.close();
  },
  async 'multi-lock'(s, dir, a) {
    const ml = new MultiLock(s, [`${dir}/m1`, `${dir}/m2`], acl(a));
    const h = await ml.acquire({ timeoutMs: 5000 });
    await aliceOnlyUnder(dir, 4);
    await h.release();
  },
  async queue(s, dir, a) {
    const q = new DistributedQueue(s, `${dir}/q`, acl(a));
    await q.putAll(['a', 'b']);
    await aliceOnlyUnder(dir, 4);
    assert.equal((await q.take({ timeoutMs: 5000 })).toString(), 'a');
    const got: string[] = [];
    const stop = new AbortController();
    const consuming = q.consume((data) => {
      got.push(data.toString());
      stop.abort();
    }, { signal: stop.signal });
    await consuming;
    assert.deepEqual(got, ['b']);
    await aliceOnlyUnder(dir, 3);
    await q.close();
  },
  async barrier(s, dir, a) {
    const b = new Barrier(s, `${dir}/b/barrier`, acl(a));
    await b.set();
    await aliceOnlyUnder(dir, 2);
    const waiting = new Barrier(s, `${dir}/b/barrier`).wait({ timeoutMs: 5000 });
    await b.remove();
    await waiting;
  },
  async 'double barrier'(s, dir, a) {
    const one = new DoubleBarrier(s, `${dir}/db`, { memberCount: 2, ...acl(a) });
    const two = new DoubleBarrier(s, `${dir}/db`, { memberCount: 2, ...acl(a) });
    await Promise.all([one.enter({ timeoutMs: 5000 }), two.enter({ timeoutMs: 5000 })]);
    await aliceOnlyUnder(dir, 4);
    await Promise.all([one.leave({ timeoutMs: 5000 }), two.leave({ timeoutMs: 5000 })]);
  },
  async 'persistent node'(s, dir, a) {
    const node = new PersistentNode(s, `${dir}/pn/parent/node`, { data: 'x', ...acl(a) });
    node.start();
    await node.waitForInitialCreate({ timeoutMs: 5000 });
    await aliceOnlyUnder(dir, 3);
    await node.close();
  },
  async group(s, dir, a) {
    const m = new GroupMember(s, `${dir}/group`, 'm1', 'payload', acl(a));
    await m.start({ timeoutMs: 5000 });
    assert.deepEqual([...m.currentMembers().keys()], ['m1']);
    await aliceOnlyUnder(dir, 2);
    await m.close();
  },
  async 'shared count'(s, dir, a) {
    const c = new SharedCount(s, `${dir}/shared/count`, 7, acl(a));
    await c.start({ timeoutMs: 5000 });
    assert.equal(c.count, 7);
    assert.ok(await c.trySet(8, c.get()));
    await aliceOnlyUnder(dir, 2);
    await c.close();
  },
  async 'atomic number (promoted to a lock)'(s, dir, a) {
    const n = new AtomicNumber(s, `${dir}/atomic/n`, { promoteToLock: { lockPath: `${dir}/atomic-lock` }, ...acl(a) });
    assert.equal((await n.increment()).postValue, 1n);
    assert.equal((await n.add(2)).postValue, 3n);
    await aliceOnlyUnder(dir, 2);
  },
  async discovery(s, dir, a) {
    const d = new ServiceDiscovery(s, { basePath: `${dir}/services`, ...acl(a) });
    await d.start();
    await d.register({ name: 'api', id: 'i1', address: '127.0.0.1', port: 8080 });
    assert.deepEqual((await d.queryForInstances('api')).map((i) => i.id), ['i1']);
    await aliceOnlyUnder(dir, 3);
    await d.close();
  },
};

async function runAll(s: ZkSession, mode: string, a: readonly Acl[] | undefined): Promise<void> {
  for (const [name, exercise] of Object.entries(exercises)) {
    const base = await createSecuredPath(s, uniquePath(`sec-${mode}`));
    await exercise(s, `${base}/${name.replace(/[^a-z0-9]+/g, '-')}`, a);
    await s.deleteRecursive(base);
  }
}

test('every recipe works on a CREATOR_ALL path with its acl option, and every node it creates carries it', async () => {
  const s = await connectAs(fx.server.connectString, alice, { sessionTimeoutMs: 4000 });
  try {
    await runAll(s, 'option', CREATOR_ALL_ACL);
  } finally {
    await s.close();
  }
});

test("every recipe works with the session's aclProvider alone, and every node it creates carries its ACL", async () => {
  const s = await connectAs(fx.server.connectString, alice, { sessionTimeoutMs: 4000, aclProvider: { defaultAcl: CREATOR_ALL_ACL } });
  try {
    await runAll(s, 'provider', undefined);
  } finally {
    await s.close();
  }
});

test("a recipe's acl comes before the session's provider", async () => {
  const s = await connectAs(fx.server.connectString, alice, { sessionTimeoutMs: 4000, aclProvider: { defaultAcl: [alice.acl(Perms.READ | Perms.ADMIN)] } });
  try {
    const base = await createSecuredPath(s, uniquePath('sec-precedence'));
    const m = new Mutex(s, `${base}/lock`, { acl: CREATOR_ALL_ACL });
    const h = await m.acquire({ timeoutMs: 5000 });
    await aliceOnlyUnder(base, 2);
    await h.release();
    await m.close();
    await waitFor(async () => (await tree(base)).length <= 1, { timeoutMs: 5000 });
    await s.deleteRecursive(base);
  } finally {
    await s.close();
  }
});
