// The process's own lock nodes (local-nodes.ts) without a server: a follower is told once how
// a node ended, a session's end ends all its nodes, and nothing is kept once a node ended.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WatchEvent } from '../../src/client/types.js';
import { LocalNodes } from '../../src/driver/local-nodes.js';

const settled = async (p: Promise<WatchEvent>): Promise<WatchEvent | 'pending'> => Promise.race([p, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);

test('a follower of the same session is told of our deletion once; a node not ours, of another session, or gone is not followed', async () => {
  const nodes = new LocalNodes();
  const session = new AbortController();
  nodes.add('k/a', session.signal);
  assert.equal(nodes.follow('k/b', '/b', session.signal), undefined);
  assert.equal(nodes.follow('k/a', '/a', new AbortController().signal), undefined, 'another session follows on the server');
  const f = nodes.follow('k/a', '/a', session.signal);
  assert.ok(f);
  assert.equal(await settled(f.changed), 'pending');
  nodes.end('k/a', 'deleted');
  assert.deepEqual(await f.changed, { type: 'NODE_DELETED', path: '/a' });
  assert.equal(nodes.follow('k/a', '/a', session.signal), undefined, 'gone: a server watch answers now');
  assert.equal(nodes.size, 0);
});

test("the end of a node's session ends it for its followers: look again (data changed)", async () => {
  const nodes = new LocalNodes();
  const s1 = new AbortController();
  const s2 = new AbortController();
  nodes.add('k/a', s1.signal);
  nodes.add('k/b', s1.signal);
  nodes.add('k/c', s2.signal);
  const fa = nodes.follow('k/a', '/a', s1.signal)!;
  const fc = nodes.follow('k/c', '/c', s2.signal)!;
  s1.abort();
  assert.deepEqual(await fa.changed, { type: 'NODE_DATA_CHANGED', path: '/a' });
  assert.equal(await settled(fc.changed), 'pending', 'another session: untouched');
  assert.equal(nodes.has('k/b'), false);
  assert.equal(nodes.size, 1);
  nodes.end('k/c', 'session-ended');
  assert.equal((await fc.changed).type, 'NODE_DATA_CHANGED');
  assert.equal(nodes.size, 0);
  // A session that already ended adds nothing.
  nodes.add('k/d', s1.signal);
  assert.equal(nodes.has('k/d'), false);
});

test('stopping a follow stops it; other followers are still told', async () => {
  const nodes = new LocalNodes();
  const session = new AbortController();
  nodes.add('k/a', session.signal);
  const f1 = nodes.follow('k/a', '/a', session.signal)!;
  const f2 = nodes.follow('k/a', '/a', session.signal)!;
  f1.stop();
  nodes.end('k/a', 'deleted');
  assert.equal(await settled(f1.changed), 'pending', 'the stopped follow is never told');
  assert.equal((await f2.changed).type, 'NODE_DELETED');
});
