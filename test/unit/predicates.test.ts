// Node names and predicates without a server: child listings as plain tables of names
// (Curator-, kazoo- and foreign names), sequence order across the 32-bit wrap, the window
// predicate of mutexes and semaphores, the read/write predicates, and the monotonicity and head
// rule the driver relies on when it grants on a snapshot minus the deletions it was told of.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compareSeq, parseNode, protectedPrefix, sortChildren, type QueueNode, formatSeq } from '../../src/driver/names.js';
import { readPredicate, windowPredicate, writePredicate, type Decision, type Predicate } from '../../src/driver/predicates.js';

const U1 = '0b1f6a52-6f0e-4a43-9d1c-5b0e7f3c2a11';
const U2 = 'f7e6d5c4-b3a2-4190-8877-665544332211';
const U3 = '12345678-9abc-4def-8123-456789abcdef';
const LOCK = ['lock-'];
const RW = ['__READ__', '__WRIT__'];

/** A zero-padded 10-digit sequence, as ZooKeeper formats a non-negative counter. */
const pad = (n: number): string => String(n).padStart(10, '0');
const prot = (uuid: string, kind: string, seq: number | string): string => `_c_${uuid}-${kind}${typeof seq === 'number' ? pad(seq) : seq}`;

/** Queue nodes from `[name, kind]` pairs, already in queue order (sequence = position). */
function queueOf(entries: readonly (readonly [string, string])[]): QueueNode[] {
  return entries.map(([name, kind], i) => ({ name, kind, seq: i, uuid: undefined }));
}
const mutexQueue = (...names: string[]): QueueNode[] => queueOf(names.map((n) => [n, 'lock-'] as const));
const waitOn = (d: Decision): readonly string[] | undefined => (d.hold ? undefined : d.waitOn);

