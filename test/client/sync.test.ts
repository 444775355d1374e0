// ZkSession.sync against a real standalone ZooKeeper: sent as opcode 9 through the client (which
// has no sync of its own), counted, retried through a lost reply, and usable under a chroot.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentError } from '../../src/errors.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

describe('ZkSession.sync', () => {
  test('resolves for an existing and a missing path, counts each request, and the session goes on', async () => {
    const [s] = await fx.sessionsN(1);
    const base = uniquePath('sync');
    await fx.observer.mkdirp(base);
    const before = s!.counters.sync;
    await s!.sync(base);
    await s!.sync(`${base}/missing`);
    assert.equal(s!.counters.sync - before, 2);
    // The reply was matched to its request: the next call on the same connection works.
    assert.ok(await s!.exists(base));
    await assert.rejects(s!.sync('no-slash'), InvalidArgumentError);
    await fx.observer.deleteRecursive(base);
  });

  test('is retried when its reply is lost', async () => {
    const proxy = await fx.proxy();
    const s = await fx.pool.connect(proxy.connectString);
    const base = uniquePath('sync-lost');
    const lost = proxy.loseReply({ op: 'sync', path: base });
    const before = s.counters.sync;
    await s.sync(base);
    await lost;
    assert.ok(s.counters.sync - before >= 2, 'sent again after the connection loss');
  });

  test('works under a chroot', async () => {
    const base = uniquePath('sync-chroot');
    await fx.observer.mkdirp(`${base}/dir`);
    const s = await fx.pool.connect(`${fx.server.connectString}${base}`);
    await s.sync('/dir');
    await s.sync('/');
    assert.deepEqual((await s.getChildren('/')).children, ['dir']);
    await fx.observer.deleteRecursive(base);
  });
});
