// The bounded stream under the recipes' iterators, without a server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BoundedStream, dropOldest } from '../../src/util/bounded-stream.js';

test('items in order; a waiting next() gets the next push; a full buffer drops the oldest', async () => {
  const s = new BoundedStream<number>(2, dropOldest, { initial: [0] });
  const it = s.iterator();
  assert.deepEqual(await it.next(), { value: 0, done: false });
  const waiting = it.next();
  s.push(1);
  assert.deepEqual(await waiting, { value: 1, done: false });
  for (const n of [2, 3, 4]) s.push(n);
  assert.deepEqual([(await it.next()).value, (await it.next()).value], [3, 4]);
});

test('a custom overflow folds the buffer; end() delivers what is buffered, then ends; onEnd runs once', async () => {
  let ends = 0;
  const s = new BoundedStream<string>(1, (buffer) => buffer.splice(0, buffer.length, 'folded'), { onEnd: () => ends++ });
  const it = s.iterator();
  s.push('a');
  s.push('b');
  s.end();
  s.end();
  s.push('after the end');
  assert.deepEqual(await it.next(), { value: 'folded', done: false });
  assert.deepEqual(await it.next(), { value: undefined, done: true });
  assert.equal(ends, 1);
});

test('return() drops the buffer and ends a next() that waits', async () => {
  let ends = 0;
  const s = new BoundedStream<number>(4, dropOldest, { onEnd: () => ends++ });
  const it = s.iterator();
  const waiting = it.next();
  assert.deepEqual(await it.return?.(), { value: undefined, done: true });
  assert.deepEqual(await waiting, { value: undefined, done: true });
  s.push(1);
  assert.deepEqual(await it.next(), { value: undefined, done: true });
  assert.equal(ends, 1);
});
