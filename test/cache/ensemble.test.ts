// The caches on a real 3-member ensemble while another session writes in tight loops through
// another member: the member the caches' session is on is killed (the session moves), or cut off
// from the others past the session timeout (the session is lost, a new one starts once healed,
// or it fails over). Afterwards every cache is SYNCED and equal to a fresh read made after a
// sync, and its events are in zxid order per node, without duplicates. In both watch modes.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { ZkSession } from '../../src/index.js';
import { ChaosProxy, TestingCluster, waitFor } from '../../src/testing/index.js';
import { OUTLIVES_ELECTION_MS, SessionPool, uniquePath } from '../helpers.js';
import { assertNoWrites, churn, EventLog, expectInSync, makeCache, treePlan, type AnyCache, type CacheKind } from './support.js';

const TICK = 200;
/** A member cut off from the leader stops serving after syncLimit x tickTime (1 s). */
const SYNC_LIMIT = 5;
const SEED = Number(process.env.ZK_TEST_SEED ?? Date.now() % 100_000);

let cluster: TestingCluster;
const pool = new SessionPool();

before(async () => {
  cluster = await TestingCluster.start(3, { memberLinks: true, tickTime: TICK, syncLimit: SYNC_LIMIT });
});
after(async () => {
  await pool.closeAll();
  await cluster?.close();
});
// A test that failed half-way leaves the next one a whole ensemble (not a member down or cut off).
afterEach(async () => {
  if (cluster) await healed();
});

/** The id of the member `session` is connected to (cons on every running member). */
async function memberOf(session: ZkSession): Promise<number> {
  const hex = `0x${session.sessionId.toString(16)}`;
  return waitFor(
    async () => {
      for (const m of cluster.members.filter((x) => x.running)) {
        const conns = await m.connections().catch(() => []);
        if (conns.some((c) => c.sessionId === hex)) return m.id;
      }
      return undefined;
    },
    { timeoutMs: 10_000, message: `the member of session ${hex}` },
  );
}

/** Heals every link, waits for a leader and for every member to answer a sync. */
async function healed(): Promise<void> {
  cluster.heal();
  for (const m of cluster.members) if (!m.running) await m.restart();
  await cluster.waitForQuorum({ timeoutMs: 30_000 });
  await Promise.all(
    cluster.members.map(async (m) => {
      const s = await pool.connect(m.connectString, { sessionTimeoutMs: 10_000 });
      await waitFor(async () => s.sync('/').then(() => true, () => false), { timeoutMs: 30_000, message: `member ${m.id} syncs` });
      await s.close();
    }),
  );
}

/** Adds the session's state and counters to a failed wait's message (what it was doing meanwhile). */
async function withSession(session: ZkSession, wait: Promise<void>, story?: () => Promise<string>): Promise<void> {
  try {
    await wait;
  } catch (err) {
    if (err instanceof Error) err.message += ` [session 0x${session.sessionId.toString(16)} ${session.state}, counters ${JSON.stringify(session.counters)}${story ? await story() : ''}]`;
    throw err;
  }
}

interface Watched {
  kind: CacheKind;
  path: string;
  cache: AnyCache;
  log: EventLog;
}

/** A tree, a children and a node cache on `session`, started. */
async function caches(session: ZkSession, root: string, mode: 'persistent' | 'one-shot'): Promise<Watched[]> {
  const made = (
    [
      ['tree', root],
      ['children', root],
      ['node', `${root}/a`],
    ] as const
  ).map(([kind, path]) => {
    const cache = makeCache(kind, session, path, { watchMode: mode });
    return { kind, path, cache, log: new EventLog(cache) };
  });
  await Promise.all(made.map(({ cache }) => cache.start({ timeoutMs: 15_000 })));
  return made;
}

/** Writes in tight loops until `stop` aborts; resolves once they all stopped. */
function writing(writer: ZkSession, root: string, stop: AbortSignal, seed: number, progress?: { applied: number }): Promise<number> {
  return churn(writer, { ...treePlan(root, seed, 0, 3), until: stop, tolerateLoss: true, ...(progress && { progress }) });
}

/** Every cache SYNCED, equal to a fresh read after a sync, its events in order; then closed. */
async function settle(session: ZkSession, reader: ZkSession, watched: readonly Watched[], label: string): Promise<string> {
  for (const { kind, path, cache, log } of watched) {
    await expectInSync(cache, reader, kind, path, { timeoutMs: 30_000 });
    assert.equal(cache.state, 'SYNCED', `${label}: ${kind}`);
    log.check({ errors: 0 });
    assert.ok(log.count('resynced') >= 1, `${label}: the ${kind} cache re-read after the fault: ${log.tail()}`);
  }
  const summary = watched.map(({ kind, cache, log }) => `${kind}: ${cache.size} held, ${log.count('added')}/${log.count('changed')}/${log.count('removed')} added/changed/removed, ${log.count('stale')} stale, ${log.count('sessionLost')} lost, ${log.count('resynced')} resynced`).join('; ');
  for (const { cache } of watched) await cache.close();
  assertNoWrites(session);
  return `${label}: ${summary}`;
}

