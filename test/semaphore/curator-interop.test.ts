// Semaphore against real Apache Curator (Debian's 5.4 jars, driven by test/java/CuratorSemaphoreAgent):
// with layout 'curator-v2' it shares one limit with InterProcessSemaphoreV2, with the default
// window layout with the deprecated InterProcessSemaphore (V1); a waiter on either side is woken
// by a release on the other; a path used by the other layout is refused; nothing is left behind.
// Without Java or the Curator jars these tests fail (locateCurator names the package), never skip.
import assert from 'node:assert/strict';
import { setTimeout as work } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import { BadVersionError, LayoutMismatchError } from '../../src/errors.js';
import { Semaphore } from '../../src/semaphore/index.js';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { CuratorAgent, type CuratorSemaphoreClass } from '../java/curator.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
const agents = new Set<CuratorAgent>();
after(async () => {
  // Agents are closed by their tests; this only covers a failed one.
  await Promise.all([...agents].map((a) => a.close()));
});

async function agent(path: string, maxLeases: number, kind: CuratorSemaphoreClass = 'v2'): Promise<CuratorAgent> {
  const a = await CuratorAgent.start(fx.server.connectString, path, maxLeases, kind);
  agents.add(a);
  return a;
}

async function closeAgent(a: CuratorAgent): Promise<void> {
  await a.close();
  agents.delete(a);
}

const childrenOf = (path: string): Promise<string[]> => fx.children(path);

const baseName = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

/** After everyone closed: the path and everything under it is gone, and no watch is left. */
async function nothingLeft(path: string, sessions: readonly ZkSession[]): Promise<void> {
  assert.equal(await fx.observer.exists(path), null, `${path} and everything under it removed`);
  for (const s of sessions) assert.equal(s.activeWatchCount, 0, 'no watch left in our sessions');
  // Child watches show only in mntr's total; the observer holds none.
  await fx.waitWatchTotal(0, 'no watch left');
}

/** Adds `delta` to the counter node (compare-and-set), as the Java agent does; the new value. */
async function bump(session: ZkSession, counter: string, delta: number): Promise<number> {
  for (;;) {
    const { data, stat } = await session.getData(counter);
    const next = Number(data.toString()) + delta;
    try {
      await session.setData(counter, String(next), { version: stat.version });
      return next;
    } catch (err) {
      if (!(err instanceof BadVersionError)) throw err;
    }
  }
}

