// LeaderLatch on a 3-member ensemble: five participants, exactly one leader; killing the
// ZooKeeper ensemble leader (twice) and closing the latch leader never yields two leaders, and
// each time some participant leads again with participants() in agreement.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LeaderLatch } from '../../src/index.js';
import { waitFor } from '../../src/testing/index.js';
import { childrenOf, ClusterFixture, OUTLIVES_ELECTION_MS, uniquePath } from '../helpers.js';

const fx = new ClusterFixture();

/** The election's nodes, read after a `sync` (the observer's member may lag the one a latch wrote on). */
async function nodes(path: string): Promise<string[]> {
  await fx.observer.sync(path).catch(() => undefined);
  return childrenOf(fx.observer, path);
}

/**
 * Waits until exactly one of `latches` leads and participants() agrees: the ids of `latches`
 * (any order), that leader first and the only one marked leader. Resolves to the leader.
 */
function settled(path: string, latches: readonly LeaderLatch[], ids: readonly string[]): Promise<LeaderLatch> {
  const view = new LeaderLatch(fx.observer, path);
  return waitFor(
    async () => {
      const leaders = latches.filter((l) => l.hasLeadership);
      if (leaders.length !== 1) return undefined;
      const parts = await view.participants();
      const ok =
        JSON.stringify(parts.map((p) => p.id).sort()) === JSON.stringify([...ids].sort()) &&
        parts[0]?.id === ids[latches.indexOf(leaders[0]!)] &&
        parts.every((p, i) => p.isLeader === (i === 0));
      return ok ? leaders[0] : undefined;
    },
    { timeoutMs: 45000, intervalMs: 50, message: `one leader among ${ids.join(',')}` },
  );
}

test('killing the ZooKeeper ensemble leader (twice) and closing the latch leader: never two leaders', async () => {
  const path = uniquePath('ensemble-leader');
  const sessions = await Promise.all(Array.from({ length: 5 }, () => fx.pool.connect(fx.cluster.connectString, { sessionTimeoutMs: OUTLIVES_ELECTION_MS })));
  const ids = sessions.map((_, i) => `p${i}`);
  const latches = sessions.map((s, i) => new LeaderLatch(s, path, { participantId: ids[i] }));
  let current = 0;
  let max = 0;
  const log: string[] = [];
  latches.forEach((l, i) => {
    l.on('elected', () => {
      current++;
      max = Math.max(max, current);
      log.push(`+${ids[i]}`);
    });
    l.on('revoked', () => {
      current--;
      log.push(`-${ids[i]}`);
    });
  });
  for (const [i, l] of latches.entries()) {
    l.start();
    await waitFor(async () => (await nodes(path)).length === i + 1, { timeoutMs: 10000, message: `${i + 1} participants` });
  }
  const first = await settled(path, latches, ids);
  assert.equal(first, latches[0]);
  assert.deepEqual((await first.participants()).map((p) => p.id), ids, 'queue order');
  assert.deepEqual(latches.map((l) => l.hasLeadership), [true, false, false, false, false]);

  for (let round = 1; round <= 2; round++) {
    const zkLeader = await fx.cluster.waitForQuorum({ timeoutMs: 30000 });
    const revocations = log.filter((e) => e.startsWith('-')).length;
    await fx.cluster.kill(zkLeader);
    // Every member drops its clients when the ensemble loses its leader: the latch leader is
    // suspended and (default policy) gives up leadership.
    await waitFor(() => log.filter((e) => e.startsWith('-')).length > revocations, { timeoutMs: 30000, message: `round ${round}: the latch leader gave up` });
    await fx.cluster.waitForQuorum({ timeoutMs: 30000 });
    await settled(path, latches, ids);
    assert.equal(max, 1, `round ${round}: never two leaders: ${log.join(' ')}`);
    await fx.cluster.restart(zkLeader);
    await fx.cluster.waitForQuorum({ timeoutMs: 30000 });
  }

  const leader = await settled(path, latches, ids);
  const rest = latches.filter((l) => l !== leader);
  await leader.close();
  await settled(path, rest, rest.map((l) => ids[latches.indexOf(l)]!));
  assert.equal(max, 1, `never two leaders: ${log.join(' ')}`);
  assert.equal(current, 1);

  await Promise.all(latches.map((l) => l.close()));
  assert.equal(current, 0);
  // A latch closed while its session was reconnecting deletes its node in the background
  // (close() does not wait out an outage): gone soon, never left.
  await waitFor(async () => (await nodes(path)).length === 0, { timeoutMs: 15_000, message: 'every election node deleted' }).catch(() => undefined);
  const left = await nodes(path);
  const owners = await Promise.all(left.map(async (n) => `${n} owned by 0x${(await fx.observer.exists(`${path}/${n}`))?.ephemeralOwner.toString(16)}`));
  assert.deepEqual(left, [], `left behind: ${owners.join(', ')}; sessions ${sessions.map((s) => `0x${s.sessionId.toString(16)}`).join(', ')}`);
});
