import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { InvalidArgumentError } from '../../src/errors.js';
import { ZkSession } from '../../src/index.js';
import { TestingCluster, waitFor } from '../../src/testing/index.js';

// Small ticks keep the faults fast: a follower gives up on a silent leader after
// SYNC_LIMIT x TICK_MS = 2 s.
const TICK_MS = 200;
const SYNC_LIMIT = 10;
// A leader waits initLimit x tickTime (30 s) for followers: far above what an election takes,
// so a follower stuck until then shows (see the leader-kill test).
const INIT_LIMIT = 150;
const IDS = [1, 2, 3];

describe('TestingCluster member links', () => {
  let cluster: TestingCluster;

  before(async () => {
    cluster = await TestingCluster.start(3, { tickTime: TICK_MS, syncLimit: SYNC_LIMIT, initLimit: INIT_LIMIT, memberLinks: true });
  });

  after(async () => {
    await cluster?.close();
  });

  afterEach(async () => {
    if (!cluster.members.every((m) => m.running)) return; // the close test
    cluster.heal();
    await cluster.waitForQuorum({ timeoutMs: 30_000 });
  });

  /** `srvr`'s mode of member `id`, undefined while it does not serve. */
  async function mode(id: number): Promise<string | undefined> {
    return (await cluster.member(id).srvr({ timeoutMs: 1000 }).catch(() => undefined))?.mode;
  }

  /** Waits until every member of `ids` serves and exactly one of them leads; its id. */
  function leaderAmong(ids: readonly number[], timeoutMs = 20_000): Promise<number> {
    return waitFor(
      async () => {
        const modes = await Promise.all(ids.map(mode));
        if (modes.some((m) => m === undefined) || modes.filter((m) => m === 'leader').length !== 1) return undefined;
        return ids[modes.indexOf('leader')];
      },
      { timeoutMs, intervalMs: 50, message: `one leader among members ${ids.join(', ')}` },
    );
  }

  function notServing(id: number, timeoutMs = 20_000): Promise<boolean> {
    return waitFor(async () => (await mode(id)) === undefined, { timeoutMs, intervalMs: 50, message: `member ${id} to stop serving` });
  }

  function others(...ids: number[]): number[] {
    return IDS.filter((id) => !ids.includes(id));
  }

  it('forms a quorum with every link between members through its proxy', async () => {
    const leader = await cluster.waitForQuorum();
    for (const follower of others(leader)) {
      // A follower connects to its leader through the link from it to the leader.
      const link = cluster.link(follower, leader);
      assert.deepEqual([link.from, link.to], [follower, leader]);
      assert.equal(link.peer.connections, 1, `follower ${follower} to leader ${leader}`);
      assert.ok(link.peer.bytes.toTarget > 0 && link.peer.bytes.toClient > 0);
      assert.equal(cluster.link(leader, follower).peer.connections, 0, 'a leader connects to no follower');
    }
    for (const [a, b] of [[1, 2], [1, 3], [2, 3]] as const) {
      // ZooKeeper keeps the election connection the larger id opened (it answers a smaller
      // id's handshake by connecting back), so it runs through the link from b to a.
      const { bytes } = cluster.link(b, a).election;
      assert.ok(bytes.toTarget > 0 && bytes.toClient > 0, `election traffic between ${b} and ${a}: ${JSON.stringify(bytes)}`);
    }
  });

  it('a restarted member reconnects to the leader through its link', async () => {
    const leader = await cluster.waitForQuorum();
    const [follower] = others(leader);
    assert.ok(follower !== undefined);
    const before = cluster.link(follower, leader).peer.bytes.toTarget;
    await cluster.kill(follower);
    await cluster.restart(follower);
    assert.equal(await cluster.waitForQuorum({ timeoutMs: 20_000 }), leader);
    await waitFor(() => cluster.link(follower, leader).peer.connections === 1, { message: 'the restarted follower connected' });
    assert.ok(cluster.link(follower, leader).peer.bytes.toTarget > before);
  });

  it('the leader is killed (twice): the other two elect one and serve long before initLimit x tickTime, though the followers connect before the new leader listens', async (t) => {
    const took: number[] = [];
    for (let round = 0; round < 2; round++) {
      const old = await cluster.waitForQuorum();
      const start = performance.now();
      await cluster.kill(old);
      // Through a link, a connection the new leader refuses must look refused (the follower
      // retries), not accepted and closed (it would start another election, and the leader
      // would wait out initLimit for it).
      const next = await leaderAmong(others(old), (INIT_LIMIT * TICK_MS) / 2);
      took.push(Math.round(performance.now() - start));
      assert.notEqual(next, old);
      await cluster.restart(old);
      await cluster.waitForQuorum({ timeoutMs: 30_000 });
    }
    t.diagnostic(`elections took ${took.join(' and ')} ms`);
  });

  it('isolate(follower): its clients stay connected and read for about syncLimit x tickTime, then it stops serving; heal() brings it back', async (t) => {
    const leader = await cluster.waitForQuorum();
    const [follower, other] = others(leader);
    assert.ok(follower !== undefined && other !== undefined);
    await using session = await ZkSession.connect(cluster.member(follower).connectString, { sessionTimeoutMs: 20_000 });
    await using majority = await ZkSession.connect(`${cluster.member(leader).connectString},${cluster.member(other).connectString}`, { sessionTimeoutMs: 20_000 });

    const start = performance.now();
    cluster.isolate(follower);
    // Cut off, the follower still answers reads from its own copy, on the same connection.
    assert.ok(await session.exists('/', { signal: AbortSignal.timeout(1000) }));
    assert.equal(session.state, 'CONNECTED');
    let lastRead = 0;
    await waitFor(
      async () => {
        if (await session.exists('/', { signal: AbortSignal.timeout(250) }).catch(() => null)) lastRead = performance.now() - start;
        return (await mode(follower)) === undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50, message: `isolated follower ${follower} to stop serving` },
    );
    const stoppedAfter = performance.now() - start;
    t.diagnostic(`isolated follower: last read answered after ${Math.round(lastRead)} ms, stopped serving after ${Math.round(stoppedAfter)} ms`);
    // It waits syncLimit x tickTime from its last packet of the leader (pings come every half tick).
    assert.ok(stoppedAfter >= 0.75 * SYNC_LIMIT * TICK_MS, `stopped serving after ${stoppedAfter} ms`);
    assert.ok(lastRead >= 0.5 * SYNC_LIMIT * TICK_MS, `last read answered after ${lastRead} ms`);

    // The other two keep their leader and take writes.
    assert.equal(await leaderAmong([leader, other]), leader);
    await majority.create('/written-while-isolated');

    cluster.heal();
    await cluster.waitForQuorum({ timeoutMs: 20_000 });
    await waitFor(async () => (await session.exists('/written-while-isolated', { signal: AbortSignal.timeout(1000) })) !== null, {
      timeoutMs: 20_000,
      message: 'the healed follower to have the write',
    });
  });

  it('isolate(leader): the other two elect a new leader; heal() takes the old one back', async () => {
    const old = await cluster.waitForQuorum();
    cluster.isolate(old);
    const next = await leaderAmong(others(old));
    assert.notEqual(next, old);
    await notServing(old); // without a quorum of followers it steps down
    cluster.heal();
    await cluster.waitForQuorum({ timeoutMs: 20_000 });
    assert.ok((await mode(old)) !== undefined);
  });

  it('partition([[1], [2, 3]]): member 1 stops serving, 2 and 3 keep a leader', async () => {
    await cluster.waitForQuorum();
    cluster.partition([[1], [2, 3]]);
    assert.ok([2, 3].includes(await leaderAmong([2, 3])));
    await notServing(1);
    // A partition replaces the previous one: now 3 is alone.
    cluster.partition([[1, 2], [3]]);
    assert.ok([1, 2].includes(await leaderAmong([1, 2])));
    await notServing(3);
  });

  it('cutLink(follower, leader) cuts one link, healLink restores it', async () => {
    const leader = await cluster.waitForQuorum();
    const [follower, other] = others(leader);
    assert.ok(follower !== undefined && other !== undefined);
    cluster.cutLink(follower, leader);
    await notServing(follower); // it still reaches `other`, which follows the unreachable leader
    assert.equal(await leaderAmong([leader, other]), leader);
    cluster.healLink(leader, follower);
    assert.equal(await cluster.waitForQuorum({ timeoutMs: 20_000 }), leader);
  });

  it('delayLinks(follower, ms): a write through the slow follower takes at least ms', async () => {
    const leader = await cluster.waitForQuorum();
    const [follower] = others(leader);
    assert.ok(follower !== undefined);
    await using session = await ZkSession.connect(cluster.member(follower).connectString, { sessionTimeoutMs: 20_000 });
    const delayMs = 300;
    cluster.delayLinks(follower, delayMs);
    assert.equal(cluster.link(follower, leader).peer.latencyMs, delayMs);
    assert.equal(cluster.link(leader, follower).election.latencyMs, delayMs);
    const start = performance.now();
    await session.create('/written-through-a-slow-follower');
    // Forwarded to the leader, then committed back: two crossings of the delayed link.
    assert.ok(performance.now() - start >= delayMs, `took ${performance.now() - start} ms`);
    cluster.delayLinks(follower, 0);
    assert.equal(cluster.link(follower, leader).peer.mode, 'pass');
  });

  it('refuses bad input with InvalidArgumentError, changing no link', () => {
    const bad: [string, () => unknown][] = [];
    for (const id of [0, 4, -1, 1.5, Number.NaN, '1', null, undefined]) {
      bad.push([`isolate(${String(id)})`, () => cluster.isolate(id as number)]);
      bad.push([`delayLinks(${String(id)}, 10)`, () => cluster.delayLinks(id as number, 10)]);
      bad.push([`cutLink(1, ${String(id)})`, () => cluster.cutLink(1, id as number)]);
      bad.push([`healLink(${String(id)}, 1)`, () => cluster.healLink(id as number, 1)]);
      bad.push([`link(${String(id)}, 2)`, () => cluster.link(id as number, 2)]);
    }
    bad.push(['cutLink(2, 2)', () => cluster.cutLink(2, 2)], ['healLink(1, 1)', () => cluster.healLink(1, 1)], ['link(3, 3)', () => cluster.link(3, 3)]);
    for (const ms of [-1, Number.NaN, 2 ** 31, '5', null, undefined, Infinity]) bad.push([`delayLinks(1, ${String(ms)})`, () => cluster.delayLinks(1, ms as number)]);
    const groups: unknown[] = [
      [],
      [[]],
      [[1, 2, 3], []],
      [[1], [2, 3], []],
      [[1, 2], [2, 3]],
      [[1, 1], [2, 3]],
      [[1], [2]],
      [[1], [2, 3, 4]],
      [[0], [1, 2, 3]],
      [['1'], [2, 3]],
      [1, [2, 3]],
      [[1], 'x'],
      'x',
      null,
      undefined,
    ];
    for (const g of groups) bad.push([`partition(${JSON.stringify(g)})`, () => cluster.partition(g as number[][])]);
    for (const [name, call] of bad) assert.throws(call, InvalidArgumentError, name);
    for (const a of IDS) {
      for (const b of others(a)) {
        const { peer, election } = cluster.link(a, b);
        assert.deepEqual([peer.mode, election.mode], ['pass', 'pass'], `link ${a} -> ${b}`);
      }
    }
  });

  it('close() closes every link proxy', async () => {
    const proxies = IDS.flatMap((a) => others(a).flatMap((b) => [cluster.link(a, b).peer, cluster.link(a, b).election]));
    assert.equal(proxies.length, 12);
    await cluster.close();
    for (const proxy of proxies) {
      const refused = await new Promise<boolean>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: proxy.port });
        socket.once('connect', () => {
          socket.destroy();
          resolve(false);
        });
        socket.once('error', () => resolve(true));
      });
      assert.ok(refused, `proxy on ${proxy.port} still listens`);
    }
  });
});
