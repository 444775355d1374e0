/**
 * The double barrier's promise: nobody leaves the enter phase before `memberCount` entered.
 *
 * @module
 */
import type { BarrierEvent, ChaosHistory, WorkloadSpec } from '../history.js';
import type { Violation } from './types.js';

/**
 * For each round (barrier path), every `enter` that returned (`ok` at time t) must be preceded
 * by at least `memberCount` distinct participants that had invoked `enter` on that round by t
 * (a participant's node is created after its invoke, so fewer invokes means fewer nodes).
 */
export function checkDoubleBarrier(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  const n = spec.memberCount ?? 1;
  const events = history.events.filter((e): e is BarrierEvent => e.type === 'barrier' && e.workload === spec.name && e.op === 'enter');
  const invokes = new Map<string, BarrierEvent[]>();
  for (const e of events) {
    if (e.phase !== 'invoke') continue;
    let list = invokes.get(e.round);
    if (!list) invokes.set(e.round, (list = []));
    list.push(e);
  }
  const violations: Violation[] = [];
  for (const e of events) {
    if (e.phase !== 'ok') continue;
    const before = new Set((invokes.get(e.round) ?? []).filter((i) => i.t <= e.t).map((i) => i.client));
    if (before.size < n) {
      violations.push({
        check: 'barrier',
        workload: spec.name,
        t: e.t,
        message: `${e.client} returned from enter on ${e.round} when only ${before.size} of ${n} participants had entered (${[...before].join(', ')})`,
        events: [e],
      });
    }
  }
  return violations;
}