describe('parseNode', () => {
  test('Curator protected names: kind, unsigned sequence and uuid', () => {
    assert.deepEqual(parseNode(prot(U1, 'lock-', 12), LOCK), { name: prot(U1, 'lock-', 12), kind: 'lock-', seq: 12, uuid: U1 });
    assert.deepEqual(parseNode(prot(U2, '__READ__', 7), RW), { name: prot(U2, '__READ__', 7), kind: '__READ__', seq: 7, uuid: U2 });
    assert.deepEqual(parseNode(prot(U2, '__WRIT__', 8), RW), { name: prot(U2, '__WRIT__', 8), kind: '__WRIT__', seq: 8, uuid: U2 });
    assert.deepEqual(parseNode(prot(U3, 'latch-', 0), ['latch-']), { name: prot(U3, 'latch-', 0), kind: 'latch-', seq: 0, uuid: U3 });
    assert.equal(parseNode(prot(U1, 'lock-', 2147483647), LOCK)?.seq, 2147483647);
  });

  test('protectedPrefix: a fresh uuid, or the given one in either case, read back by parseNode', () => {
    const fresh = protectedPrefix();
    assert.equal(parseNode(`${fresh}lock-0000000001`, LOCK)?.uuid, fresh.slice(3, -1));
    assert.notEqual(protectedPrefix(), fresh);
    assert.equal(protectedPrefix(U3.toUpperCase()), `_c_${U3.toUpperCase()}-`);
    assert.equal(parseNode(`${protectedPrefix(U3)}latch-0000000002`, ['latch-'])?.uuid, U3);
  });

  test('unprotected names have no uuid', () => {
    assert.deepEqual(parseNode('lock-0000000003', LOCK), { name: 'lock-0000000003', kind: 'lock-', seq: 3, uuid: undefined });
    assert.deepEqual(parseNode('__WRIT__0000000010', RW), { name: '__WRIT__0000000010', kind: '__WRIT__', seq: 10, uuid: undefined });
    assert.deepEqual(parseNode('latch-0000000001', ['latch-']), { name: 'latch-0000000001', kind: 'latch-', seq: 1, uuid: undefined });
  });

  test('the negative sequence after the 32-bit wrap is read as unsigned', () => {
    assert.deepEqual(parseNode(prot(U1, 'lock-', '-2147483648'), LOCK), { name: prot(U1, 'lock-', '-2147483648'), kind: 'lock-', seq: 2147483648, uuid: U1 });
    assert.equal(parseNode(prot(U1, 'lock-', '-2147483647'), LOCK)?.seq, 2147483649);
    assert.equal(parseNode('lock--2147483646', LOCK)?.seq, 2147483650);
    assert.equal(parseNode('__WRIT__-2147483648', RW)?.seq, 2147483648);
    // %010d counts the sign in the width: -1 is "-000000001" (9 digits).
    assert.equal(parseNode('lock--000000001', LOCK)?.seq, 4294967295);
    assert.equal(parseNode('lock--000000002', LOCK)?.seq, 4294967294);
    assert.deepEqual(
      sortChildren(['lock--000000001', 'lock-0000000000', 'lock--000000002'], LOCK).map((n) => n.name),
      ['lock--000000002', 'lock--000000001', 'lock-0000000000'],
    );
  });

  test('formatSeq writes what ZooKeeper writes (%010d of the signed value) and parseNode reads it back', () => {
    assert.equal(formatSeq(7), '0000000007');
    assert.equal(formatSeq(2147483647), '2147483647');
    assert.equal(formatSeq(2147483648), '-2147483648');
    assert.equal(formatSeq(4294967295), '-000000001');
    for (const seq of [0, 1, 2147483647, 2147483648, 3000000000, 4294967295]) assert.equal(parseNode(`lock-${formatSeq(seq)}`, LOCK)?.seq, seq);
  });

  const foreign: readonly (readonly [string, readonly string[]])[] = [
    ['0f3c9a7be2d14c4f8a5b6c7d8e9f00e2__lock__0000000004', LOCK], // kazoo Lock
    ['0f3c9a7be2d14c4f8a5b6c7d8e9f00e2__rlock__0000000005', RW], // kazoo ReadLock
    ['lock-abc', LOCK],
    ['lock-', LOCK],
    ['leases', LOCK],
    ['lock', LOCK],
    ['lock-000000003', LOCK], // too few digits
    ['lock-00000000003', LOCK], // too many digits
    ['lock-+000000003', LOCK],
    ['lock-000000000x', LOCK],
    [prot(U1, 'lock-', '12'), LOCK],
    [prot(U1, 'other-', 3), LOCK], // another lock name
    [prot(U1, '__READ__', 3), LOCK],
    [prot(U1, 'lock-', 3), RW],
    [prot(U1, 'latch-', 3), LOCK],
    ['xlock-0000000003', LOCK], // something before the lock name
    [`_c_${U1}lock-0000000003`, LOCK], // protection prefix without its dash
    [`_c_not-a-uuid-lock-0000000003`, LOCK],
    [`${prot(U1, 'lock-', 3)}-extra`, LOCK],
    ['__READ__0000000001', LOCK],
    ['', LOCK],
  ];
  for (const [name, kinds] of foreign) {
    test(`foreign child ${JSON.stringify(name)} (kinds ${kinds.join(',')}) is ignored`, () => {
      assert.equal(parseNode(name, kinds), undefined);
    });
  }

  test('reads every name as the regular expressions of the format do (names mutated one character at a time)', () => {
    // The format as regular expressions: what the parser, written by character codes, must match.
    const PROTECTED = /^_c_([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})-/;
    const SEQUENCE = /^(?:\d{10}|-\d{9,10})$/;
    const reference = (name: string, kinds: readonly string[]): QueueNode | undefined => {
      const uuid = PROTECTED.exec(name)?.[1];
      const rest = uuid === undefined ? name : name.slice(uuid.length + 4);
      for (const kind of kinds) {
        if (!rest.startsWith(kind)) continue;
        const digits = rest.slice(kind.length);
        if (SEQUENCE.test(digits)) return { name, kind, seq: Number(digits) >>> 0, uuid };
      }
      return undefined;
    };
    const bases = [`_c_${U1}-`, prot(U1, 'lock-', 12), prot(U3.toUpperCase(), '__WRIT__', '-2147483648'), prot(U2, '__READ__', '-000000001'), 'lock-0000000003', '__READ__-123456789', prot(U1, '_c_', 7), '_c_0000000001'];
    const kindSets = [LOCK, RW, ['latch-'], ['_c_'], ['lock-', '__READ__']];
    const chars = ['0', '9', 'a', 'f', 'A', 'F', 'g', 'G', 'z', '-', '_', 'c', '/', ' ', '\u00e9', ''];
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let parsed = 0;
    let checked = 0;
    for (const base of bases) {
      const variants = [base, base.slice(1), `${base}0`, base.slice(0, -1)];
      for (let i = 0; i < base.length; i++) for (const c of chars) variants.push(base.slice(0, i) + c + base.slice(i + 1));
      for (let k = 0; k < 200; k++) {
        const i = rand(base.length);
        variants.push(base.slice(0, i) + (chars[rand(chars.length)] as string) + base.slice(i + 1 + rand(2)));
      }
      for (const name of variants) {
        for (const kinds of kindSets) {
          const want = reference(name, kinds);
          assert.deepEqual(parseNode(name, kinds), want, `${JSON.stringify(name)} with kinds ${kinds.join(',')}`);
          checked++;
          if (want) parsed++;
        }
      }
    }
    // Both outcomes are exercised, many times each.
    assert.ok(parsed > 500 && checked - parsed > 5000, `parsed ${parsed} of ${checked}`);
  });
});

