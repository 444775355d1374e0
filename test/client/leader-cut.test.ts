// The loss clock on a real 3-member ensemble: a holder connected to a follower that is cut off
// from the leader (its replication and election links blackholed, its client link untouched)
// keeps getting answers from that follower's own copy, while the leader expires its session
// and grants what it held to another. Every recipe's holder must be told it lost, strictly
// before anyone else is granted. The cut comes at a random offset to the heartbeat's phase;
// also behind a lagging follower (every link of it delayed).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LeaderLatch, LeaderSelector, Mutex, ReadWriteLock, Semaphore, type ZkSession } from '../../src/index.js';
import { SeededRandom, TestingCluster, waitFor, withTimeout } from '../../src/testing/index.js';
import { SessionPool, uniquePath } from '../helpers.js';

const T = 2000; // the holder's session timeout
const TICK = 200;
// A follower cut off from the leader serves its clients for syncLimit x tickTime = 4 s: far
// longer than T, so only the loss clock can tell the holder in time.
const SYNC_LIMIT = 20;

let cluster: TestingCluster;
const pool = new SessionPool();
/** Seeded, so a failing run can be replayed: the seed and each trial's offset are in its message. */
const SEED = Number(process.env.ZK_TEST_SEED ?? Date.now() % 100_000);
const random = new SeededRandom(SEED);

before(async () => {
  cluster = await TestingCluster.start(3, { memberLinks: true, tickTime: TICK, syncLimit: SYNC_LIMIT });
});
after(async () => {
  await pool.closeAll();
  await cluster?.close();
});

/** What a recipe's holder gives the trial: the signal that tells it, and how to let go. */
interface Held {
  /** Aborts when the holder is told it lost (lock lost, leadership ended). */
  readonly signal: AbortSignal;
  close(): Promise<void>;
}

/** What a recipe's contender gives the trial: resolves once granted. */
interface Contender {
  readonly granted: Promise<void>;
  close(): Promise<void>;
}

interface RecipeUnderTest {
  readonly name: string;
  hold(session: ZkSession, path: string): Promise<Held>;
  contend(session: ZkSession, path: string): Contender;
}

function latchRecipe(name: string, policy: 'suspended' | 'lost'): RecipeUnderTest {
  return {
    name,
    async hold(session, path) {
      const latch = new LeaderLatch(session, path, { policy });
      latch.start();
      await latch.awaitLeadership({ timeoutMs: 10_000 });
      const signal = latch.leadershipSignal;
      assert.ok(signal);
      return { signal, close: () => latch.close() };
    },
    contend(session, path) {
      const latch = new LeaderLatch(session, path, { policy });
      latch.start();
      return { granted: latch.awaitLeadership({ timeoutMs: 30_000 }), close: () => latch.close() };
    },
  };
}

function lockRecipe(name: string, make: (session: ZkSession, path: string, role: 'holder' | 'contender') => { acquire(o: { timeoutMs: number }): Promise<{ signal: AbortSignal; release(): Promise<void> }> }): RecipeUnderTest {
  return {
    name,
    async hold(session, path) {
      const h = await make(session, path, 'holder').acquire({ timeoutMs: 10_000 });
      return { signal: h.signal, close: () => h.release().catch(() => undefined) };
    },
    contend(session, path) {
      const p = make(session, path, 'contender').acquire({ timeoutMs: 30_000 });
      return {
        granted: p.then(() => undefined),
        close: async () => {
          await (await p.catch(() => undefined))?.release();
        },
      };
    },
  };
}

const RECIPES: readonly RecipeUnderTest[] = [
  lockRecipe('Mutex', (s, p) => new Mutex(s, p)),
  lockRecipe('Semaphore (1 lease)', (s, p) => new Semaphore(s, p, { maxLeases: 1 })),
  lockRecipe('ReadWriteLock (writer, then a reader)', (s, p, role) => (role === 'holder' ? new ReadWriteLock(s, p).writeLock() : new ReadWriteLock(s, p).readLock())),
  latchRecipe('LeaderLatch (policy suspended)', 'suspended'),
  latchRecipe('LeaderLatch (policy lost)', 'lost'),
  {
    name: 'LeaderSelector',
    async hold(session, path) {
      const selector = new LeaderSelector(session, path);
      const term = new Promise<AbortSignal>((resolve) => {
        void selector.run((signal) => {
          resolve(signal);
          return new Promise<void>((end) => signal.addEventListener('abort', () => end(), { once: true }));
        }).catch(() => undefined);
      });
      const signal = await withTimeout(term, 10_000, 'the selector leads');
      return { signal, close: () => selector.close() };
    },
    contend(session, path) {
      const selector = new LeaderSelector(session, path);
      const granted = new Promise<void>((resolve, reject) => {
        selector.run(async () => resolve()).catch(reject);
      });
      return { granted, close: () => selector.close() };
    },
  },
];

