import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestingServer, ZooKeeperStartError, waitFor } from '../../src/testing/index.js';
import { isAlive, markedPids } from './procs.js';
import { RawSession, ZNONODE, ZOK } from './raw-zk.js';

describe('TestingServer', () => {
  let server: TestingServer;

  before(async () => {
    server = await TestingServer.start();
  });

  after(async () => {
    await server?.close();
  });

  it('serves on 127.0.0.1 with a short tick', async () => {
    assert.equal(server.host, '127.0.0.1');
    assert.equal(server.connectString, `127.0.0.1:${server.port}`);
    assert.equal(await server.ruok(), true);
    const status = await server.srvr();
    assert.equal(status?.mode, 'standalone');
    const stats = await server.mntr();
    assert.equal(stats.zk_server_state, 'standalone');
    assert.equal(typeof stats.zk_znode_count, 'number');
    const conf = await server.fourLetterWord('conf');
    assert.match(conf, /^tickTime=200$/m);
    assert.match(conf, /^minSessionTimeout=400$/m);
    assert.match(conf, /^maxSessionTimeout=60000$/m);
  });

  it('reports sessions and watches through cons, wchc and wchp', async () => {
    const session = await RawSession.open(server.host, server.port, 500);
    try {
      assert.equal(session.timeoutMs, 500);
      assert.equal(await session.create('/watched'), ZOK);
      assert.equal(await session.watchData('/watched'), ZOK);
      assert.equal(await session.exists('/not-yet', true), ZNONODE);

      const connections = await server.connections();
      const ours = connections.find((c) => c.sessionId === session.sessionId);
      assert.ok(ours, `session ${session.sessionId} in ${JSON.stringify(connections)}`);
      assert.equal(ours.timeoutMs, 500);
      assert.equal(ours.remoteAddress, '127.0.0.1');

      const bySession = await server.watchesBySession();
      assert.deepEqual(bySession.get(session.sessionId)?.sort(), ['/not-yet', '/watched']);
      const byPath = await server.watchesByPath();
      assert.deepEqual(byPath.get('/watched'), [session.sessionId]);
      assert.deepEqual(byPath.get('/not-yet'), [session.sessionId]);
      assert.equal((await server.mntr()).zk_watch_count, 2);
    } finally {
      await session.close();
    }
    await waitFor(async () => (await server.watchesByPath()).size === 0, { message: 'watches gone' });
  });

  it('lists tracked sessions and their ephemerals through dump', async () => {
    const session = await RawSession.open(server.host, server.port, 500);
    try {
      assert.equal(await session.create('/dumped', '', true), ZOK);
      const listed = await server.dump();
      assert.ok(listed.sessions.some((s) => s.sessionId === session.sessionId && s.expiresAt !== ''), `session ${session.sessionId} in ${JSON.stringify(listed.sessions)}`);
      assert.deepEqual(listed.ephemerals.get(session.sessionId), ['/dumped']);
    } finally {
      await session.close();
    }
    await waitFor(async () => !(await server.dump()).sessions.some((s) => s.sessionId === session.sessionId), { message: 'closed session untracked' });
  });

  it('caps session timeouts to [2 ticks, maxSessionTimeout]', async () => {
    const short = await RawSession.open(server.host, server.port, 10);
    const long = await RawSession.open(server.host, server.port, 600_000);
    try {
      assert.equal(short.timeoutMs, 400);
      assert.equal(long.timeoutMs, 60_000);
    } finally {
      await Promise.all([short.close(), long.close()]);
    }
  });

  it('keeps port and data across kill and restart', async () => {
    const session = await RawSession.open(server.host, server.port);
    assert.equal(await session.create('/survivor', 'x'), ZOK);
    session.destroy();
    const nodes = (await server.mntr()).zk_znode_count;
    const { port } = server;
    const oldPid = server.pid;
    assert.ok(oldPid);

    await server.kill();
    assert.equal(server.running, false);
    assert.equal(isAlive(oldPid), false);
    assert.equal(await server.ruok({ timeoutMs: 500 }), false);

    await server.restart();
    assert.equal(server.port, port);
    assert.notEqual(server.pid, oldPid);
    assert.equal((await server.srvr())?.mode, 'standalone');
    assert.equal((await server.mntr()).zk_znode_count, nodes);
    const again = await RawSession.open(server.host, server.port);
    try {
      assert.equal(await again.exists('/survivor'), ZOK);
    } finally {
      await again.close();
    }
  });

  it('restart() of a running server stops it first', async () => {
    const oldPid = server.pid;
    await server.restart();
    assert.notEqual(server.pid, oldPid);
    assert.equal(await server.ruok(), true);
  });

  it('stop() ends the JVM and close() removes its files, idempotently', async () => {
    const pid = server.pid;
    assert.ok(pid);
    assert.ok(markedPids().includes(pid));
    await server.stop();
    assert.equal(isAlive(pid), false);
    assert.ok(!markedPids().includes(pid));
    assert.ok(existsSync(server.workDir));
    await server.close();
    await server.close();
    assert.ok(!existsSync(server.workDir));
    await assert.rejects(server.restart(), /closed/);
  });
});

describe('TestingServer options', () => {
  it('uses a fixed port and a caller dataDir (kept), with await using', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'zk-recipes-test-data-'));
    try {
      let workDir: string;
      {
        await using first = await TestingServer.start({ dataDir });
        workDir = first.workDir;
        assert.equal(first.dataDir, dataDir);
        const session = await RawSession.open(first.host, first.port);
        assert.equal(await session.create('/kept'), ZOK);
        await session.close();
      }
      assert.ok(!existsSync(workDir));
      assert.ok(existsSync(join(dataDir, 'version-2')));
      await using second = await TestingServer.start({ dataDir, tickTime: 100 });
      const session = await RawSession.open(second.host, second.port, 10);
      try {
        assert.equal(session.timeoutMs, 200);
        assert.equal(await session.exists('/kept'), ZOK);
      } finally {
        await session.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('fails with the JVM output when a fixed port is taken', async () => {
    const blocker = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    assert.ok(address && typeof address === 'object');
    try {
      await assert.rejects(TestingServer.start({ port: address.port }), (error: unknown) => {
        assert.ok(error instanceof ZooKeeperStartError);
        assert.equal(error.code, 'ZOOKEEPER_START_FAILED');
        assert.equal(error.portInUse, true);
        assert.match(error.message, /Address already in use/);
        return true;
      });
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
