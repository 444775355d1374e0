// A 3-member ensemble: kill the ZooKeeper leader while 8 sessions contend for one mutex. Never
// two holders; contention resumes once the ensemble has a leader again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Mutex } from '../../src/index.js';
import { waitFor } from '../../src/testing/index.js';
import { ClusterFixture, OUTLIVES_ELECTION_MS, uniquePath } from '../helpers.js';

const fx = new ClusterFixture();

test('killing the ensemble leader during contention: never two holders, contention resumes', async () => {
  const path = uniquePath('ensemble-mutex');
  const sessions = await Promise.all(Array.from({ length: 8 }, () => fx.pool.connect(fx.cluster.connectString, { sessionTimeoutMs: OUTLIVES_ELECTION_MS })));
  let holders = 0;
  let maxHolders = 0;
  let grants = 0;
  let stop = false;
  const errors: unknown[] = [];
  const workers = sessions.map(async (s) => {
    const m = new Mutex(s, path);
    while (!stop) {
      try {
        const h = await m.acquire({ timeoutMs: 20000 });
        // Only count grants whose session is still believed alive.
        if (!h.signal.aborted) {
          holders++;
          maxHolders = Math.max(maxHolders, holders);
          grants++;
          await new Promise((r) => setImmediate(r));
          holders--;
        }
        await h.release().catch(() => undefined);
      } catch (err) {
        // Connection loss during the election may fail an acquisition; it must never grant twice.
        errors.push(err);
      }
    }
    await m.close();
  });
  await waitFor(() => grants >= 50, { timeoutMs: 20000, message: '50 grants before the kill' });
  const leader = await fx.cluster.waitForQuorum({ timeoutMs: 15000 });
  await fx.cluster.kill(leader);
  const atKill = grants;
  await fx.cluster.waitForQuorum({ timeoutMs: 20000 });
  await waitFor(() => grants >= atKill + 100, { timeoutMs: 30000, message: '100 more grants after the election' });
  await fx.cluster.restart(leader);
  stop = true;
  await Promise.all(workers);
  assert.equal(maxHolders, 1, 'never two holders');
  assert.ok(grants >= atKill + 100);
});