describe('compareSeq and sortChildren', () => {
  test('compareSeq: plain order and order across the wrap', () => {
    assert.ok(compareSeq(1, 2) < 0);
    assert.ok(compareSeq(2, 1) > 0);
    assert.equal(compareSeq(5, 5), 0);
    // Serial-number order: right as long as the live nodes span less than 2^31 numbers.
    const orders = [
      [2147483646, 2147483647, 2147483648, 2147483649, 3000000000], // int32 wrap (-2147483648...)
      [4294967294, 4294967295, 0, 1, 100], // uint32 wrap (-2, -1, 0, ...)
    ];
    for (const around of orders) {
      for (let i = 0; i < around.length; i++) {
        for (let j = 0; j < around.length; j++) {
          const a = around[i] as number;
          const b = around[j] as number;
          assert.equal(Math.sign(compareSeq(a, b)), Math.sign(i - j), `compareSeq(${a}, ${b})`);
        }
      }
    }
  });

  test('order is by sequence, not by the whole name: the uuid does not affect it', () => {
    // Sorting by whole name would put U3 (1...) first and U2 (f...) last.
    const children = [prot(U2, 'lock-', 1), prot(U3, 'lock-', 3), prot(U1, 'lock-', 2)];
    assert.deepEqual(
      sortChildren(children, LOCK).map((n) => n.seq),
      [1, 2, 3],
    );
    assert.deepEqual(
      sortChildren(children, LOCK).map((n) => n.uuid),
      [U2, U1, U3],
    );
  });

  test('protected and unprotected names mix; foreign children are dropped', () => {
    const children = ['leases', prot(U1, 'lock-', 7), 'lock-0000000002', '0f3c9a7be2d14c4f8a5b6c7d8e9f00e2__lock__0000000001', prot(U2, 'lock-', 5), 'lock-abc', 'lock-0000000009'];
    assert.deepEqual(
      sortChildren(children, LOCK).map((n) => n.name),
      ['lock-0000000002', prot(U2, 'lock-', 5), prot(U1, 'lock-', 7), 'lock-0000000009'],
    );
  });

  test('wrap-around: 2147483646, 2147483647, -2147483648, -2147483647 in that order', () => {
    const names = [prot(U1, 'lock-', '-2147483647'), prot(U2, 'lock-', 2147483647), prot(U3, 'lock-', '-2147483648'), 'lock-2147483646'];
    assert.deepEqual(
      sortChildren(names, LOCK).map((n) => n.name),
      ['lock-2147483646', prot(U2, 'lock-', 2147483647), prot(U3, 'lock-', '-2147483648'), prot(U1, 'lock-', '-2147483647')],
    );
  });

  test('equal sequences sort in kinds order: the read node of a downgrade before the write node', () => {
    const write = prot(U1, '__WRIT__', 5);
    const read = prot(U1, '__READ__', 5); // same sequence, as a downgrade creates it
    const before = prot(U2, '__READ__', 4);
    const after = prot(U3, '__WRIT__', 6);
    for (const listing of [[write, read, after, before], [after, read, before, write]]) {
      assert.deepEqual(
        sortChildren(listing, RW).map((n) => n.name),
        [before, read, write, after],
      );
    }
  });

  test('short listings (sorted by insertion) and long ones (the built-in sort) agree with one reference order', () => {
    // Sequence numbers across the wrap (a span under 2^31, where the order is total), ties between
    // kinds and between uuids, strangers among them.
    const uuids = [U1, U2, U3];
    const seqs = [-2, -1, 0, 1, 2, 2, 3];
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const reference = (listing: readonly string[]): string[] =>
      listing
        .map((c) => parseNode(c, RW))
        .filter((n): n is QueueNode => n !== undefined)
        .sort((x, y) => compareSeq(x.seq, y.seq) || RW.indexOf(x.kind) - RW.indexOf(y.kind) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
        .map((n) => n.name);
    for (let length = 0; length <= 20; length++) {
      for (let round = 0; round < 50; round++) {
        const listing = Array.from({ length }, () =>
          random(8) === 0 ? `other-${random(100)}` : prot(uuids[random(3)] as string, RW[random(2)] as string, formatSeq(seqs[random(seqs.length)] as number)),
        );
        assert.deepEqual(sortChildren(listing, RW).map((n) => n.name), reference(listing), `a listing of ${length}: ${listing.join(' ')}`);
      }
    }
  });

  test('the result does not depend on the listing order', () => {
    const names = [prot(U1, 'lock-', 4), 'lock-0000000001', prot(U2, 'lock-', 3), prot(U3, 'lock-', 2), 'leases'];
    const expected = sortChildren(names, LOCK).map((n) => n.name);
    for (const perm of permutations(names)) {
      assert.deepEqual(
        sortChildren(perm, LOCK).map((n) => n.name),
        expected,
      );
    }
  });
});

describe('windowPredicate', () => {
  // queue (names in order), our index, count, max -> expected waitOn (undefined = hold)
  const table: readonly (readonly [string, readonly string[], number, number, number, readonly string[] | undefined])[] = [
    ['mutex: the head holds', ['A', 'B'], 0, 1, 1, undefined],
    ['mutex: alone holds', ['A'], 0, 1, 1, undefined],
    ['mutex: the second waits on the first', ['A', 'B'], 1, 1, 1, ['A']],
    ['mutex: waits on its predecessor only', ['A', 'B', 'C', 'D'], 3, 1, 1, ['C']],
    ['semaphore 3: first three hold (0)', ['A', 'B', 'C', 'D', 'E'], 0, 1, 3, undefined],
    ['semaphore 3: first three hold (2)', ['A', 'B', 'C', 'D', 'E'], 2, 1, 3, undefined],
    ['semaphore 3: D waits on exactly A, B, C', ['A', 'B', 'C', 'D', 'E'], 3, 1, 3, ['A', 'B', 'C']],
    ['semaphore 3: E waits on B, C, D', ['A', 'B', 'C', 'D', 'E'], 4, 1, 3, ['B', 'C', 'D']],
    ['semaphore 3, count 2: holds at index 0', ['X1', 'X2', 'C'], 0, 2, 3, undefined],
    ['semaphore 3, count 2: holds at index 1 (1 + 2 leases)', ['A', 'X1', 'X2'], 1, 2, 3, undefined],
    ['semaphore 3, count 2: window of 2 nodes', ['A', 'B', 'X1', 'X2'], 2, 2, 3, ['A', 'B']],
    ['semaphore 3, count 2: window of 2 nodes, deeper', ['A', 'B', 'C', 'D', 'X1', 'X2'], 4, 2, 3, ['C', 'D']],
    ['semaphore 3, count 3: must be first', ['A', 'X1', 'X2', 'X3'], 1, 3, 3, ['A']],
    ['semaphore 3, count 3: first holds', ['X1', 'X2', 'X3', 'D'], 0, 3, 3, undefined],
    ['semaphore 5, count 2: window of 4', ['A', 'B', 'C', 'D', 'E', 'X1', 'X2'], 5, 2, 5, ['B', 'C', 'D', 'E']],
    ['semaphore 5, count 2: holds with 3 before', ['A', 'B', 'C', 'X1', 'X2'], 3, 2, 5, undefined],
  ];
  for (const [label, names, index, count, max, expected] of table) {
    test(label, () => {
      const d = windowPredicate(max)(mutexQueue(...names), index, count);
      assert.deepEqual(waitOn(d), expected);
      assert.equal(d.hold, expected === undefined);
    });
  }

  test('a waiter always waits on exactly maxLeases - count + 1 nodes just before its own', () => {
    for (let max = 1; max <= 5; max++) {
      for (let count = 1; count <= max; count++) {
        for (let n = 1; n <= 9; n++) {
          const names = Array.from({ length: n }, (_, i) => `n${i}`);
          for (let index = 0; index + count <= n; index++) {
            const d = windowPredicate(max)(mutexQueue(...names), index, count);
            const window = max - count + 1;
            if (index < window) assert.equal(d.hold, true, `max ${max} count ${count} index ${index}`);
            else assert.deepEqual(waitOn(d), names.slice(index - window, index), `max ${max} count ${count} index ${index}`);
          }
        }
      }
    }
  });
});

describe('readPredicate and writePredicate', () => {
  const read = readPredicate('__WRIT__');
  const R = (n: string): readonly [string, string] => [n, '__READ__'];
  const W = (n: string): readonly [string, string] => [n, '__WRIT__'];
  const table: readonly (readonly [string, readonly (readonly [string, string])[], number, Predicate, readonly string[] | undefined])[] = [
    ['readers share: the first reader', [R('r1'), R('r2'), R('r3')], 0, read, undefined],
    ['readers share: a reader behind readers holds', [R('r1'), R('r2'), R('r3')], 2, read, undefined],
    ['a reader behind a holding writer waits on it', [W('w1'), R('r1')], 1, read, ['w1']],
    ['a reader behind a waiting writer waits on that writer', [R('r1'), W('w1'), R('r2')], 2, read, ['w1']],
    ['a reader waits on the nearest preceding write node', [W('w1'), R('r1'), W('w2'), R('r2'), R('r3')], 4, read, ['w2']],
    ['a reader after a writer and readers waits on the writer', [W('w1'), R('r1'), R('r2'), R('r3')], 3, read, ['w1']],
    ['a downgrade read node (before its write node) holds', [R('d5'), W('w5'), W('w6')], 0, read, undefined],
    ['a writer first holds', [W('w1'), R('r1')], 0, writePredicate, undefined],
    ['a writer waits on a preceding reader', [R('r1'), R('r2'), W('w1')], 2, writePredicate, ['r2']],
    ['a writer waits on a preceding writer', [W('w1'), W('w2')], 1, writePredicate, ['w1']],
    ['a writer waits on its immediate predecessor whatever its kind', [W('w1'), R('r1'), W('w2'), R('r2'), W('w3')], 4, writePredicate, ['r2']],
    ['a writer behind a downgrade waits on the write node, then the read node', [R('d5'), W('w5'), W('w6')], 2, writePredicate, ['w5']],
    ['a writer behind a downgrade whose write node is released waits on the read node', [R('d5'), W('w6')], 1, writePredicate, ['d5']],
  ];
  for (const [label, entries, index, predicate, expected] of table) {
    test(label, () => {
      assert.deepEqual(waitOn(predicate(queueOf(entries), index, 1)), expected);
    });
  }
});

describe('monotonicity (checked exhaustively for small queues)', () => {
  // The driver re-evaluates a predicate on its last snapshot minus the deletions it was told of.
  // Nodes only ever leave the part of the queue ahead of ours, so it must hold that:
  // (1) a predicate that holds keeps holding when any nodes before ours are removed;
  // (2) a waiter's nodes to wait on are all before ours, non-empty, and while every one of them
  //     exists, removing any other nodes before ours never makes it hold (no missed wakeup);
  // (3) a waiter holds once a node it waits on is gone with everything ahead of it (the head
  //     rule: the driver grants on the deletion of a node this process knew was the head).
  const cases: readonly (readonly [string, Predicate, readonly string[], number])[] = [
    ['mutex', windowPredicate(1), ['lock-'], 1],
    ['semaphore 2', windowPredicate(2), ['lock-'], 2],
    ['semaphore 3', windowPredicate(3), ['lock-'], 3],
    ['semaphore 4', windowPredicate(4), ['lock-'], 4],
    ['read lock', readPredicate('__WRIT__'), RW, 1],
    ['write lock', writePredicate, RW, 1],
  ];
  for (const [label, predicate, kinds, maxCount] of cases) {
    test(label, () => {
      let checked = 0;
      for (let before = 0; before <= 7; before++) {
        for (let count = 1; count <= maxCount; count++) {
          // Every assignment of kinds to the nodes before ours (one kind for window predicates).
          for (const prefixKinds of assignments(kinds, before)) {
            const ourKind = kinds.length === 1 ? 'lock-' : label === 'read lock' ? '__READ__' : '__WRIT__';
            const entries = [
              ...prefixKinds.map((k, i) => [`p${i}`, k] as const),
              ...Array.from({ length: count }, (_, i) => [`our${i}`, ourKind] as const),
              ['tail', kinds[kinds.length - 1] as string] as const,
            ];
            const full = queueOf(entries);
            const d = predicate(full, before, count);
            if (!d.hold) {
              assert.ok(d.waitOn.length > 0, `${label}: waits on nothing`);
              for (const name of d.waitOn) assert.ok(full.findIndex((n) => n.name === name) < before, `${label}: waits on ${name}, not before ours`);
            }
            // Every subset of the nodes before ours.
            for (let mask = 0; mask < 1 << before; mask++) {
              const kept = full.filter((_, i) => i >= before || (mask & (1 << i)) !== 0);
              const index = kept.findIndex((n) => n.name === 'our0');
              const d2 = predicate(kept, index, count);
              const what = `${label}: ${full.map((n) => n.kind[2] ?? n.kind).join('')} count ${count}, kept mask ${mask.toString(2)}`;
              if (d.hold) assert.equal(d2.hold, true, `${what}: held, then no longer after removals`);
              else if (d.waitOn.every((name) => kept.some((n) => n.name === name))) assert.equal(d2.hold, false, `${what}: granted while the watched nodes still exist`);
              else if (d.holdsAfter !== undefined && d.waitOn.filter((name) => !kept.some((n) => n.name === name)).length >= d.holdsAfter) {
                // The driver grants on holdsAfter deletions among the watched nodes, listing nothing.
                assert.equal(d2.hold, true, `${what}: holdsAfter ${d.holdsAfter} of the watched nodes gone, yet not held`);
              }
              if (!d.hold) {
                // The head rule: a watched node gone having been the head (nothing ahead of it
                // left) grants, whatever else between it and ours is still there.
                for (const name of d.waitOn) {
                  const pos = full.findIndex((n) => n.name === name);
                  if ((mask & ((1 << (pos + 1)) - 1)) === 0) assert.equal(d2.hold, true, `${what}: ${name} gone as the head, yet not held`);
                }
              }
              if (!d.hold) {
                // holdsAfter is exact when only watched nodes go: no grant is left to a listing that could be saved.
                const onlyWatched = full.filter((n, i) => i >= before || !d.waitOn.includes(n.name) || (mask & (1 << i)) !== 0);
                const goneCount = full.length - onlyWatched.length;
                const d3 = predicate(onlyWatched, onlyWatched.findIndex((n) => n.name === 'our0'), count);
                if (goneCount > 0) assert.equal(d3.hold, d.holdsAfter !== undefined && goneCount >= d.holdsAfter, `${what}: ${goneCount} watched gone, holdsAfter ${String(d.holdsAfter)}`);
              }
              checked++;
            }
          }
        }
      }
      assert.ok(checked > 250, `checked ${checked} cases`);
    });
  }

  test('random queues (semaphore max 3, count 1-3; read/write mixes of up to 12 nodes)', () => {
    let seed = 0x2f6e2b1;
    const random = (n: number): number => {
      // xorshift32: reproducible without a dependency
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const sem = windowPredicate(3);
    const read = readPredicate('__WRIT__');
    for (let round = 0; round < 2000; round++) {
      const before = random(12);
      const count = 1 + random(3);
      const rw = round % 2 === 0;
      const entries = [
        ...Array.from({ length: before }, (_, i) => [`p${i}`, rw ? (random(2) === 0 ? '__READ__' : '__WRIT__') : 'lock-'] as const),
        ...Array.from({ length: rw ? 1 : count }, (_, i) => [`our${i}`, rw ? (random(2) === 0 ? '__READ__' : '__WRIT__') : 'lock-'] as const),
      ];
      const predicate = !rw ? sem : entries[before]?.[1] === '__READ__' ? read : writePredicate;
      const c = rw ? 1 : count;
      const full = queueOf(entries);
      if (!predicate(full, before, c).hold) continue;
      const kept = full.filter((_, i) => i >= before || random(2) === 0);
      assert.equal(predicate(kept, kept.findIndex((n) => n.name === 'our0'), c).hold, true, `round ${round}`);
    }
  });
});

function* assignments(kinds: readonly string[], n: number): Generator<string[]> {
  if (n === 0) {
    yield [];
    return;
  }
  for (const rest of assignments(kinds, n - 1)) for (const k of kinds) yield [...rest, k];
}

function* permutations<T>(items: readonly T[]): Generator<T[]> {
  if (items.length <= 1) {
    yield [...items];
    return;
  }
  for (let i = 0; i < items.length; i++) {
    const rest = [...items.slice(0, i), ...items.slice(i + 1)];
    for (const p of permutations(rest)) yield [items[i] as T, ...p];
  }
}