describe("layout 'curator-v2' with Curator's InterProcessSemaphoreV2", () => {
  test('a waiter on either side is woken by a release on the other; the limit counts both sides', async () => {
    const path = uniquePath('v2-wake');
    const leases = `${path}/leases`;
    const java = await agent(path, 2);
    const [s1, s2] = (await fx.sessionsN(2)) as [ZkSession, ZkSession];
    const n1 = new Semaphore(s1, path, { maxLeases: 2, layout: 'curator-v2', participantId: 'node-1' });
    const n2 = new Semaphore(s2, path, { maxLeases: 2, layout: 'curator-v2', participantId: 'node-2' });

    // Curator holds both leases: zk-recipes is refused at once, then waits.
    const a = (await java.acquire('a').granted) as string[];
    const b = (await java.acquire('b').granted) as string[];
    assert.deepEqual(await childrenOf(leases), [...a, ...b].sort());
    assert.equal(await n1.tryAcquire(), null, 'full: two Curator leases of two');
    assert.deepEqual(await childrenOf(leases), [...a, ...b].sort(), 'the refused try left no lease');
    assert.deepEqual(await childrenOf(`${path}/locks`), [], 'nor a mutex node');
    let n1Granted = false;
    const pending = n1.acquire({ timeoutMs: 30_000 }).then((h) => {
      n1Granted = true;
      return h;
    });
    // It waits as Curator does: holding the mutex, its lease created, the leases over the limit.
    await waitFor(async () => (await childrenOf(leases)).length === 3 && (await childrenOf(`${path}/locks`)).length === 1, { timeoutMs: 10_000, message: 'the zk-recipes waiter' });
    const parts = await n2.participants();
    assert.deepEqual(parts.map((p) => [p.id === 'node-1', p.isHolder]), [[false, true], [false, true], [true, false]], 'two Curator holders, then our waiter');
    assert.equal(n1Granted, false);

    await java.release('a');
    const h1 = await withTimeout(pending, 10_000, 'the zk-recipes waiter, woken by the Curator release');
    assert.ok(h1.isHeld);
    assert.deepEqual(await childrenOf(leases), [baseName(h1.path), ...b].sort());
    assert.equal(h1.fencingToken, (await fx.observer.exists(h1.path))?.czxid, 'the token is the lease czxid');
    assert.deepEqual(await childrenOf(`${path}/locks`), [], 'the mutex is released once granted');

    // Now Curator waits behind one Curator and one zk-recipes lease.
    const c = java.acquire('c');
    let cGranted = false;
    c.granted.then(() => (cGranted = true), () => undefined);
    await c.started;
    await waitFor(async () => (await childrenOf(leases)).length === 3, { timeoutMs: 10_000, message: "Curator's waiting lease" });
    assert.equal(await n2.tryAcquire(), null, 'full (and the mutex is held by the Curator waiter)');
    assert.equal(cGranted, false);
    await h1.release();
    const cNodes = (await withTimeout(c.granted, 10_000, 'the Curator waiter, woken by the zk-recipes release')) as string[];
    assert.deepEqual(await childrenOf(leases), [...b, ...cNodes].sort());

    // Two leases at once (one transaction) wait until both Curator leases are returned.
    let pairGranted = false;
    const pair = n2.acquire(2, { timeoutMs: 30_000 }).then((h) => {
      pairGranted = true;
      return h;
    });
    await waitFor(async () => (await childrenOf(leases)).length === 4, { timeoutMs: 10_000, message: 'the pair queued' });
    await java.release('b');
    await waitFor(async () => (await childrenOf(leases)).length === 3, { timeoutMs: 10_000, message: "b's lease gone" });
    assert.equal(pairGranted, false, 'one Curator lease and our two are over the limit');
    await java.release('c');
    const h2 = await withTimeout(pair, 10_000, 'the pair');
    assert.equal(h2.paths.length, 2);
    assert.deepEqual(await childrenOf(leases), h2.paths.map(baseName).sort());
    await h2.release();

    await closeAgent(java);
    await Promise.all([n1.close(), n2.close()]);
    await nothingLeft(path, [s1, s2]);
  });

  test('3 Curator and 3 zk-recipes participants, 72 leases: never more than maxLeases (2) users of the resource', async (t) => {
    const path = uniquePath('v2-stress');
    const counter = uniquePath('v2-counter');
    const java = await agent(path, 2);
    await fx.observer.mkdirp(counter, { data: '0' });
    const sessions = await fx.sessionsN(3);
    const sems = sessions.map((s, i) => new Semaphore(s, path, { maxLeases: 2, layout: 'curator-v2', participantId: `node-${i}` }));
    let maxSeen = 0;
    let violations = 0;
    let grants = 0;
    const node = Promise.all(
      sems.map(async (sem, i) => {
        const session = sessions[i] as ZkSession;
        for (let k = 0; k < 12; k++) {
          await sem.runExclusive(async () => {
            grants++;
            const now = await bump(session, counter, 1);
            maxSeen = Math.max(maxSeen, now);
            if (now > 2) violations++;
            await work(5); // the resource in use (workload, not synchronization)
            await bump(session, counter, -1);
          }, { timeoutMs: 60_000 });
        }
      }),
    );
    const [javaResult] = await withTimeout(Promise.all([java.stress('s', 3, 12, counter, 5), node]), 150_000, 'both sides');
    assert.equal(javaResult.grants, 36);
    assert.equal(grants, 36);
    assert.equal(javaResult.violations, 0, `Curator saw ${javaResult.maxSeen} users at most`);
    assert.equal(violations, 0, `zk-recipes saw ${maxSeen} users at most`);
    assert.ok(Math.max(maxSeen, javaResult.maxSeen) <= 2);
    t.diagnostic(`most users seen at once: ${maxSeen} by zk-recipes, ${javaResult.maxSeen} by Curator`);
    assert.equal((await fx.observer.getData(counter)).data.toString(), '0');
    await closeAgent(java);
    await Promise.all(sems.map((s) => s.close()));
    await fx.observer.delete(counter);
    await nothingLeft(path, sessions);
  });
});

