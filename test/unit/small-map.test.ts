// SmallMap: the Map subset a lock wait keeps its watches in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SmallMap } from '../../src/util/small-map.js';

test('SmallMap: get, has, set (insert and replace), delete, keys and entries in insertion order', () => {
  const m = new SmallMap<string, number>();
  assert.equal(m.size, 0);
  assert.equal(m.get('a'), undefined);
  assert.equal(m.has('a'), false);
  m.set('a', 1).set('b', 2).set('c', 3);
  assert.equal(m.size, 3);
  m.set('b', 20);
  assert.equal(m.size, 3);
  assert.deepEqual(m.entries(), [['a', 1], ['b', 20], ['c', 3]]);
  assert.deepEqual([...m], [['a', 1], ['b', 20], ['c', 3]]);
  assert.equal(m.delete('a'), true);
  assert.equal(m.delete('a'), false);
  assert.deepEqual(m.keys(), ['b', 'c']);
  // keys() is a copy: deleting while iterating it visits every key once.
  for (const k of m.keys()) m.delete(k);
  assert.equal(m.size, 0);
  assert.deepEqual([...m], []);
});
