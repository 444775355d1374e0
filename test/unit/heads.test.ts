// The process's head facts (heads.ts) without a server: what is known, for how long, and that
// nothing outlives its rotations (facts are only memory; the timer goes when they do).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HeadFacts } from '../../src/driver/heads.js';

test('a fact is known while held, and for one to two rotations after its release', () => {
  const facts = new HeadFacts(60_000);
  const session = new AbortController();
  facts.record('/l/a', session.signal);
  assert.equal(facts.knows('/l/a'), true);
  assert.equal(facts.knows('/l/b'), false);
  facts.rotate();
  facts.rotate();
  assert.equal(facts.knows('/l/a'), true, 'held: rotations do not age it');
  facts.released('/l/a');
  assert.equal(facts.knows('/l/a'), true);
  facts.rotate();
  assert.equal(facts.knows('/l/a'), true);
  facts.rotate();
  assert.equal(facts.knows('/l/a'), false);
  assert.equal(facts.size, 0);
  assert.equal(facts.rotating, false);
});

test('a held fact whose session ended ages like a released one', () => {
  const facts = new HeadFacts(60_000);
  const session = new AbortController();
  facts.record('/l/a', session.signal);
  session.abort();
  facts.rotate();
  assert.equal(facts.knows('/l/a'), true);
  facts.rotate();
  facts.rotate();
  assert.equal(facts.knows('/l/a'), false);
  assert.equal(facts.size, 0);
  assert.equal(facts.rotating, false);
});

test('forget drops a fact at once, wherever it is; release of an unknown path is nothing', () => {
  const facts = new HeadFacts(60_000);
  const session = new AbortController();
  facts.record('/l/a', session.signal);
  facts.record('/l/b', session.signal);
  facts.released('/l/b');
  facts.forget('/l/a');
  facts.forget('/l/b');
  facts.released('/l/c');
  assert.equal(facts.knows('/l/a'), false);
  assert.equal(facts.knows('/l/b'), false);
  assert.equal(facts.knows('/l/c'), false);
  assert.equal(facts.size, 0);
  assert.equal(facts.rotating, false);
});

test('the rotation timer runs only while facts are kept, and never keeps the process alive', async () => {
  const facts = new HeadFacts(5);
  const session = new AbortController();
  facts.record('/l/a', session.signal);
  facts.released('/l/a');
  assert.equal(facts.rotating, true);
  const deadline = performance.now() + 5000;
  while (facts.knows('/l/a')) {
    assert.ok(performance.now() < deadline, 'fact not aged out within 5 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(facts.size, 0);
  assert.equal(facts.rotating, false);
});
