// A 3-member ensemble: 6 sessions increment one AtomicNumber while the ZooKeeper leader, then a
// follower, is killed. None lost, none doubled: the acknowledged increments bound the final
// value from below, and the unknown outcomes (lost replies) from above; every session reads it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AtomicNumber, OutcomeUnknownError, ZkRecipesError } from '../../src/index.js';
import { decodeLong } from '../../src/atomic/codec.js';
import { waitFor } from '../../src/testing/index.js';
import { ClusterFixture, OUTLIVES_ELECTION_MS, uniquePath } from '../helpers.js';

const fx = new ClusterFixture();

test('killing members during contended increments: acked <= final <= acked + unknown, every session reads it', async (t) => {
  const path = uniquePath('ensemble-atomic');
  const sessions = await Promise.all(Array.from({ length: 6 }, () => fx.pool.connect(fx.cluster.connectString, { sessionTimeoutMs: OUTLIVES_ELECTION_MS })));
  const numbers = sessions.map((s) => new AtomicNumber(s, path, { retry: { maxRetries: 100, baseDelayMs: 1, maxDelayMs: 50 } }));
  let acked = 0;
  let unknown = 0;
  let stop = false;
  const other: unknown[] = [];
  const workers = numbers.map(async (n) => {
    while (!stop) {
      try {
        await n.increment({ timeoutMs: 15_000 });
        acked++;
      } catch (err) {
        if (err instanceof OutcomeUnknownError) unknown++;
        // A call that failed otherwise applied nothing (its reads failed, or it lost every race).
        else other.push(err);
      }
    }
  });
  const progress = (): string => `${acked} acked, ${unknown} unknown, ${other.length} other errors (${other.slice(0, 3).map(String).join('; ')})`;
  const more = (n: number, what: string): Promise<unknown> => {
    const from = acked;
    return waitFor(() => acked >= from + n, { timeoutMs: 40_000, message: `${n} increments ${what}` }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}: ${progress()}`, { cause: err });
    });
  };
  try {
    await more(100, 'before the kill');
    const leader = await fx.cluster.waitForQuorum({ timeoutMs: 15_000 });
    await fx.cluster.kill(leader);
    await fx.cluster.waitForQuorum({ timeoutMs: 30_000 });
    await more(100, 'after the election');
    await fx.cluster.restart(leader);
    const leaderNow = await fx.cluster.waitForQuorum({ timeoutMs: 30_000 });
    const follower = fx.cluster.members.find((m) => m.running && m.id !== leaderNow)!;
    await fx.cluster.kill(follower.id);
    await more(100, 'with a follower killed');
    await fx.cluster.restart(follower.id);
    await fx.cluster.waitForQuorum({ timeoutMs: 30_000 });
  } finally {
    stop = true;
    await Promise.all(workers);
  }
  t.diagnostic(progress());
  await fx.observer.sync(path);
  const final = decodeLong((await fx.observer.getData(path)).data, path);
  assert.ok(BigInt(acked) <= final && final <= BigInt(acked + unknown), `acked ${acked} <= final ${final} <= acked + unknown ${acked + unknown}`);
  // Nothing else than typed errors (or the call's own deadline).
  for (const err of other) assert.ok(err instanceof ZkRecipesError || (err as Error).name === 'TimeoutError', String(err));
  for (const n of numbers) assert.equal((await n.get({ timeoutMs: 15_000 })).postValue, final, 'every session reads the final value');
  await Promise.all(numbers.map((n) => n.close()));
});
