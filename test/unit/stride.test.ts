// Queue consumers' strides without a server, as tables of item names: shares and deputies,
// striding only while other consumers are seen at work, overdue items taken by a deputy and
// then by anyone, the bound on what a listing keeps, and the pace of listings.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ACTIVE_ROUNDS, ANYONE_ROUNDS, DEPUTY_ROUNDS, deputyOf, Pace, PACE, shareOf, Stride, type Place } from '../../src/queue/stride.js';

interface Ref {
  name: string;
  seq: number;
}

/** Items of one bucket with these sequence numbers, in order. */
const items = (...seqs: number[]): Ref[] => seqs.map((seq) => ({ name: `i-3fa9c2d1-${String(seq).padStart(10, '0')}`, seq }));
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);
const seqs = (refs: readonly Ref[]): number[] => refs.map((r) => r.seq);
const B = 'p-500/b-0000000000';

/** A stride that has seen another consumer at work (so it strides from its next listing). */
function striding(): Stride {
  const s = new Stride();
  s.collided();
  return s;
}

/** Sequence numbers (from `from`) of items in consumer `owner`'s share of `count`, and not in `deputy`'s deputyship when given. */
function ofShare(owner: number, count: number, n: number, from = 0, notDeputy?: number): number[] {
  const out: number[] = [];
  for (let seq = from; out.length < n; seq++) {
    const [r] = items(seq) as [Ref];
    if (shareOf(r.name, count) === owner && (notDeputy === undefined || deputyOf(r.name, count) !== notDeputy)) out.push(seq);
  }
  return out;
}

describe('shares and deputies', () => {
  test('every item is in exactly one share, spread evenly; its deputy is another consumer', () => {
    for (const count of [2, 3, 4, 7]) {
      const sizes = new Array<number>(count).fill(0);
      for (const r of items(...range(0, 4000))) {
        const owner = shareOf(r.name, count);
        assert.ok(Number.isInteger(owner) && owner >= 0 && owner < count);
        assert.equal(shareOf(r.name, count), owner, 'the same for every consumer');
        const deputy = deputyOf(r.name, count);
        assert.ok(deputy >= 0 && deputy < count && deputy !== owner, `deputy ${deputy} of ${r.name} (owner ${owner} of ${count})`);
        sizes[owner]! += 1;
      }
      const even = 4000 / count;
      for (const size of sizes) assert.ok(Math.abs(size - even) < even * 0.2, `share sizes ${sizes.join(', ')} for ${count} consumers`);
    }
    assert.equal(shareOf('i-3fa9c2d1-0000000007', 1), 0);
    assert.equal(deputyOf('i-3fa9c2d1-0000000007', 1), 0);
  });
});

