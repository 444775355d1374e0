// The examples of the docs run against a real server and do what they say.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TestingServer } from '../src/testing/index.js';
import { main as mutexExample } from '../examples/mutex.js';
import { main as semaphoreExample } from '../examples/semaphore.js';

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
