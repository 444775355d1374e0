// Container and TTL nodes on a server whose container check runs every 100 ms (ZooKeeper runs it
// every minute by default), with extended types on for TTLs; a server without them refuses TTLs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import { UnimplementedError } from '../../src/errors.js';
import { Mutex } from '../../src/index.js';
import { TestingServer, waitFor } from '../../src/testing/index.js';
import { SessionPool, uniquePath } from '../helpers.js';

let server: TestingServer;
const pool = new SessionPool();
let zk: ZkSession;

before(async () => {
  server = await TestingServer.start({ jvmArgs: ['-Dznode.container.checkIntervalMs=100', '-Dzookeeper.extendedTypesEnabled=true'] });
  zk = await pool.connect(server.connectString, { sessionTimeoutMs: 10_000 });
  await zk.mkdirp('/test');
});
after(async () => {
  await pool.closeAll();
  await server.close();
});

const gone = async (path: string, what: string): Promise<void> => void (await waitFor(async () => (await zk.exists(path)) === null, { timeoutMs: 5000, message: what }));

describe('container and TTL nodes', () => {
  test('a container is deleted by the server once its last child is gone, not before it had one', async () => {
    const p = uniquePath('container');
    // The server shows clients a container's ephemeral owner as 0: only its behaviour tells.
    const made = await zk.createWithStat(p, { mode: 'CONTAINER', data: 'd' });
    assert.equal(made.path, p);
    assert.equal(await zk.create(`${p}-plain`, { mode: 'CONTAINER' }), `${p}-plain`);
    await zk.create(`${p}/child`);
    // Still there a few checks later: it has a child (and the other never had one).
    await zk.sync(p);
    await waitFor(async () => (await zk.getData(p)).data.toString() === 'd', { timeoutMs: 1000 });
    await zk.delete(`${p}/child`);
    await gone(p, 'the emptied container deleted');
    assert.notEqual(await zk.exists(`${p}-plain`), null);
    await zk.delete(`${p}-plain`);
  });

  test('mkdirp({ container: true }) makes every missing level a container: emptied, the chain goes level by level', async () => {
    const base = uniquePath('container-chain');
    await zk.mkdirp(`${base}/a/b`, { container: true, data: 'leaf' });
    assert.equal((await zk.getData(`${base}/a/b`)).data.toString(), 'leaf');
    await zk.create(`${base}/a/b/x`);
    await zk.delete(`${base}/a/b/x`);
    await gone(base, 'every level deleted');
  });

  test("a mutex's directory is a container: deleted after the last release, re-created by the next acquisition", async () => {
    const dir = uniquePath('mutex-container');
    const mutex = new Mutex(zk, dir);
    const first = await mutex.acquire({ timeoutMs: 5000 });
    await first.release();
    await gone(dir, 'the lock directory deleted by the server');
    const second = await mutex.acquire({ timeoutMs: 5000 });
    assert.notEqual(await zk.exists(dir), null);
    await second.release();
    await mutex.close();
  });

  test('a node with a time to live is deleted once unchanged and childless for its TTL; sequential ones too', async () => {
    const p = uniquePath('ttl');
    const made = await zk.createWithStat(p, { mode: 'PERSISTENT_WITH_TTL', ttlMs: 300 });
    assert.equal(made.path, p);
    const seq = await zk.create(`${p}-s-`, { mode: 'PERSISTENT_SEQUENTIAL_WITH_TTL', ttlMs: 300 });
    assert.match(seq, /-s-\d{10}$/);
    await gone(p, 'the TTL node deleted');
    await gone(seq, 'the sequential TTL node deleted');
  });

  test('a server without extended types refuses TTL nodes: UnimplementedError, nothing created', async () => {
    const plain = await TestingServer.start();
    try {
      const s = await pool.connect(plain.connectString, { sessionTimeoutMs: 10_000 });
      await assert.rejects(s.create('/ttl', { mode: 'PERSISTENT_WITH_TTL', ttlMs: 1000 }), UnimplementedError);
      await waitFor(() => s.state === 'CONNECTED' || s.state === 'RECONNECTED', { timeoutMs: 5000 });
      assert.equal(await s.exists('/ttl'), null);
    } finally {
      await plain.close();
    }
  });
});
