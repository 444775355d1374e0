// DistributedQueue on a 3-member ensemble under real faults: a lost put reply whose item is
// taken before the producer reconnects to another member; an acknowledgement lost with a killed
// member; and a fault-injection run of producers and consumers of both modes through member
// kills, client partitions past the session timeout, forced expiries and lost replies, checking
// every delivery promise of the queue guide and that nothing is left behind.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import { DistributedQueue } from '../../src/index.js';
import { expireSession, waitFor, withTimeout, type ChaosProxy } from '../../src/testing/index.js';
import { ClusterFixture, nextState, uniquePath } from '../helpers.js';
import { childrenOf, itemData, itemPaths, noop, text } from './support.js';

const fx = new ClusterFixture();
describe('lost replies and killed members', () => {
  test('a put whose reply is lost, whose item is taken, then a reconnect to another member: the put resolves once (decided after a sync)', async () => {
    const path = uniquePath('put-taken-other-member');
    const bucket = `${path}/items/p-500/b-0000000000`;
    const { victim, viaSecond, viaFirst, failOver } = await fx.behindTwoFollowers();
    const producer = new DistributedQueue(victim, path);
    const consumer = new DistributedQueue(fx.observer, path);
    await producer.put('warm-up');
    assert.equal(text(await consumer.poll()), 'warm-up');

    // Lost on the first member; the producer is cut off until the item is taken.
    const lost = viaFirst.loseReply({ path: `${bucket}/i-` }).then(() => {
      viaFirst.reject(true);
      viaSecond.reject(true);
    });
    const syncs = victim.counters.sync;
    const put = producer.put('once');
    put.catch(noop);
    await lost;
    try {
      await waitFor(async () => text(await consumer.poll()) === 'once', { timeoutMs: 5000, message: 'the item taken' });
    } finally {
      failOver();
    }
    const item = await withTimeout(put, 15_000, 'the put');
    assert.ok(item.startsWith(`${bucket}/i-`), item);
    assert.equal(viaSecond.connections, 1, 'reconnected to the second member');
    assert.ok(victim.counters.sync > syncs, 'decided after a sync');
    assert.deepEqual(await itemPaths(fx.observer, path), [], 'no second item');
    await producer.close();
    await consumer.close();
    assert.deepEqual(await childrenOf(fx.observer, `${path}/producers`), []);
    await fx.observer.deleteRecursive(path);
  });

  test("an acknowledgement lost with the consumer's member (killed): retried on another member, nothing stranded", async () => {
    const path = uniquePath('ack-member-killed');
    const { victim, first, viaFirst, failOver } = await fx.behindTwoFollowers();
    await new DistributedQueue(fx.observer, path).put('X');
    const q = new DistributedQueue(victim, path);
    const before = victim.counters.multi;
    const sessionId = victim.sessionId;
    let calls = 0;
    const stop = new AbortController();
    const consuming = q.consume(
      () => {
        calls++;
        viaFirst.latency(500); // the acknowledgement is held on its way to the first member
      },
      { signal: stop.signal, onError: noop },
    );
    try {
      await waitFor(() => victim.counters.multi >= before + 2, { timeoutMs: 5000, message: 'claim and acknowledgement sent' });
      await fx.cluster.kill(first);
      failOver();
      await waitFor(async () => (await itemPaths(fx.observer, path)).length === 0 && (await childrenOf(fx.observer, `${path}/claims`)).length === 0, {
        timeoutMs: 15_000,
        message: 'acknowledged through the second member',
      });
    } finally {
      stop.abort();
      viaFirst.pass();
      await fx.cluster.restart(first);
    }
    await withTimeout(consuming, 10_000, 'consume to stop');
    assert.equal(victim.sessionId, sessionId, 'the same session all along');
    assert.equal(calls, 1);
    await q.close();
    await fx.waitNoWatches(victim, path);
    await fx.observer.deleteRecursive(path);
  });
});

/** A client of the fault run: a session behind one proxy per member. */
interface Client {
  readonly name: string;
  readonly session: ZkSession;
  readonly routes: readonly ChaosProxy[];
}

