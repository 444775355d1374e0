// A session on a 3-member ensemble: killing the member it is connected to fails over to
// another member with the same session.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitFor } from '../../src/testing/index.js';
import { ClusterFixture, nextState, OUTLIVES_ELECTION_MS, recordStates, uniquePath } from '../helpers.js';

const fx = new ClusterFixture();

async function memberOf(sessionId: bigint): Promise<number> {
  const hex = `0x${sessionId.toString(16)}`;
  return waitFor(async () => {
    for (const m of fx.cluster.members) {
      if (!m.running) continue;
      const conns = await m.connections({ timeoutMs: 2000 }).catch(() => []);
      if (conns.some((c) => c.sessionId !== undefined && BigInt(c.sessionId) === BigInt(hex))) return m.id;
    }
    return undefined;
  }, { timeoutMs: 10000, message: `the member serving session ${hex}` });
}

test('killing the connected member: SUSPENDED, then RECONNECTED on another member, same session and ephemerals', async () => {
  const session = await fx.pool.connect(fx.cluster.connectString, { sessionTimeoutMs: 8000 });
  const base = uniquePath('failover');
  await session.mkdirp(base);
  const eph = await session.create(`${base}/e`, { mode: 'EPHEMERAL' });
  const id = session.sessionId;
  const serving = await memberOf(id);
  const states = recordStates(session);
  const reconnected = nextState(session, 'RECONNECTED', 15000);
  await fx.cluster.kill(serving);
  await reconnected;
  assert.deepEqual(states, ['SUSPENDED', 'RECONNECTED']);
  assert.equal(session.sessionId, id);
  assert.notEqual(await memberOf(id), serving);
  assert.ok(await session.exists(eph), 'ephemeral kept');
  await fx.cluster.restart(serving);
  await session.deleteRecursive(base);
});

test('killing the ensemble leader: the session survives the election', async () => {
  const session = await fx.pool.connect(fx.cluster.connectString, { sessionTimeoutMs: OUTLIVES_ELECTION_MS });
  const id = session.sessionId;
  const leader = await fx.cluster.waitForQuorum({ timeoutMs: 15000 });
  await fx.cluster.kill(leader);
  await fx.cluster.waitForQuorum({ timeoutMs: 15000 });
  await waitFor(async () => (await session.exists('/zookeeper')) !== null, { timeoutMs: 15000, message: 'a read after the election' });
  assert.equal(session.sessionId, id);
  assert.notEqual(session.state, 'LOST');
  await fx.cluster.restart(leader);
});
