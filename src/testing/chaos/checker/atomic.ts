/**
 * The atomic number's promise: every acknowledged update applied exactly once, none lost, none
 * doubled, nothing of a failed one applied.
 *
 * @module
 */
import type { AtomicEvent, ChaosHistory, WorkloadSpec } from '../history.js';
import type { Violation } from './types.js';

/**
 * Every update of the workload adds a positive delta to a number that starts at 0, so:
 * - each acknowledged update wrote `pre + delta`, and the ranges `[pre, post)` of two
 *   acknowledged updates never overlap (an overlap is a lost update: both wrote from one value);
 * - the final value is at least the sum of the acknowledged deltas and at most that plus the
 *   deltas of the updates with an unknown outcome (`info`): above it, an update was applied
 *   twice or a `fail` (certainly not applied) was; below it, an acknowledged one was lost;
 * - the final value is at least every acknowledged `post`.
 */
export function checkAtomic(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  const events = history.events.filter((e): e is AtomicEvent => e.type === 'atomic' && e.workload === spec.name);
  const acked = events.filter((e) => e.phase === 'ok');
  const unknown = events.filter((e) => e.phase === 'info');
  const violations: Violation[] = [];
  const ranges: { pre: bigint; post: bigint; e: AtomicEvent }[] = [];
  for (const e of acked) {
    if (e.pre === undefined || e.post === undefined || !(e.delta > 0)) {
      violations.push({ check: 'atomic', workload: spec.name, t: e.t, message: `${e.client}'s acknowledged update ${e.op} carries no values or a non-positive delta`, events: [e] });
      continue;
    }
    const pre = BigInt(e.pre);
    const post = BigInt(e.post);
    if (post !== pre + BigInt(e.delta)) {
      violations.push({ check: 'atomic', workload: spec.name, t: e.t, message: `${e.client}'s update ${e.op} of +${e.delta} found ${pre} and wrote ${post}`, events: [e] });
    }
    ranges.push({ pre, post, e });
  }
  ranges.sort((a, b) => (a.pre < b.pre ? -1 : a.pre > b.pre ? 1 : 0));
  for (let i = 1; i < ranges.length; i++) {
    const prev = ranges[i - 1]!;
    const cur = ranges[i]!;
    if (cur.pre < prev.post) {
      violations.push({
        check: 'atomic',
        workload: spec.name,
        t: Math.max(prev.e.t, cur.e.t),
        message: `two acknowledged updates both claim the value ${cur.pre} (${prev.e.client} ${prev.e.op}: ${prev.pre}->${prev.post}, ${cur.e.client} ${cur.e.op}: ${cur.pre}->${cur.post}): one was lost`,
        events: [prev.e, cur.e],
      });
    }
  }
  if (history.final === undefined) return violations;
  const read = history.final.numbers?.[spec.name];
  if (read === undefined || read === null) {
    violations.push({ check: 'atomic', workload: spec.name, message: 'the final value of the atomic number could not be read', events: [] });
    return violations;
  }
  const final = BigInt(read);
  const low = acked.reduce((sum, e) => sum + BigInt(e.delta), 0n);
  const high = low + unknown.reduce((sum, e) => sum + BigInt(e.delta), 0n);
  const top = ranges.reduce((m, r) => (r.post > m ? r.post : m), 0n);
  if (final < low || final > high) {
    violations.push({
      check: 'atomic',
      workload: spec.name,
      message: `the atomic number is ${final}, but the acknowledged updates add up to ${low} and those of unknown outcome to ${high - low} more (expected ${low}..${high}): ${final < low ? 'an acknowledged update was lost' : 'an update was applied twice, or a failed one was applied'}`,
      events: acked.slice(-3),
    });
  }
  if (final < top) {
    violations.push({ check: 'atomic', workload: spec.name, message: `the atomic number is ${final}, below the value ${top} an acknowledged update wrote`, events: ranges.filter((r) => r.post === top).map((r) => r.e) });
  }
  return violations;
}
