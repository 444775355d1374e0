// The driver's watches when setting them fails part-way, against a real standalone ZooKeeper: a
// waiter watches several nodes with pipelined getData reads; when one read fails, the others are
// settled and every watch they set is dropped (locally and on the server) before acquire rejects.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Acls } from '../../src/client/index.js';
import { NoAuthError } from '../../src/errors.js';
import { Semaphore } from '../../src/semaphore/index.js';
import { waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

const childrenOf = (path: string): Promise<string[]> => fx.children(path);

test('a failed watch read among several: no listener and no server watch left behind', async () => {
  const dir = uniquePath('watch-all');
  await fx.observer.mkdirp(dir);
  // The window of a waiter behind two leases: a node it may not read (a participant with an
  // ACL, e.g. a Curator process with an ACLProvider), and an ordinary holder.
  const [owner, holderSession] = await Promise.all([
    fx.pool.connect(fx.server.connectString, { auth: [{ scheme: 'digest', credentials: 'owner:secret' }] }),
    fx.pool.connect(fx.server.connectString),
  ]);
  const foreign = await owner!.create(`${dir}/lock-`, { mode: 'EPHEMERAL_SEQUENTIAL', acl: Acls.CREATOR_ALL });
  const holderSem = new Semaphore(holderSession!, dir, { maxLeases: 2, reapParentAfterMs: Infinity });
  const holder = await holderSem.acquire({ timeoutMs: 5000 });

  const proxy = await fx.proxy();
  const waiter = await fx.pool.connect(proxy.connectString);
  const sem = new Semaphore(waiter, dir, { maxLeases: 2, reapParentAfterMs: Infinity });
  // The read of the foreign node fails at once (NoAuth); the holder's read, pipelined behind it,
  // loses its reply and succeeds only when retried after the reconnect, well after the failure.
  const readsSent = proxy.loseReply({ op: 'getData', path: holder.path }).then(() => waiter.counters.getData);
  await assert.rejects(sem.acquire({ timeoutMs: 10_000 }), NoAuthError);
  // Wait for the retried read to be answered, whenever it was sent: once it was sent, a later
  // request's reply comes after its reply.
  const sent = await readsSent;
  await waitFor(() => waiter.counters.getData > sent, { timeoutMs: 5000, message: 'the lost read was retried' });
  await waiter.sync(dir);

  assert.equal(waiter.activeWatchCount, 0, 'no watch listener left in the waiter');
  await fx.waitNoWatches(waiter, dir);
  assert.deepEqual(await childrenOf(dir), [foreign.slice(dir.length + 1), holder.path.slice(dir.length + 1)].sort(), 'the waiter removed its node');

  await holder.release();
  await Promise.all([sem.close(), holderSem.close(), owner!.delete(foreign)]);
  assert.deepEqual(await childrenOf(dir), [], 'nothing left');
});
