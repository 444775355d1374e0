// AtomicNumber against real Apache Curator DistributedAtomicLong (Debian's 5.4 jars, driven by
// test/java/CuratorAtomicAgent): each reads and compare-and-sets the other's values (negative and
// large ones too), both increment one path concurrently (none lost), and both promote to the same
// lock path (Curator's PromotedToLock, our Mutex), leaving no lock node. Without Java or the
// Curator jars these tests fail (locateCurator names the package), never skip.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { AtomicNumber, RetriesExhaustedError } from '../../src/index.js';
import { CuratorAtomicAgent } from '../java/curator-atomic.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
let agent: CuratorAtomicAgent;
// Started by the first test: file-level hooks may run before the fixture's server is up.
const startAgent = async (): Promise<void> => {
  agent ??= await CuratorAtomicAgent.start(fx.server.connectString);
};
after(async () => {
  await agent?.close();
});

test("each reads and compare-and-sets the other's value", async () => {
  await startAgent();
  const path = `${uniquePath('interop-values')}/n`;
  const [s] = await fx.sessionsApart(1);
  await using ours = new AtomicNumber(s!, path);
  assert.equal(await agent.get(path), 0n, 'Curator reads a missing node as 0');
  const created = await agent.add(path, 5n);
  assert.deepEqual(created, { succeeded: true, preValue: 0n, postValue: 5n }, 'Curator creates the node (and its parent)');
  assert.equal((await ours.get()).postValue, 5n);
  assert.equal((await ours.compareAndSet(5, -9)).succeeded, true);
  assert.equal(await agent.get(path), -9n);
  const big = 2n ** 62n + 12345n;
  assert.deepEqual(await agent.compareAndSet(path, -9n, big), { succeeded: true, preValue: -9n, postValue: big });
  assert.equal((await ours.get()).postValue, big);
  assert.equal((await agent.compareAndSet(path, 0n, 1n)).succeeded, false);
  assert.equal((await ours.add(-big - 1n)).postValue, -1n);
  assert.deepEqual(await agent.add(path, 2n), { succeeded: true, preValue: -1n, postValue: 1n });
  // Ours creates a node Curator reads.
  const other = `${uniquePath('interop-values')}/m`;
  await using mine = new AtomicNumber(s!, other);
  await mine.add(AtomicNumber.MIN_VALUE);
  assert.equal(await agent.get(other), AtomicNumber.MIN_VALUE);
});

test('Curator and ours increment one path concurrently: the final value is every acknowledged increment', async () => {
  await startAgent();
  const path = uniquePath('interop-contended');
  const sessions = await fx.sessionsApart(4);
  const numbers = sessions.map((s) => new AtomicNumber(s, path, { retry: { maxRetries: 1000, baseDelayMs: 1, maxDelayMs: 20 } }));
  let ours = 0;
  const [curator] = await Promise.all([
    agent.increments(path, 4, 50, 1000),
    ...numbers.map(async (n) => {
      for (let i = 0; i < 50; i++) {
        await n.increment({ timeoutMs: 60_000 });
        ours++;
      }
    }),
  ]);
  assert.equal(curator.failed, 0, 'no Curator increment ran out of retries');
  const total = BigInt(curator.succeeded + ours);
  assert.equal(total, 400n);
  assert.equal(await agent.get(path), total);
  for (const n of numbers) assert.equal((await n.get()).postValue, total);
  await Promise.all(numbers.map((n) => n.close()));
});

test("both promote to one lock path: Curator's PromotedToLock and our Mutex exclude each other; no lock node left", async () => {
  await startAgent();
  const base = uniquePath('interop-promoted');
  const path = `${base}/n`;
  const lockPath = `${base}/lock`;
  const sessions = await fx.sessionsApart(4);
  const numbers = sessions.map((s) => new AtomicNumber(s, path, { retry: { maxRetries: 0 }, promoteToLock: { lockPath, timeoutMs: 30_000 } }));
  let ours = 0;
  let promoted = 0;
  let exhausted = 0;
  const [curator] = await Promise.all([
    agent.increments(path, 4, 25, 0, lockPath),
    ...numbers.map(async (n) => {
      for (let i = 0; i < 25; i++) {
        try {
          const r = await n.increment({ timeoutMs: 60_000 });
          ours++;
          if (r.stats.promotedTries > 0) promoted++;
        } catch (err) {
          // One attempt under the lock may still lose to an optimistic attempt: nothing applied.
          assert.ok(err instanceof RetriesExhaustedError, String(err));
          exhausted++;
        }
      }
    }),
  ]);
  const total = BigInt(curator.succeeded + ours);
  assert.equal(await agent.get(path), total, `Curator ${curator.succeeded} ok / ${curator.failed} failed, ours ${ours} ok / ${exhausted} exhausted`);
  for (const n of numbers) assert.equal((await n.get()).postValue, total);
  assert.ok(promoted > 0, 'some of ours were promoted');
  assert.deepEqual(await fx.children(lockPath), [], 'no lock node left');
  await Promise.all(numbers.map((n) => n.close()));
});