for (const mode of ['persistent', 'one-shot'] as const) {
  describe(`caches on an ensemble (${mode} watches)`, () => {
    test('the member the caches session is on is killed while another member takes writes: the session moves, and once the member is back each cache is SYNCED and equal to a fresh read', async (t) => {
      await cluster.waitForQuorum();
      // Every session of this test must outlive an election (the victim may be the leader).
      const reader = await pool.connect(cluster.connectString, { sessionTimeoutMs: OUTLIVES_ELECTION_MS });
      const root = uniquePath(`ens-kill-${mode}`);
      await reader.mkdirp(root);
      // The member the session lands on may be the leader. The other kill tests kill a follower.
      const s = await pool.connect(cluster.connectString, { sessionTimeoutMs: OUTLIVES_ELECTION_MS });
      const states: string[] = [];
      let killedAt = 0;
      s.on('state', (state) => states.push(`${state}@${killedAt ? Math.round(performance.now() - killedAt) : 'before'}`));
      const victim = await memberOf(s);
      const other = cluster.members.find((m) => m.id !== victim);
      assert.ok(other);
      const writer = await pool.connect(other.connectString, { sessionTimeoutMs: OUTLIVES_ELECTION_MS });
      const watched = await caches(s, root, mode);
      const stop = new AbortController();
      const progress = { applied: 0 };
      const writes = writing(writer, root, stop.signal, SEED, progress);
      await waitFor(() => watched.every(({ log }) => log.count('changed') + log.count('removed') > 0), { timeoutMs: 10_000, message: 'changes seen before the kill' });
      const wasLeader = (await cluster.leaderId()) === victim;
      killedAt = performance.now();
      await cluster.kill(victim);
      const atKill = progress.applied;
      // When the ensemble answers again after the kill (an election if the victim led).
      const quorum = cluster.waitForQuorum({ timeoutMs: 30_000 }).then(
        () => `${Math.round(performance.now() - killedAt)} ms`,
        () => 'none within 30 s',
      );
      const story = async (): Promise<string> => `; victim ${victim}${wasLeader ? ' (the leader)' : ''}, quorum ${await quorum} after the kill, session states (ms after the kill) ${states.join(' ')}`;
      for (const { log } of watched) await withSession(s, log.waitCount('resynced', 1, 30_000), story);
      assert.notEqual(await memberOf(s), victim, 'the session moved');
      // Writes go on through another member, seen after the re-read, then stop.
      await waitFor(() => progress.applied >= atKill + 300, { timeoutMs: 30_000, message: `300 writes after the kill (${progress.applied - atKill})` });
      const seen = watched.map(({ log }) => log.entries.length);
      await waitFor(() => watched.every(({ log }, i) => log.entries.length > (seen[i] ?? 0)), { timeoutMs: 10_000, message: 'changes seen after the re-read' });
      stop.abort();
      assert.ok((await writes) > 0);
      await healed();
      t.diagnostic(`${await settle(s, reader, watched, `member ${victim}${wasLeader ? ' (the leader)' : ''} killed`)}; ${await writes} writes, ${progress.applied - atKill} after the kill${await story()}`);
      await reader.deleteRecursive(root);
    });

    for (const route of ['only that member', 'every member'] as const) {
      test(`the caches member is cut off from the others past the session timeout (the session knows ${route}) while another member takes writes: after healing each cache is SYNCED and equal to a fresh read`, async (t) => {
        const leader = await cluster.waitForQuorum();
        const victim = cluster.members.find((m) => m.id !== leader);
        const other = cluster.members.find((m) => m.id !== victim?.id);
        assert.ok(victim && other);
        const reader = await pool.connect(other.connectString, { sessionTimeoutMs: 10_000 });
        const writer = await pool.connect(other.connectString, { sessionTimeoutMs: 10_000 });
        const root = uniquePath(`ens-cut-${mode}`);
        await reader.mkdirp(root);
        // Every member: through proxies, the others' refusing until the cut, so the session
        // starts on the victim and can then fail over.
        const routes = await Promise.all(cluster.members.map((m) => ChaosProxy.start({ targetPort: m.port })));
        const others = routes.filter((_, i) => cluster.members[i] !== victim);
        for (const r of others) r.reject(true);
        const connectString = route === 'only that member' ? victim.connectString : routes.map((r) => r.connectString).join(',');
        const T = 2000;
        const s = await pool.connect(connectString, { sessionTimeoutMs: T });
        const on = await memberOf(s);
        assert.equal(on, victim.id);
        const firstSession = s.sessionId;
        const watched = await caches(s, root, mode);
        const stop = new AbortController();
        const writes = writing(writer, root, stop.signal, SEED + 7);
        await waitFor(() => watched.every(({ log }) => log.count('changed') + log.count('removed') > 0), { timeoutMs: 10_000, message: 'changes seen before the cut' });
        cluster.isolate(on);
        for (const r of others) r.reject(false);
        for (const { log } of watched) await log.waitCount('stale', 1, 10_000);
        // Past the session timeout: the leader no longer tracks the first session (or it moved).
        const started = performance.now();
        await waitFor(
          async () => {
            if (performance.now() - started < T * 1.5) return false;
            const dumped = await cluster.member(leader).dump();
            return !dumped.sessions.some((x) => x.sessionId === `0x${firstSession.toString(16)}`) || route === 'every member';
          },
          { timeoutMs: 20_000, message: 'the first session expired on the leader' },
        );
        await healed();
        for (const { log } of watched) await withSession(s, log.waitCount('resynced', 1, 30_000));
        if (route === 'only that member') {
          for (const { log } of watched) assert.ok(log.count('sessionLost') >= 1, `the session was lost: ${log.tail()}`);
          assert.notEqual(s.sessionId, firstSession);
        }
        const seen = watched.map(({ log }) => log.entries.length);
        await waitFor(() => watched.every(({ log }, i) => log.entries.length > (seen[i] ?? 0)), { timeoutMs: 10_000, message: 'changes seen after healing' });
        stop.abort();
        assert.ok((await writes) > 0);
        t.diagnostic(`${await settle(s, reader, watched, `member ${on} cut off (${route})`)}; ${await writes} writes`);
        await reader.deleteRecursive(root);
        await s.close();
        await Promise.all(routes.map((r) => r.close()));
      });
    }
  });
}
