// Happens-before across a handoff between two sessions of one process, on a real 3-member
// ensemble: what a holder wrote before release() is visible to reads on the next holder's
// session once it is granted, even when that session is on a member that lags (every link of
// it delayed). Both sessions share one connect string (so one process's knowledge of its
// nodes), each pinned to its member by refusing the other route.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LeaderLatch, Mutex, ReadWriteLock, type ZkSession } from '../../src/index.js';
import { ChaosProxy, TestingCluster, waitFor, withTimeout } from '../../src/testing/index.js';
import { SessionPool, uniquePath } from '../helpers.js';

const LAG_MS = 300;

let cluster: TestingCluster;
const pool = new SessionPool();
const proxies: ChaosProxy[] = [];

before(async () => {
  cluster = await TestingCluster.start(3, { memberLinks: true });
});
after(async () => {
  await pool.closeAll();
  await Promise.all(proxies.map((p) => p.close()));
  await cluster?.close();
});

/** Two sessions of one connect string: the holder's on the leader, the waiter's on a lagging follower. */
async function twoMembers(): Promise<{ holder: ZkSession; waiter: ZkSession; lagging: number }> {
  cluster.heal();
  const leader = await cluster.waitForQuorum();
  const lagging = cluster.members.find((m) => m.id !== leader)!;
  const [viaLeader, viaLagging] = await Promise.all([ChaosProxy.start({ targetPort: cluster.member(leader).port }), ChaosProxy.start({ targetPort: lagging.port })]);
  proxies.push(viaLeader, viaLagging);
  const cs = `${viaLeader.connectString},${viaLagging.connectString}`;
  viaLagging.reject(true);
  const holder = await pool.connect(cs, { sessionTimeoutMs: 10_000 });
  viaLagging.reject(false);
  viaLeader.reject(true);
  const waiter = await pool.connect(cs, { sessionTimeoutMs: 10_000 });
  viaLeader.reject(false);
  cluster.delayLinks(lagging.id, LAG_MS);
  return { holder, waiter, lagging: lagging.id };
}

interface Grantable {
  grant(session: ZkSession, path: string): Promise<{ release(): Promise<void> }>;
}

async function handoff(recipe: Grantable): Promise<void> {
  const { holder, waiter } = await twoMembers();
  const path = uniquePath('handoff-hb');
  const data = `${path}-data`;
  await holder.mkdirp(data.slice(0, data.lastIndexOf('/')));
  await holder.create(data, { data: 'before' });
  await waiter.sync(data);
  const first = await recipe.grant(holder, path);
  const next = recipe.grant(waiter, path);
  await waitFor(async () => (await holder.getChildren(path)).children.length === 2, { timeoutMs: 10_000, message: 'the waiter queued' });
  await waiter.sync(path); // its entry reads are answered
  await holder.setData(data, 'after'); // committed: the leader answered
  await first.release();
  const h = await withTimeout(next, 15_000, 'the waiter granted');
  const seen = (await waiter.getData(data)).data.toString();
  assert.equal(seen, 'after', "the next holder reads what the previous one wrote before release()");
  await h.release();
  cluster.heal();
}

test('Mutex: the next holder, on a lagging member, reads what the previous holder wrote', async () => {
  await handoff({ grant: (s, p) => new Mutex(s, p).acquire({ timeoutMs: 15_000 }) });
});

test('ReadWriteLock (writer to writer): the same', async () => {
  await handoff({ grant: (s, p) => new ReadWriteLock(s, p).writeLock().acquire({ timeoutMs: 15_000 }) });
});

test('LeaderLatch: the next leader reads what the previous leader wrote', async () => {
  await handoff({
    grant: async (s, p) => {
      const latch = new LeaderLatch(s, p);
      latch.start();
      await latch.awaitLeadership({ timeoutMs: 15_000 });
      return { release: () => latch.close() };
    },
  });
});
