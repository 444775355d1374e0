// SASL on a 3-member ensemble (every member gets the JAAS file): a session that fails over to
// another member authenticates there before anything else, and keeps its id, its watches and
// its access to nodes only its SASL user may use.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { saslAcl, type ZkSession } from '../../src/index.js';
import { TestingCluster, waitFor, withTimeout } from '../../src/testing/index.js';
import { nextState, recordStates, SessionPool, uniquePath } from '../helpers.js';

const alice = { mechanism: 'DIGEST-MD5', username: 'alice', password: 'alice-secret' } as const;
let cluster: TestingCluster;
const pool = new SessionPool();

before(async () => {
  cluster = await TestingCluster.start(3, { sasl: { users: { alice: alice.password } } });
});
after(async () => {
  await pool.closeAll();
  await cluster?.close();
});

/** The id of the member holding a connection of `session` (cons). */
async function memberOf(session: ZkSession): Promise<number> {
  const id = session.sessionId;
  return waitFor(
    async () => {
      for (const m of cluster.members) {
        if (!m.running) continue;
        const conns = await m.connections({ timeoutMs: 2000 }).catch(() => []);
        if (conns.some((c) => c.sessionId !== undefined && BigInt(c.sessionId) === id)) return m.id;
      }
      return undefined;
    },
    { timeoutMs: 10_000, message: `the member serving session 0x${id.toString(16)}` },
  );
}

test('failing over to another member: authenticated there before the queued requests, same session, watch kept', async () => {
  const leader = await cluster.waitForQuorum({ timeoutMs: 15_000 });
  // Two followers only: killing one leaves a quorum and no election.
  const followers = cluster.members.filter((m) => m.id !== leader);
  const a = await pool.connect(followers.map((m) => m.connectString).join(','), { sessionTimeoutMs: 8000, sasl: alice });
  const writer = await pool.connect(cluster.connectString, { sessionTimeoutMs: 8000, sasl: alice });
  const base = uniquePath('sasl-failover');
  await writer.mkdirp(base.slice(0, base.lastIndexOf('/')));
  await writer.create(base, { acl: [saslAcl('alice')] });
  const secret = await writer.create(`${base}/secret`, { data: 'v1', acl: [saslAcl('alice')] });
  await a.sync(secret);
  const watched = await a.getDataWatch(secret);
  const id = a.sessionId;
  const serving = await memberOf(a);
  const states = recordStates(a);
  const suspended = nextState(a, 'SUSPENDED', 10_000);
  const reconnected = nextState(a, 'RECONNECTED', 15_000);
  await cluster.kill(serving);
  await suspended;
  // Sent once connected to the other member: only an authenticated alice may read it.
  const read = a.getData(secret);
  await reconnected;
  assert.equal((await read).data.toString(), 'v1');
  assert.deepEqual(states, ['SUSPENDED', 'RECONNECTED']);
  assert.equal(a.sessionId, id, 'the same session');
  assert.notEqual(await memberOf(a), serving, 'on another member');
  await writer.setData(secret, 'v2');
  assert.equal((await withTimeout(watched.changed, 10_000, 'the watch fires')).type, 'NODE_DATA_CHANGED');
  await writer.deleteRecursive(base);
});