describe('Stride.pick', () => {
  test('alone, without a place, or one consumer: everything in order, at most `limit`, never a stride', () => {
    const listing = items(...range(0, 10));
    for (const place of [undefined, { index: 0, count: 1 }]) {
      const s = striding();
      const c = s.pick(B, listing, place, 4);
      assert.deepEqual(seqs(c.refs), [0, 1, 2, 3]);
      assert.equal(c.strided, false);
      assert.equal(c.others, false);
    }
  });

  test('several consumers, none seen at work yet: everything in order (a lone consumer among dead or idle ones stays FIFO)', () => {
    const s = new Stride();
    const listing = items(...range(0, 12));
    for (let round = 0; round < 6; round++) {
      const c = s.pick(B, listing.slice(round), { index: 1, count: 3 }, 256);
      assert.equal(c.strided, false, `round ${round}`);
      assert.deepEqual(seqs(c.refs), range(round, 12));
      s.took(); // only our own takes: the head item each round
    }
  });

  test('two consumers at work given the same listing take disjoint shares that cover it', () => {
    const listing = items(...range(0, 40));
    const picks = [0, 1].map((index) => striding().pick(B, listing, { index, count: 2 }, 256));
    assert.ok(picks.every((c) => c.strided));
    const [a, b] = picks.map((c) => seqs(c.refs)) as [number[], number[]];
    assert.ok(a.length > 0 && b.length > 0);
    assert.deepEqual(a.filter((x) => b.includes(x)), [], 'disjoint');
    assert.deepEqual([...a, ...b].sort((x, y) => x - y), range(0, 40), 'together: the whole listing');
    assert.deepEqual(a, [...a].sort((x, y) => x - y), 'each in order');
  });

  test('items gone that we did not take are another consumer at work; our own takes and new items are not', () => {
    const place: Place = { index: 0, count: 2 };
    const quiet = new Stride();
    quiet.pick(B, items(...range(0, 10)), place, 256);
    quiet.took();
    quiet.took();
    // 0 and 1 (ours) gone, 10 and 11 put since.
    assert.equal(quiet.pick(B, items(...range(2, 12)), place, 256).strided, false);

    const busy = new Stride();
    busy.pick(B, items(...range(0, 10)), place, 256);
    busy.took();
    // Three gone, one of them ours.
    assert.equal(busy.pick(B, items(...range(3, 12)), place, 256).strided, true);
  });

  test(`a consumer strides for ${ACTIVE_ROUNDS} rounds after it last saw another at work, then takes everything in order again`, () => {
    const s = striding();
    const listing = items(...range(0, 20));
    const place: Place = { index: 0, count: 2 };
    const strided = Array.from({ length: ACTIVE_ROUNDS + 2 }, () => s.pick(B, listing, place, 256).strided);
    assert.deepEqual(strided, [...new Array<boolean>(ACTIVE_ROUNDS).fill(true), false, false]);
  });

  test(`an item its owner leaves goes to its deputy after ${DEPUTY_ROUNDS} of the deputy's rounds, and to anyone after ${ANYONE_ROUNDS}`, () => {
    const count = 3;
    // x: owner 1; consumer 0 is not its deputy, consumer d is.
    const [x] = ofShare(1, count, 1, 0, 0) as [number];
    const d = deputyOf(items(x)[0]!.name, count);
    const rounds = (index: number): number | undefined => {
      const s = striding();
      const mine = ofShare(index, count, 3, x + 1);
      for (let round = 1; round <= ANYONE_ROUNDS + 1; round++) {
        s.collided(); // the others stay at work
        const c = s.pick(B, items(x, ...mine), { index, count }, 256);
        if (seqs(c.refs).includes(x)) return round;
      }
      return undefined;
    };
    assert.equal(rounds(d), DEPUTY_ROUNDS + 1, 'the deputy takes it in the round after it outlived two');
    assert.equal(rounds(0), ANYONE_ROUNDS + 1, 'anyone takes it in the round after it outlived four');
    assert.equal(rounds(1), 1, 'its owner at once');
  });

  test('a listing with only others\' items: nothing to try, look again; all of it ages (taken as deputy later)', () => {
    const count = 2;
    const theirs = ofShare(1, count, 5);
    const s = striding();
    const first = s.pick(B, items(...theirs), { index: 0, count }, 256);
    assert.deepEqual(first, { refs: [], others: true, strided: true });
    s.collided();
    assert.equal(s.pick(B, items(...theirs), { index: 0, count }, 256).others, true);
    s.collided();
    // Outlived two rounds: consumer 0 is the deputy of everything of a 2-consumer queue.
    assert.deepEqual(seqs(s.pick(B, items(...theirs), { index: 0, count }, 256).refs), theirs);
  });

  test('a new bucket starts the rounds again; what a stride keeps is bounded by `limit`', () => {
    const count = 2;
    const s = striding();
    const theirs = ofShare(1, count, 3);
    s.pick(B, items(...theirs), { index: 0, count }, 256);
    s.pick(B, items(...theirs), { index: 0, count }, 256);
    const other = s.pick('p-500/b-0000000001', items(...theirs), { index: 0, count }, 256);
    assert.deepEqual(other.refs, [], 'nothing outlived a round in this bucket yet');
    const many = striding().pick(B, items(...range(0, 30_000)), { index: 1, count }, 256);
    assert.equal(many.refs.length, 256);
  });
});

describe('Pace', () => {
  const half = (): number => 0; // the jitter's low end: half of the step
  const full = (): number => 1;

  test('no pause at first; a listing with too little for us doubles it, up to the cap; a backlog shrinks it; alone: none', () => {
    const p = new Pace();
    assert.equal(p.delayMs(full), 0);
    const steps: number[] = [];
    for (let i = 0; i < 8; i++) {
      p.found(1);
      steps.push(p.delayMs(full));
    }
    assert.deepEqual(steps, [1, 2, 4, 8, 16, 16, 16, 16]);
    assert.equal(p.delayMs(half), PACE.maxDelayMs / 2, 'jittered between half and all');
    p.found(2);
    assert.equal(p.delayMs(full), 16, 'two of ours: as it is');
    p.found(5);
    p.found(5);
    assert.equal(p.delayMs(full), 4, 'a backlog: shorter');
    for (let i = 0; i < 5; i++) p.found(9);
    assert.equal(p.delayMs(full), 0);
    p.found(0);
    p.reset();
    assert.equal(p.delayMs(full), 0);
  });
});