describe('fault injection', () => {
  test('producers and consumers of both modes through member kills, partitions past the session timeout, forced expiries and lost replies: every promise holds, nothing is left', async (t) => {
    const base = uniquePath('chaos');
    const paths = { amo: `${base}/at-most-once`, alo: `${base}/at-least-once`, puts: `${base}/puts-only` };
    const sessionTimeoutMs = 2000;
    const client = async (name: string): Promise<Client> => {
      const routes = await Promise.all(fx.cluster.members.map((m) => fx.proxyTo(m.port)));
      const session = await fx.pool.connect(routes.map((r) => r.connectString).join(','), { sessionTimeoutMs });
      return { name, session, routes };
    };
    const [p1, p2, t1, t2, c1, c2] = await Promise.all(['p1', 'p2', 't1', 't2', 'c1', 'c2'].map(client));
    assert.ok(p1 && p2 && t1 && t2 && c1 && c2);
    const everyone = [p1, p2, t1, t2, c1, c2];

    // Faults on one client.
    const partitionPastTimeout = async (c: Client): Promise<void> => {
      const lost = nextState(c.session, 'LOST', 15_000);
      c.routes.forEach((r) => r.blackhole());
      try {
        await lost;
      } finally {
        c.routes.forEach((r) => r.pass());
      }
    };
    const expire = async (c: Client): Promise<void> => {
      // Its other routes stay refused while one route is used to expire the session.
      const [via, ...others] = c.routes;
      others.forEach((r) => {
        r.reject(true);
        r.dropAll();
      });
      try {
        await expireSession(c.session, via!);
      } finally {
        others.forEach((r) => r.reject(false));
      }
    };
    const loseNext = (c: Client, match: { op: 'multi'; path: string }): void => {
      for (const r of c.routes) r.loseReply(match, { timeoutMs: 3000 }).catch(noop);
    };

    // What happened, as the clients saw it.
    const acked = { amo: new Set<string>(), alo: new Set<string>(), puts: new Set<string>() };
    const unknown = { amo: new Set<string>(), alo: new Set<string>(), puts: new Set<string>() };
    const taken = new Map<string, number>(); // at-most-once: key -> times handed out
    const handled = new Map<string, Set<string>>(); // at-least-once: key -> item paths delivered
    const acknowledged = new Set<string>(); // at-least-once keys whose handler succeeded
    const progress = (): number => taken.size + acknowledged.size;

    // Producers: each key goes to the three queues; a put that rejects has an unknown outcome.
    const producing = new AbortController();
    const produce = async (c: Client): Promise<void> => {
      const queues = { amo: new DistributedQueue(c.session, paths.amo), alo: new DistributedQueue(c.session, paths.alo), puts: new DistributedQueue(c.session, paths.puts) };
      for (let n = 0; !producing.signal.aborted; n++) {
        const key = `${c.name}-${n}`;
        for (const k of ['amo', 'alo', 'puts'] as const) {
          try {
            await queues[k].put(key, { timeoutMs: 10_000 });
            acked[k].add(key);
          } catch {
            unknown[k].add(key);
          }
        }
        // Flow control: the consumers keep up (a backlog of at most ~100 items).
        await waitFor(() => producing.signal.aborted || acked.alo.size - acknowledged.size < 100, { timeoutMs: 60_000, intervalMs: 10 });
      }
      await Promise.all(Object.values(queues).map((q) => q.close()));
    };

    // At-most-once consumers: take in a loop.
    const consuming = new AbortController();
    const take = async (c: Client): Promise<DistributedQueue> => {
      const q = new DistributedQueue(c.session, paths.amo, { participantId: c.name });
      while (!consuming.signal.aborted) {
        try {
          const key = (await q.take({ timeoutMs: 1000, signal: consuming.signal })).toString();
          taken.set(key, (taken.get(key) ?? 0) + 1);
        } catch {
          // a timeout, an abort, a fault: take again
        }
      }
      return q;
    };

    // At-least-once consumers; every 10th key fails its first delivery.
    const consume = (c: Client, concurrency: number): { q: DistributedQueue; done: Promise<void> } => {
      const q = new DistributedQueue(c.session, paths.alo, { participantId: c.name });
      const done = q.consume(
        (data, d) => {
          const key = data.toString();
          handled.set(key, (handled.get(key) ?? new Set()).add(d.path));
          if (d.redeliveries === 0 && Number(key.split('-')[1]) % 10 === 0) throw new Error('first delivery fails');
          acknowledged.add(key);
        },
        { concurrency, signal: consuming.signal, onError: noop, redeliveryBackoff: { baseDelayMs: 20, maxDelayMs: 200 }, errorBackoff: { baseDelayMs: 20, maxDelayMs: 500 } },
      );
      return { q, done };
    };

    const producers = [produce(p1), produce(p2)];
    const takers = [take(t1), take(t2)];
    const consumers = [consume(c1, 2), consume(c2, 1)];
    const advance = async (n: number, what: string): Promise<void> => {
      const target = progress() + n;
      await waitFor(() => progress() >= target, { timeoutMs: 30_000, intervalMs: 20, message: `progress after ${what}` });
    };

    let faults = 0;
    try {
      await advance(40, 'the start');
      // A follower dies and comes back.
      const leader = await fx.cluster.waitForQuorum();
      const follower = fx.cluster.members.find((m) => m.id !== leader)!.id;
      await fx.cluster.kill(follower);
      faults++;
      await advance(40, 'a follower killed');
      await fx.cluster.restart(follower);
      // Replies lost: a put, a claim or settlement, an at-most-once delete.
      loseNext(p1, { op: 'multi', path: `${paths.alo}/items/` });
      loseNext(c1, { op: 'multi', path: `${paths.alo}/claims/` });
      loseNext(c2, { op: 'multi', path: `${paths.alo}/claims/` });
      loseNext(t1, { op: 'multi', path: `${paths.amo}/items/` });
      faults += 4;
      await advance(40, 'lost replies');
      await partitionPastTimeout(t1);
      faults++;
      await advance(40, 'an at-most-once consumer partitioned');
      // The leader dies: the other two elect a new one.
      const oldLeader = await fx.cluster.waitForQuorum();
      await fx.cluster.kill(oldLeader);
      faults++;
      await advance(40, 'the leader killed');
      await fx.cluster.restart(oldLeader);
      await expire(p1);
      faults++;
      await advance(40, 'a producer expired');
      await partitionPastTimeout(c1);
      faults++;
      await advance(40, 'an at-least-once consumer partitioned');
      await expire(c2);
      faults++;
      await advance(40, 'an at-least-once consumer expired');
      loseNext(p2, { op: 'multi', path: `${paths.puts}/items/` });
      loseNext(c2, { op: 'multi', path: `${paths.alo}/claims/` });
      loseNext(t2, { op: 'multi', path: `${paths.amo}/items/` });
      faults += 3;
      await partitionPastTimeout(p2);
      await expire(t2);
      faults += 2;
      await advance(40, 'a producer partitioned, a consumer expired');
    } finally {
      producing.abort();
      for (const c of everyone) c.routes.forEach((r) => r.pass());
    }
    await withTimeout(Promise.all(producers), 30_000, 'producers to stop');
    await fx.cluster.waitForQuorum();

    // Everything put is consumed: the queues drain.
    await waitFor(
      async () =>
        (await itemPaths(fx.observer, paths.amo)).length === 0 &&
        (await itemPaths(fx.observer, paths.alo)).length === 0 &&
        (await childrenOf(fx.observer, `${paths.alo}/claims`)).length === 0,
      { timeoutMs: 30_000, intervalMs: 200, message: 'both queues drained' },
    );
    consuming.abort();
    const takeQueues = await withTimeout(Promise.all(takers), 15_000, 'takers to stop');
    await withTimeout(Promise.all(consumers.map((c) => c.done)), 15_000, 'consumers to stop');
    await Promise.all([...takeQueues, ...consumers.map((c) => c.q)].map((q) => q.close()));

    const attempted = (k: 'amo' | 'alo' | 'puts'): Set<string> => new Set([...acked[k], ...unknown[k]]);
    // Puts: every acknowledged put is there exactly once; one with an unknown outcome at most once.
    const rest = await itemData(fx.observer, paths.puts);
    const counts = new Map<string, number>();
    for (const key of rest) counts.set(key, (counts.get(key) ?? 0) + 1);
    assert.deepEqual([...acked.puts].filter((k) => counts.get(k) !== 1), [], 'acknowledged puts not there exactly once');
    assert.deepEqual([...counts].filter(([k, n]) => n > 1 || !attempted('puts').has(k)), [], 'no item twice, none never put');
    // At-most-once: never handed out twice; what was taken was put.
    assert.deepEqual([...taken].filter(([, n]) => n > 1), [], 'at-most-once handed an item out twice');
    assert.deepEqual([...taken.keys()].filter((k) => !attempted('amo').has(k)), [], 'taken but never put');
    // Losses are allowed only where a take lost its delete's reply (a fault at that moment).
    const lostAmo = [...acked.amo].filter((k) => !taken.has(k));
    assert.ok(lostAmo.length <= 2 * faults, `${lostAmo.length} acknowledged at-most-once items never taken (${faults} faults)`);
    // At-least-once: every put item handled, each key one item (no duplicate put).
    assert.deepEqual([...acked.alo].filter((k) => !acknowledged.has(k)), [], 'acknowledged puts never handled');
    assert.deepEqual([...handled].filter(([, items]) => items.size > 1), [], 'one put, two items');
    assert.deepEqual([...handled.keys()].filter((k) => !attempted('alo').has(k)), [], 'handled but never put');
    assert.ok(acked.alo.size >= 100, `a run of some size: ${acked.alo.size} at-least-once puts`);

    // Nothing is left: no item, claim, consumer in line, put record, dead letter or watch. (A
    // session cut off by a partition may have been revived by its packets arriving late; its
    // ephemerals go when the server expires it.)
    const leftovers = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const p of [paths.amo, paths.alo]) {
        out.push(...(await itemPaths(fx.observer, p)));
        for (const dir of ['claims', 'consumers', 'producers', 'dead']) out.push(...(await childrenOf(fx.observer, `${p}/${dir}`)).map((n) => `${p}/${dir}/${n}`));
      }
      out.push(...(await childrenOf(fx.observer, `${paths.puts}/producers`)));
      return out;
    };
    await waitFor(async () => (await leftovers()).length === 0, { timeoutMs: 10_000, intervalMs: 200, message: 'nothing left' }).catch(async (err: unknown) => {
      assert.fail(`left behind: ${(await leftovers()).join(', ')} (${String(err)})`);
    });
    for (const c of everyone) await fx.waitNoWatches(c.session, base);
    t.diagnostic(
      `# fault run: ${faults} faults; puts acknowledged ${acked.alo.size + acked.amo.size + acked.puts.size}, unknown ${unknown.alo.size + unknown.amo.size + unknown.puts.size}; ` +
        `taken ${taken.size} (${lostAmo.length} at-most-once items lost); at-least-once deliveries ${[...handled.values()].length}`,
    );
    await fx.observer.deleteRecursive(base);
  });
});

