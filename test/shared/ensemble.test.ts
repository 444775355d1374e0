// SharedCount on a real 3-member ensemble: a count written through one member reaches a client on
// another (event, and refresh() right after the write is acknowledged, which a plain local read
// on a lagging member may not have yet); the member a client is on is killed while others write,
// the session moves to a member left standing, re-reads, and its compare-and-set loop ends with
// every acknowledged increment counted once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ConnectionLossError, OutcomeUnknownError, SharedCount, type ZkSession } from '../../src/index.js';
import { TestingCluster, waitFor } from '../../src/testing/index.js';
import { SessionPool, uniquePath } from '../helpers.js';

let cluster: TestingCluster;
const pool = new SessionPool();

before(async () => {
  cluster = await TestingCluster.start(3);
});
after(async () => {
  await pool.closeAll();
  await cluster?.close();
});

/** The id of the member `session` is connected to. */
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

/** Increments with a trySet loop; resolves once applied (an unknown outcome is thrown). */
async function increment(count: SharedCount): Promise<void> {
  for (;;) {
    const seen = count.get();
    if (await count.trySet(seen.value + 1, seen, { timeoutMs: 10_000 })) return;
  }
}

test('written through one member, seen by a client on another: its event, and refresh() at once', async () => {
  const path = uniquePath('across');
  const [m1, m2] = cluster.members;
  const a = await pool.connect(m1!.connectString, { sessionTimeoutMs: 10_000 });
  const b = await pool.connect(m2!.connectString, { sessionTimeoutMs: 10_000 });
  await using ca = new SharedCount(a, path, 0);
  await using cb = new SharedCount(b, path, 0);
  await ca.start({ timeoutMs: 10_000 });
  await cb.start({ timeoutMs: 10_000 });
  const seenB: number[] = [];
  cb.on('changed', (v) => seenB.push(v.value));
  for (let i = 1; i <= 5; i++) {
    await increment(ca);
    // Acknowledged by the leader through member 1: member 2's client reads it after a sync.
    assert.equal((await cb.refresh({ timeoutMs: 10_000 })).value, i);
  }
  await waitFor(() => seenB.at(-1) === 5, { timeoutMs: 10_000, message: 'the events reach the other member' });
  assert.deepEqual(seenB, [1, 2, 3, 4, 5]);
  await increment(cb);
  await waitFor(() => ca.count === 6, { timeoutMs: 10_000, message: 'and the other way' });
});

test('the member a client is on is killed while both increment: it moves, re-reads, nothing is lost or doubled', async (t) => {
  const path = uniquePath('killed');
  const leader = await cluster.waitForQuorum({ timeoutMs: 30_000 });
  const followers = cluster.members.filter((m) => m.id !== leader);
  // Only followers in its list: the one it lands on is killed, the other takes it over.
  const a = await pool.connect(followers.map((m) => m.connectString).join(','), { sessionTimeoutMs: 10_000 });
  const b = await pool.connect(cluster.member(leader).connectString, { sessionTimeoutMs: 10_000 });
  const victim = cluster.member(await memberOf(a));
  await using ca = new SharedCount(a, path, 0);
  await using cb = new SharedCount(b, path, 0);
  await ca.start({ timeoutMs: 10_000 });
  await cb.start({ timeoutMs: 10_000 });
  const seenA: bigint[] = [];
  ca.on('changed', (v) => seenA.push(v.zxid));
  let acked = 0;
  let unknown = 0;
  const loop = async (c: SharedCount, n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      try {
        await increment(c);
        acked++;
      } catch (err) {
        if (err instanceof OutcomeUnknownError) unknown++; // sent when the member died: may be applied
        else if (err instanceof ConnectionLossError && !err.sent) i--; // never sent: try again
        else throw err;
      }
    }
  };
  const running = Promise.all([loop(ca, 30), loop(cb, 30)]);
  await waitFor(() => ca.count >= 10, { timeoutMs: 20_000, message: 'the increments are under way' });
  const atKill = ca.count;
  await victim.kill();
  await running;
  assert.notEqual(await memberOf(a), victim.id, 'the session moved to the member left standing');
  const final = (await cb.refresh({ timeoutMs: 10_000 })).value;
  assert.ok(final >= acked && final <= acked + unknown, `final ${final}, acknowledged ${acked}, unknown ${unknown}`);
  assert.ok(acked >= 60 - unknown);
  assert.ok(final > atKill + 5, `increments went on after the kill (${atKill} then, ${final} at the end)`);
  t.diagnostic(`acknowledged ${acked}, unknown ${unknown}, at the kill ${atKill}`);
  await waitFor(() => ca.count === final, { timeoutMs: 10_000, message: 'the moved client has the final count' });
  for (let i = 1; i < seenA.length; i++) assert.ok(seenA[i]! > seenA[i - 1]!, 'events in zxid order');
  await victim.restart();
});
