/**
 * The counter kept in ZooKeeper under the lock: it equals the acknowledged increments.
 *
 * @module
 */
import type { ChaosHistory, CounterEvent, WorkloadSpec } from '../history.js';
import type { Violation } from './types.js';

/**
 * Each increment reads the counter and writes read + 1 in a transaction that also checks the
 * writer's lock node (no version: two holders at once would lose an update). So, with mutual
 * exclusion, every applied increment adds exactly one, and:
 * - no two acknowledged increments wrote the same value;
 * - acknowledged <= final <= acknowledged + unknown-outcome (`info`) increments;
 * - the final value is at least the largest acknowledged value.
 */
export function checkCounter(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  if (spec.counterPath === undefined) return [];
  const events = history.events.filter((e): e is CounterEvent => e.type === 'counter' && e.workload === spec.name);
  const acked = events.filter((e) => e.phase === 'ok');
  const unknown = events.filter((e) => e.phase === 'info').length;
  const violations: Violation[] = [];
  const byValue = new Map<number, CounterEvent>();
  for (const e of acked) {
    const seen = byValue.get(e.value);
    if (seen) {
      violations.push({ check: 'counter', workload: spec.name, t: e.t, message: `two acknowledged increments both wrote ${e.value} (${seen.client} and ${e.client}): one update was lost`, events: [seen, e] });
    } else byValue.set(e.value, e);
  }
  const final = history.final?.counters[spec.name];
  if (final === undefined) return violations;
  if (final === null) {
    violations.push({ check: 'counter', workload: spec.name, message: 'the final counter value could not be read', events: [] });
    return violations;
  }
  const max = acked.reduce((m, e) => Math.max(m, e.value), 0);
  if (final < acked.length || final > acked.length + unknown || final < max) {
    violations.push({
      check: 'counter',
      workload: spec.name,
      message: `counter is ${final}, but ${acked.length} increments were acknowledged and ${unknown} had an unknown outcome (expected ${acked.length}..${acked.length + unknown}, and at least the largest acknowledged value ${max})`,
      events: acked.slice(-3),
    });
  }
  return violations;
}
