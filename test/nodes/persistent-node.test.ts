// PersistentNode on one server: created, re-created after deletion with the latest data and
// after session loss, protected/sequential names, close leaving nothing, bad input refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PersistentNode } from '../../src/nodes/index.js';
import { ClosedError, InvalidArgumentError, OperationTimeoutError } from '../../src/errors.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

function nextCreated(node: PersistentNode): Promise<string> {
  return new Promise((resolve) => node.once('created', resolve));
}

test('an ephemeral node comes back after deletion, with the latest data, and close removes it', async () => {
  const base = uniquePath('pn-delete');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  const node = new PersistentNode(s, `${base}/member`, { data: 'v1' });
  node.start();
  await node.waitForInitialCreate({ timeoutMs: 10000 });
  assert.equal(node.actualPath, `${base}/member`);
  assert.equal((await fx.observer.getData(`${base}/member`)).data.toString(), 'v1');
  await node.setData('v2');
  const recreated = nextCreated(node);
  await fx.observer.delete(`${base}/member`);
  await recreated;
  const got = await fx.observer.getData(`${base}/member`);
  assert.equal(got.data.toString(), 'v2');
  assert.equal(got.stat.ephemeralOwner, s.sessionId);
  await node.close();
  assert.deepEqual(await fx.children(base), []);
  await fx.waitNoWatches(s, base);
  await assert.rejects(node.setData('x'), ClosedError);
});

test('a protected sequential node is re-created under a new name after session loss', async () => {
  const base = uniquePath('pn-expire');
  const proxy = await fx.proxy();
  const s = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
  await using node = new PersistentNode(s, `${base}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL', protection: true, data: 'd' });
  node.start();
  await node.waitForInitialCreate({ timeoutMs: 10000 });
  const first = node.actualPath;
  assert.match(first ?? '', /\/_c_[0-9a-f-]{36}-n-\d{10}$/);
  const recreated = nextCreated(node);
  await expireSession(s, proxy);
  const second = await recreated;
  assert.notEqual(second, first);
  await waitFor(async () => (await fx.children(base)).length === 1 && (await fx.observer.exists(second)) !== null, { timeoutMs: 15000 });
  await node.close();
  assert.deepEqual(await fx.children(base), []);
});

test('a persistent node survives and close deletes it; bad input is refused', async () => {
  const base = uniquePath('pn-persistent');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  const node = new PersistentNode(s, `${base}/p`, { mode: 'PERSISTENT', data: 'x' });
  node.start();
  await node.waitForInitialCreate({ timeoutMs: 10000 });
  assert.equal((await fx.observer.exists(`${base}/p`))?.ephemeralOwner, 0n);
  await node.close();
  assert.equal(await fx.observer.exists(`${base}/p`), null);
  assert.throws(() => new PersistentNode(s, 'no-slash'), InvalidArgumentError);
  assert.throws(() => new PersistentNode(s, '/a', { mode: 'CONTAINER' as never }), InvalidArgumentError);
  assert.throws(() => new PersistentNode(s, '/a', { data: 5 as never }), InvalidArgumentError);
  assert.throws(() => node.start(), ClosedError);
  const never = new PersistentNode(s, '/zookeeper/quota/x/y');
  await assert.rejects(never.waitForInitialCreate({ timeoutMs: 10 }), InvalidArgumentError);
  const blocked = new PersistentNode(s, `${base}/blocked/deeper`, { mode: 'PERSISTENT' });
  await fx.observer.create(`${base}/blocked`, { mode: 'EPHEMERAL' });
  blocked.on('error', () => undefined);
  blocked.start();
  await assert.rejects(blocked.waitForInitialCreate({ timeoutMs: 300 }), OperationTimeoutError);
  await blocked.close();
});
