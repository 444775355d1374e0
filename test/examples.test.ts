// The examples of the docs run against a real server and do what they say.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TestingServer } from '../src/testing/index.js';
import { main as mutexExample } from '../examples/mutex.js';
import { main as semaphoreExample } from '../examples/semaphore.js';
import { main as rwlockExample } from '../examples/rwlock.js';
import { main as leaderExample } from '../examples/leader.js';
import { main as queueExample } from '../examples/queue.js';

let server: TestingServer;
before(async () => {
  server = await TestingServer.start();
});
after(async () => {
  await server?.close();
});

test('examples/mutex.ts: 3 workers x 5 guarded increments = 15', async () => {
  assert.equal(await mutexExample(server.connectString), 15);
});

test('examples/semaphore.ts: never more than maxLeases (2) at once, and 2 reached', async () => {
  assert.equal(await semaphoreExample(server.connectString), 2);
});

test('examples/rwlock.ts: readers share (more than one at once), the writer was alone, downgrade keeps the write', async () => {
  const { maxReaders, writerAlone } = await rwlockExample(server.connectString);
  assert.equal(writerAlone, true);
  assert.ok(maxReaders >= 1 && maxReaders <= 3);
});

test('examples/leader.ts: the leader steps down and another participant is elected', async () => {
  const leaders = await leaderExample(server.connectString);
  assert.equal(leaders.length, 2);
  assert.notEqual(leaders[0], leaders[1]);
});

test('examples/queue.ts: 10 jobs handled once each, the failing one redelivered once', async () => {
  assert.deepEqual(await queueExample(server.connectString), { handled: 10, retries: 1 });
});
