import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { InvalidArgumentError } from '../../src/errors.js';
import { TestingCluster, waitFor } from '../../src/testing/index.js';
import { isAlive } from './procs.js';
import { RawSession, ZOK } from './raw-zk.js';

describe('TestingCluster', () => {
  let cluster: TestingCluster;

  before(async () => {
    cluster = await TestingCluster.start(3);
  });

  after(async () => {
    await cluster?.close();
  });

  it('forms an ensemble of 3 on loopback with one leader', async () => {
    assert.deepEqual(
      cluster.members.map((m) => m.id),
      [1, 2, 3],
    );
    assert.equal(cluster.connectString, cluster.members.map((m) => `127.0.0.1:${m.port}`).join(','));
    const ports = cluster.members.flatMap((m) => [m.port, m.peerPort, m.electionPort]);
    assert.equal(new Set(ports).size, 9);
    const leader = await cluster.leaderId();
    assert.ok(leader !== undefined && [1, 2, 3].includes(leader));
    const modes = await Promise.all(cluster.members.map(async (m) => (await m.srvr())?.mode));
    assert.deepEqual(modes.filter((m) => m === 'leader').length, 1);
    assert.deepEqual(modes.filter((m) => m === 'follower').length, 2);
  });

  it('replicates writes to every member', async () => {
    const [first, second] = cluster.members;
    assert.ok(first && second);
    const writer = await RawSession.open(first.host, first.port);
    const reader = await RawSession.open(second.host, second.port);
    try {
      assert.equal(await writer.create('/replicated'), ZOK);
      // A follower may lag the leader's commit: poll instead of sync.
      await waitFor(async () => (await reader.exists('/replicated')) === ZOK, { message: '/replicated on member 2' });
    } finally {
      await Promise.all([writer.close(), reader.close()]);
    }
  });

  it('elects a new leader when the leader is killed, and takes it back as a member', async () => {
    const oldLeader = await cluster.leaderId();
    assert.ok(oldLeader !== undefined);
    const pid = cluster.member(oldLeader).pid;
    assert.ok(pid);

    await cluster.kill(oldLeader);
    assert.equal(isAlive(pid), false);
    assert.equal(cluster.member(oldLeader).running, false);
    const newLeader = await cluster.waitForQuorum({ timeoutMs: 20_000 });
    assert.notEqual(newLeader, oldLeader);
    assert.equal(await cluster.leaderId(), newLeader);

    await cluster.restart(oldLeader);
    assert.equal(await cluster.waitForQuorum({ timeoutMs: 20_000 }), newLeader);
    assert.equal((await cluster.member(oldLeader).srvr())?.mode, 'follower');
    const session = await RawSession.open('127.0.0.1', cluster.member(oldLeader).port);
    try {
      assert.equal(await session.exists('/replicated'), ZOK);
    } finally {
      await session.close();
    }
  });

  it('stops serving without a majority and recovers when members come back', async () => {
    const [a, b, c] = [1, 2, 3];
    await Promise.all([cluster.stop(a), cluster.stop(b)]);
    await waitFor(async () => (await cluster.member(c).srvr()) === undefined, {
      message: 'member 3 to stop serving',
      timeoutMs: 20_000,
    });
    assert.equal(await cluster.leaderId(), undefined);
    assert.equal(await cluster.member(c).ruok(), true);

    // Alone it cannot serve, so do not wait for that; the second restart brings the quorum.
    await cluster.restart(a, { waitUntilServing: false });
    await cluster.restart(b);
    const leader = await cluster.waitForQuorum({ timeoutMs: 20_000 });
    assert.ok([1, 2, 3].includes(leader));
  });

  it('close() stops every member and removes the files, idempotently', async () => {
    const pids = cluster.members.map((m) => m.pid);
    await cluster.close();
    await cluster.close();
    for (const pid of pids) assert.ok(pid && !isAlive(pid));
    assert.ok(!existsSync(cluster.workDir));
  });
  it('refuses unknown member ids and bad options with InvalidArgumentError, before touching any member', async () => {
    const running = cluster.members.map((m) => m.running);
    for (const id of [0, 4, -1, 1.5, Number.NaN, '1', null]) {
      assert.throws(() => cluster.member(id as number), InvalidArgumentError, `member(${String(id)})`);
      await assert.rejects(async () => cluster.kill(id as number), InvalidArgumentError);
      await assert.rejects(async () => cluster.stop(id as number), InvalidArgumentError);
      await assert.rejects(async () => cluster.restart(id as number), InvalidArgumentError);
    }
    for (const timeoutMs of [-1, 0, Number.NaN, 2 ** 31, '5']) {
      await assert.rejects(cluster.restart(1, { timeoutMs: timeoutMs as number }), InvalidArgumentError);
      await assert.rejects(cluster.waitForQuorum({ timeoutMs: timeoutMs as number }), InvalidArgumentError);
      await assert.rejects(cluster.leaderId({ timeoutMs: timeoutMs as number }), InvalidArgumentError);
    }
    await assert.rejects(cluster.restart(1, { waitUntilServing: 'no' as never }), InvalidArgumentError);
    await assert.rejects(cluster.member(1).stop({ timeoutMs: -1 }), InvalidArgumentError);
    // Without memberLinks there are no links to cut: every link method says how to get them.
    const linkCalls: (() => unknown)[] = [
      () => cluster.isolate(1),
      () => cluster.partition([[1], [2, 3]]),
      () => cluster.cutLink(1, 2),
      () => cluster.healLink(1, 2),
      () => cluster.delayLinks(1, 100),
      () => cluster.heal(),
      () => cluster.link(1, 2),
    ];
    for (const call of linkCalls) assert.throws(call, (e: unknown) => e instanceof InvalidArgumentError && /memberLinks: true/.test(e.message));
    assert.deepEqual(cluster.members.map((m) => m.running), running, 'no member was stopped or started');
  });
});