/** Every member serves, with one leader; resolves to the leader's id. */
async function healed(): Promise<number> {
  cluster.heal();
  const leader = await cluster.waitForQuorum({ timeoutMs: 30_000 });
  // Every member answers a sync again (a follower that was cut off has rejoined).
  await Promise.all(
    cluster.members.map(async (m) => {
      const s = await pool.connect(m.connectString, { sessionTimeoutMs: 10_000 });
      await waitFor(async () => s.sync('/').then(() => true, () => false), { timeoutMs: 30_000, message: `member ${m.id} syncs` });
      await s.close();
    }),
  );
  return leader;
}

interface Outcome {
  toldAt: number | undefined;
  grantedAt: number;
  /** When in the heartbeat's period the cut came, ms after the contender queued. */
  offset: number;
}

/** The holder was told it lost before the contender was granted. */
function assertToldFirst(label: string, { toldAt, grantedAt, offset }: Outcome): void {
  const told = toldAt === undefined ? 'never' : `${Math.round(grantedAt - toldAt)} ms before`;
  assert.ok(toldAt !== undefined && toldAt < grantedAt, `${label} (ZK_TEST_SEED=${SEED}, cut ${offset} ms in): told ${told} the grant`);
}

/**
 * One trial: the holder on follower F, the contender on the leader; F is cut off at a random
 * offset into the heartbeat's period (after `lagMs` of delay on F's links, if any).
 */
async function trial(recipe: RecipeUnderTest, lagMs = 0): Promise<Outcome> {
  const leader = await healed();
  const follower = cluster.members.find((m) => m.id !== leader && m.running);
  assert.ok(follower);
  if (lagMs > 0) cluster.delayLinks(follower.id, lagMs);
  const path = uniquePath('leader-cut');
  const holderSession = await pool.connect(follower.connectString, { sessionTimeoutMs: T });
  const contenderSession = await pool.connect(cluster.member(leader).connectString, { sessionTimeoutMs: 10_000 });
  const held = await recipe.hold(holderSession, path);
  let toldAt: number | undefined;
  held.signal.addEventListener('abort', () => (toldAt ??= performance.now()), { once: true });
  // Queued behind the holder before the cut.
  const contender = recipe.contend(contenderSession, path);
  await waitFor(async () => ((await contenderSession.getChildren(path)).children.length >= 2), { timeoutMs: 10_000, message: 'the contender queued' });
  const offset = random.int(0, Math.floor(T / 3) - 1);
  // The fault's moment, chosen at random: what we wait for below are events.
  await new Promise((resolve) => setTimeout(resolve, offset));
  cluster.isolate(follower.id);
  await withTimeout(contender.granted, 30_000, `${recipe.name}: the contender is granted once the leader expired the holder's session`);
  const grantedAt = performance.now();
  await contender.close();
  await held.close();
  await holderSession.close();
  await contenderSession.close();
  // Nothing of either is left on the path.
  const observer = await pool.connect(cluster.member(leader).connectString, { sessionTimeoutMs: 10_000 });
  await waitFor(async () => (await observer.getChildren(path)).children.length === 0, { timeoutMs: 10_000, message: `no node left under ${path}` });
  await observer.close();
  return { toldAt, grantedAt, offset };
}

describe('a holder behind a follower cut off from the leader is told before anyone else is granted', () => {
  for (const recipe of RECIPES) {
    test(recipe.name, async () => {
      for (let i = 0; i < 2; i++) assertToldFirst(`${recipe.name}, trial ${i}`, await trial(recipe));
    });
  }

  test('Mutex behind a lagging follower (every link of it 50 ms slow)', async () => {
    assertToldFirst('Mutex behind a lagging follower', await trial(RECIPES[0] as RecipeUnderTest, 50));
  });
});

test('the cost: an idle session sends about 5-6 heartbeats (syncs, answered by the leader) per session timeout, never more than 7', async () => {
  const leader = await healed();
  const follower = cluster.members.find((m) => m.id !== leader && m.running);
  assert.ok(follower);
  const s = await pool.connect(follower.connectString, { sessionTimeoutMs: T });
  const start = s.counters.heartbeat;
  const t0 = performance.now();
  await waitFor(() => s.counters.heartbeat - start >= 15, { timeoutMs: 6 * T, message: '15 heartbeats' });
  const perT = ((s.counters.heartbeat - start) * T) / (performance.now() - t0);
  assert.ok(perT >= 3 && perT <= 7, `${perT.toFixed(2)} heartbeats per T`);
  assert.notEqual(s.state, 'SUSPENDED');
  await s.close();
});
