/**
 * The shared count's promises under faults: compare-and-set increments are neither lost nor
 * doubled, and every client sees the count move forward only, in zxid order.
 *
 * @module
 */
import type { ChaosHistory, SharedCountEvent, SharedSeenEvent, WorkloadSpec } from '../history.js';
import type { Violation } from './types.js';

/**
 * Each increment is `trySet(seen + 1, seen)` at `seen`'s version, from a count seeded at 0, so
 * every applied write adds exactly one to the value it replaced, and:
 * - no two acknowledged increments wrote the same value;
 * - acknowledged <= final <= acknowledged + unknown-outcome (`info`) increments, and the final
 *   count is at least the largest acknowledged value;
 * - each client's `changed` values come in strictly increasing zxid order, and rise with it;
 * - all clients (and acknowledged writes) agree on the value of each zxid, and none saw a value
 *   above the final count.
 */
export function checkSharedCount(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  const calls = history.events.filter((e): e is SharedCountEvent => e.type === 'shared-count' && e.workload === spec.name);
  const seen = history.events.filter((e): e is SharedSeenEvent => e.type === 'shared-seen' && e.workload === spec.name);
  const acked = calls.filter((e) => e.phase === 'ok');
  const unknown = calls.filter((e) => e.phase === 'info').length;
  const violations: Violation[] = [];
  const v = (message: string, events: Violation['events'], t?: number): void => {
    violations.push({ check: 'shared', workload: spec.name, message, events, ...(t !== undefined && { t }) });
  };

  const byValue = new Map<number, SharedCountEvent>();
  for (const e of acked) {
    const first = byValue.get(e.value);
    if (first) v(`two acknowledged increments both wrote ${e.value} (${first.client} ${first.op} and ${e.client} ${e.op}): one compare-and-set was not one`, [first, e], e.t);
    else byValue.set(e.value, e);
  }

  // The value of each zxid, as the first witness reported it.
  const atZxid = new Map<string, SharedSeenEvent | SharedCountEvent>();
  const agree = (zxid: string, value: number, e: SharedSeenEvent | SharedCountEvent): void => {
    const first = atZxid.get(zxid);
    if (!first) atZxid.set(zxid, e);
    else if (first.value !== value) v(`zxid ${zxid} is ${first.value} for ${first.client} but ${value} for ${e.client}`, [first, e], e.t);
  };
  for (const e of acked) if (e.zxid !== undefined) agree(e.zxid, e.value, e);
  const lastOf = new Map<string, SharedSeenEvent>();
  for (const e of seen) {
    agree(e.zxid, e.value, e);
    const last = lastOf.get(e.client);
    if (last && !(BigInt(e.zxid) > BigInt(last.zxid))) v(`${e.client} saw zxid ${e.zxid} (count ${e.value}) after zxid ${last.zxid} (count ${last.value}): not in zxid order`, [last, e], e.t);
    else if (last && !(e.value > last.value)) v(`${e.client} saw the count go from ${last.value} to ${e.value} (zxid ${last.zxid} → ${e.zxid}): a count only rises`, [last, e], e.t);
    lastOf.set(e.client, e);
  }

  const final = history.final?.counters[spec.name];
  if (final === undefined) return violations;
  if (final === null) {
    v('the final shared count could not be read', []);
    return violations;
  }
  const max = acked.reduce((m, e) => Math.max(m, e.value), 0);
  if (final < acked.length || final > acked.length + unknown || final < max) {
    v(`shared count is ${final}, but ${acked.length} increments were acknowledged and ${unknown} had an unknown outcome (expected ${acked.length}..${acked.length + unknown}, and at least the largest acknowledged value ${max})`, acked.slice(-3));
  }
  const above = seen.find((e) => e.value > final);
  if (above) v(`${above.client} saw the count at ${above.value}, above its final value ${final}`, [above], above.t);
  return violations;
}