describe("the window layout with Curator's InterProcessSemaphore (V1)", () => {
  test('they share the lock- nodes: a waiter on either side is woken by a release on the other', async () => {
    const path = uniquePath('v1-wake');
    const java = await agent(path, 2, 'v1');
    const [s1] = (await fx.sessionsN(1)) as [ZkSession];
    const sem = new Semaphore(s1, path, { maxLeases: 2 });
    const h1 = await sem.acquire({ timeoutMs: 10_000 });
    const a = (await java.acquire('a').granted) as string[];
    assert.ok(a.every((n) => /^_c_[0-9a-f-]{36}-lock-\d{10}$/.test(n)), `V1 nodes are named like ours: ${a.join(', ')}`);
    assert.deepEqual(await childrenOf(path), [baseName(h1.path), ...a].sort(), 'directly under the path');
    assert.equal((await fx.observer.getData(path)).data.toString(), '2', 'maxLeases recorded (V1 ignores it)');
    assert.equal(await sem.tryAcquire(), null, 'full: one lease each');

    // A V1 waiter watches the node maxLeases places ahead of its own: here ours.
    const c = java.acquire('c');
    await c.started;
    await waitFor(async () => (await childrenOf(path)).length === 3, { timeoutMs: 10_000, message: "V1's waiting node" });
    await h1.release();
    const cNodes = (await withTimeout(c.granted, 10_000, 'V1 woken by our release')) as string[];
    assert.deepEqual(await childrenOf(path), [...a, ...cNodes].sort());

    // Ours watches both nodes ahead: the younger one's release grants it (V1 would sit idle).
    const pending = sem.acquire({ timeoutMs: 30_000 });
    await waitFor(async () => (await childrenOf(path)).length === 3, { timeoutMs: 10_000, message: 'our waiting node' });
    await java.release('c');
    const h2 = await withTimeout(pending, 10_000, 'woken by the V1 release');
    assert.deepEqual(await childrenOf(path), [...a, baseName(h2.path)].sort());
    await h2.release();
    await java.release('a');
    await closeAgent(java);
    await sem.close();
    await nothingLeft(path, [s1]);
  });
});

describe('a path used by the other layout is refused with LayoutMismatchError', () => {
  const mismatch = (e: unknown): boolean => e instanceof LayoutMismatchError && e.code === 'LAYOUT_MISMATCH';

  test('window layout on a path where InterProcessSemaphoreV2 holds a lease: refused, nothing of ours left', async () => {
    const path = uniquePath('v2-held');
    const java = await agent(path, 1);
    const [s1] = (await fx.sessionsN(1)) as [ZkSession];
    const a = (await java.acquire('a').granted) as string[];
    const sem = new Semaphore(s1, path, { maxLeases: 1 });
    // Without the check it would hold at once: it cannot see the V2 lease.
    await assert.rejects(sem.acquire({ timeoutMs: 5000 }), mismatch);
    await assert.rejects(sem.tryAcquire(), mismatch);
    assert.deepEqual(await childrenOf(path), ['leases', 'locks'], 'no lock- node of ours');
    assert.deepEqual(await childrenOf(`${path}/leases`), a, "Curator's lease untouched");
    await java.release('a');
    await closeAgent(java);
    // Curator's empty directories stay until the server reaps them (containers): a V2 path still.
    const later = new Semaphore(s1, path, { maxLeases: 1 });
    await assert.rejects(later.tryAcquire(), mismatch);
    await Promise.all([sem.close(), later.close()]);
    await fx.observer.deleteRecursive(path);
    await nothingLeft(path, [s1]);
  });

  test("layout 'curator-v2' on a path where InterProcessSemaphore (V1) holds a lease: refused, no lease, mutex node or directory left", async () => {
    const path = uniquePath('v1-held');
    const java = await agent(path, 1, 'v1');
    const [s1] = (await fx.sessionsN(1)) as [ZkSession];
    const a = (await java.acquire('a').granted) as string[];
    const sem = new Semaphore(s1, path, { maxLeases: 1, layout: 'curator-v2' });
    await assert.rejects(sem.acquire({ timeoutMs: 5000 }), mismatch);
    await assert.rejects(sem.tryAcquire(), mismatch);
    // Its locks/ and leases/ are gone too: left, they would make V1-side zk-recipes refuse.
    assert.deepEqual(await childrenOf(path), a, 'only the V1 node');
    // V1 goes on: a second V1 participant queues behind the first.
    const b = java.acquire('b');
    await b.started;
    await waitFor(async () => (await childrenOf(path)).length === 2, { timeoutMs: 10_000, message: 'the second V1 node' });
    await java.release('a');
    await withTimeout(b.granted, 10_000, 'the second V1 participant');
    await java.release('b');
    await closeAgent(java);
    await sem.close();
    await fx.observer.deleteRecursive(path);
    await nothingLeft(path, [s1]);
  });
});
