// The loss clock's rule (loss-clock.ts) without a server: which answers move it, and by how
// much. The ensemble tests (test/client/leader-cut.test.ts) prove the rule against real members.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LossClock, relayMargin } from '../../src/client/loss-clock.js';

const T = 2000;
const R = relayMargin(T); // 550 ms at T = 2 s

test('the relay margin covers a ping period (tickTime/2 <= T/4) and its jitter', () => {
  assert.ok(relayMargin(2000) >= 2000 / 4 + 20);
  assert.ok(relayMargin(40_000) >= 40_000 / 4 + 40_000 / 40);
});

test('answers a follower could give alone never move the clock', () => {
  const clock = new LossClock(0);
  clock.answered(100, 101, false, T);
  clock.answered(5000, 5001, false, T);
  assert.equal(clock.heard, 0);
  assert.equal(clock.proven, 0);
});

test('a leader-proving answer credits what was answered a relay margin before its send time, not itself', () => {
  const clock = new LossClock(0);
  clock.answered(1000, 1002, false, T); // a read
  clock.answered(1000 + R - 10, 1000 + R - 5, true, T); // a sync sent too soon after it
  assert.equal(clock.heard, 0, 'the read may not have reached the leader yet');
  assert.equal(clock.proven, 1000 + R - 10);
  clock.answered(1002 + R, 1003 + R, true, T); // a sync sent a margin after the read's answer
  assert.equal(clock.heard, 1000, 'the read is credited, at its send time');
  clock.answered(2000 + R, 2001 + R, true, T);
  assert.equal(clock.heard, 1002 + R, 'then the syncs answered a margin before, never the proving request itself');
});

test('idle heartbeats every T/3: the clock trails by one heartbeat', () => {
  const clock = new LossClock(0);
  const h = T / 3;
  for (let k = 1; k <= 6; k++) clock.answered(k * h, k * h + 2, true, T);
  assert.equal(clock.heard, 5 * h);
  assert.equal(clock.proven, 6 * h);
});

test('a handshake counts at once and forgets the previous connection\'s touches', () => {
  const clock = new LossClock(0);
  clock.answered(100, 101, false, T);
  clock.disconnected();
  clock.answered(200 + R, 201 + R, true, T);
  assert.equal(clock.heard, 0, 'a touch of a dropped connection may never have been relayed');
  clock.handshake(3000);
  assert.equal(clock.heard, 3000);
  assert.equal(clock.proven, 3000);
});

test('never goes backwards', () => {
  const clock = new LossClock(0);
  clock.handshake(5000);
  clock.answered(100, 101, false, T);
  clock.answered(200 + R, 201 + R, true, T);
  assert.equal(clock.heard, 5000);
});

test('the log stays small under any load', () => {
  const clock = new LossClock(0);
  for (let t = 0; t < 600; t += 0.01) clock.answered(t, t + 0.5, false, T); // 60 000 answers in 0.6 s
  assert.ok(clock.pending <= 600 / (T / 200) + 2, `${clock.pending} entries`);
  clock.answered(600 + R, 601 + R, true, T);
  assert.ok(clock.heard >= 599 - T / 200 && clock.heard <= 600, `credited ${clock.heard}`);
});
