// A waiter whose watched node goes while others may still be ahead of it lists the directory
// again. That listing leaves from the notification's own handling (EarlyListing in wait.ts), not
// once the wait's promise reactions come round to it; and only where the wait would list
// anyway: a deletion that grants without a listing sends none. Against a real standalone server,
// with sessions each as if in a process of its own (so every step goes through the server).
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import type { ZkSession } from '../../src/client/index.js';
import { LeaderLatch } from '../../src/leader/index.js';
import { Mutex } from '../../src/mutex/index.js';
import { waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/**
 * Records, for each `getChildren` the session is asked for, whether it was asked while the
 * session's socket was still handling a chunk it read (a flag set by a listener that runs
 * before the client's, cleared by a microtask: the first promise reaction after that chunk).
 */
function listingsDuringReads(session: ZkSession): boolean[] {
  const socket = (session as unknown as { gen: { raw: { connectionManager: { socket: Socket } } } }).gen.raw.connectionManager.socket;
  let reading = false;
  socket.prependListener('data', () => {
    reading = true;
    queueMicrotask(() => (reading = false));
  });
  const asked: boolean[] = [];
  const getChildren = session.getChildren.bind(session);
  session.getChildren = (...args: Parameters<ZkSession['getChildren']>) => {
    asked.push(reading);
    return getChildren(...args);
  };
  return asked;
}

async function queued(path: string, count: number): Promise<void> {
  await waitFor(async () => (await fx.children(path)).length === count, { timeoutMs: 5000, message: `${count} nodes queued on ${path}` });
}

test('a waiter whose predecessor (not the head) leaves lists from that notification, once; its next grant needs none', async () => {
  const path = uniquePath('early');
  const [s0, s1, s2] = await fx.sessionsApart(3);
  const holder = await new Mutex(s0!, path).acquire();
  const quit = new AbortController();
  const p = new Mutex(s1!, path).acquire({ signal: quit.signal });
  p.catch(() => undefined);
  await queued(path, 2);
  const w = new Mutex(s2!, path).acquire();
  await queued(path, 3);
  // W listed [holder, P, W] with its create and watches P (not the head: it may not hold when P goes).
  await waitFor(() => s2!.counters.getData >= 1, { timeoutMs: 5000, message: 'W watches P' });
  await s2!.sync(path);
  const asked = listingsDuringReads(s2!);
  quit.abort(new Error('P gives up'));
  await assert.rejects(p, /P gives up/);
  // W lists once, from P's deletion's notification; then it watches the holder, now its predecessor and the head.
  await waitFor(() => asked.length === 1 && s2!.counters.getData >= 2, { timeoutMs: 5000, message: 'W listed again and watches the holder' });
  assert.deepEqual(asked, [true], 'the listing was asked for while the notification was being read');
  await s2!.sync(path);
  assert.equal((await fx.children(path)).length, 2, 'W still waits behind the holder');
  await holder.release();
  const wh = await w;
  assert.deepEqual(asked, [true], 'granted on the head\'s deletion without a listing (nor an early one)');
  await wh.release();
  assert.deepEqual(await fx.children(path), []);
  await fx.waitNoWatches(s2!, path);
});

test('a leader failover between processes: the next leader lists from the notification, and leads on that listing', async () => {
  const path = uniquePath('early-leader');
  const sessions = await fx.sessionsApart(4);
  const latches = sessions.map((s, i) => new LeaderLatch(s, path, { participantId: `p${i}` }));
  for (const l of latches) {
    await l.start({ timeoutMs: 5000 });
    await queued(path, latches.indexOf(l) + 1);
  }
  await latches[0]!.awaitLeadership({ timeoutMs: 5000 });
  // p0 and p1 step down in turn; p1's leaving sends p2 (watching p1, with p0 ahead when it listed)
  // to list again: early.
  await latches[0]!.close();
  await latches[1]!.awaitLeadership({ timeoutMs: 5000 });
  const s2 = sessions[2]!;
  await waitFor(() => s2.counters.getData >= 1, { timeoutMs: 5000, message: 'p2 watches p1' });
  await s2.sync(path);
  const asked = listingsDuringReads(s2);
  await latches[1]!.close();
  await latches[2]!.awaitLeadership({ timeoutMs: 5000 });
  assert.deepEqual(asked, [true], 'one listing, asked for while the notification was being read');
  assert.equal(latches[3]!.hasLeadership, false);
  await Promise.all(latches.slice(2).map((l) => l.close()));
  assert.deepEqual(await fx.children(path), []);
  for (const s of sessions) await fx.waitNoWatches(s, path);
});

test("the early listing's reply is lost (the connection drops): the session sends it again once reconnected, and the waiter is granted in turn", async () => {
  const path = uniquePath('early-lost');
  const [s0, s1] = await fx.sessionsApart(2);
  const proxy = await fx.proxy();
  const s2 = await fx.pool.connect(proxy.connectString, { sessionTimeoutMs: 10_000 });
  const holder = await new Mutex(s0!, path).acquire();
  const quit = new AbortController();
  const p = new Mutex(s1!, path).acquire({ signal: quit.signal });
  p.catch(() => undefined);
  await queued(path, 2);
  const w = new Mutex(s2, path).acquire({ timeoutMs: 20_000 });
  await queued(path, 3);
  await waitFor(() => s2.counters.getData >= 1, { timeoutMs: 5000, message: 'W watches P' });
  await s2.sync(path);
  const asked = listingsDuringReads(s2);
  const lost = proxy.loseReply({ op: 'getChildren', path }, { timeoutMs: 10_000 });
  const listed = s2.counters.getChildren;
  quit.abort(new Error('P gives up'));
  await assert.rejects(p, /P gives up/);
  await lost; // the early listing reached the server; its answer did not reach W
  await waitFor(() => s2.counters.getChildren >= listed + 2 && s2.counters.getData >= 2, { timeoutMs: 10_000, message: 'the listing was sent again, and W watches the holder' });
  assert.deepEqual(asked, [true], 'asked for once, from the notification; the session sent it again');
  await s2.sync(path);
  assert.equal((await fx.children(path)).length, 2, 'W still waits behind the holder');
  await holder.release();
  const wh = await w;
  assert.equal(wh.isHeld, true);
  await wh.release();
  assert.deepEqual(await fx.children(path), []);
  await fx.waitNoWatches(s2, path);
});
