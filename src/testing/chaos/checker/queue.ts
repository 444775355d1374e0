/**
 * The queue's delivery promises (docs/recipes/queue.md): exactly-once puts, at-most-once takes,
 * at-least-once consumers.
 *
 * @module
 */
import type { ChaosEvent, ChaosHistory, WorkloadSpec } from '../history.js';
import type { Violation } from './types.js';

/** Counts per item. */
interface Ledger {
  invoked: Map<string, ChaosEvent>;
  acked: Map<string, ChaosEvent>;
}

function ledger(history: ChaosHistory, workload: string): Ledger {
  const invoked = new Map<string, ChaosEvent>();
  const acked = new Map<string, ChaosEvent>();
  for (const e of history.events) {
    if (e.type !== 'put' || e.workload !== workload) continue;
    if (e.phase === 'invoke') invoked.set(e.item, e);
    if (e.phase === 'ok') acked.set(e.item, e);
  }
  return { invoked, acked };
}

/** Items of `list` that occur more than once. */
function repeated(list: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const x of list) (seen.has(x) ? twice : seen).add(x);
  return [...twice];
}

/**
 * At-most-once (`take`): no item is returned twice, or returned and still queued; nothing
 * returned or queued was never put; no put left two items; and every acknowledged put is
 * returned or still queued, except at most one per failed take and one per dropped connection
 * of a taker (a take whose delete was applied but whose reply was lost does not return the item,
 * and `take()` goes on to the next one without telling its caller: an allowed loss, never a
 * duplicate); and the
 * queue is drained at the end (takers ran while producers had stopped).
 */
export function checkAtMostOnce(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  const v: Violation[] = [];
  const { invoked, acked } = ledger(history, spec.name);
  const takes = history.events.filter((e) => e.type === 'take' && e.workload === spec.name);
  const taken = takes.flatMap((e) => (e.type === 'take' && e.phase === 'ok' && e.item !== undefined ? [e.item] : []));
  const failed = takes.filter((e) => e.type === 'take' && e.phase === 'fail').length;
  const takers = new Set(history.meta.clients.filter((c) => c.workload === spec.name).map((c) => c.name));
  const drops = history.events.filter((e) => e.type === 'session' && e.state === 'SUSPENDED' && takers.has(e.client)).length;
  const remaining = history.final?.queueItems[spec.name] ?? [];
  const of = (item: string): ChaosEvent[] => history.events.filter((e) => (e.type === 'take' || e.type === 'put') && e.workload === spec.name && 'item' in e && e.item === item);
  for (const item of repeated(taken)) {
    const by = takes.flatMap((e) => (e.type === 'take' && e.item === item ? [e.client] : []));
    v.push({ check: 'queue', workload: spec.name, message: `payload ${item} was returned by take() twice (to ${by.join(' and ')}): one put made two items, or one item was handed out twice`, events: of(item) });
  }
  for (const item of repeated(remaining)) v.push({ check: 'queue', workload: spec.name, message: `item ${item} is in the queue twice: one put made two items`, events: of(item) });
  const takenSet = new Set(taken);
  const remainingSet = new Set(remaining);
  for (const item of remainingSet) if (takenSet.has(item)) v.push({ check: 'queue', workload: spec.name, message: `item ${item} was taken and is still in the queue: one put made two items`, events: of(item) });
  for (const item of new Set([...taken, ...remaining])) if (!invoked.has(item)) v.push({ check: 'queue', workload: spec.name, message: `item ${item} was never put`, events: of(item) });
  if (history.final) {
    const lost = [...acked.keys()].filter((item) => !takenSet.has(item) && !remainingSet.has(item));
    if (lost.length > failed + drops) {
      v.push({
        check: 'queue',
        workload: spec.name,
        message: `${lost.length} acknowledged puts are neither taken nor queued, but only ${failed} takes failed and the takers' connections dropped ${drops} times (each may lose one item): ${lost.slice(0, 5).join(', ')}${lost.length > 5 ? ', ...' : ''}`,
        events: lost.slice(0, 3).flatMap(of),
      });
    }
    if (remaining.length > 0) {
      v.push({ check: 'queue', workload: spec.name, message: `${remaining.length} items are still queued after the drain (consumers were taking): ${remaining.slice(0, 5).join(', ')}${remaining.length > 5 ? ', ...' : ''}`, events: remaining.slice(0, 3).flatMap(of) });
    }
  }
  return v;
}

/**
 * At-least-once (`consume`): every acknowledged put was handled by a handler that resolved;
 * nothing delivered was never put; one put is one item node (never delivered from two paths);
 * and the queue is drained at the end.
 */
export function checkAtLeastOnce(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  const v: Violation[] = [];
  const { invoked, acked } = ledger(history, spec.name);
  const handled = new Set<string>();
  const paths = new Map<string, Set<string>>();
  const of = (item: string): ChaosEvent[] => history.events.filter((e) => (e.type === 'put' || e.type === 'deliver' || e.type === 'handled') && e.workload === spec.name && e.item === item);
  for (const e of history.events) {
    if ((e.type !== 'deliver' && e.type !== 'handled') || e.workload !== spec.name) continue;
    if (e.type === 'handled' && e.outcome === 'resolved') handled.add(e.item);
    if (e.path !== undefined) paths.set(e.item, (paths.get(e.item) ?? new Set()).add(e.path));
  }
  for (const item of new Set([...handled, ...paths.keys()])) if (!invoked.has(item)) v.push({ check: 'queue', workload: spec.name, message: `item ${item} was delivered but never put`, events: of(item) });
  for (const [item, set] of paths) if (set.size > 1) v.push({ check: 'queue', workload: spec.name, message: `item ${item} was delivered from ${set.size} nodes (${[...set].join(', ')}): one put made two items`, events: of(item) });
  if (history.final) {
    const unhandled = [...acked.keys()].filter((item) => !handled.has(item));
    if (unhandled.length > 0) {
      v.push({ check: 'queue', workload: spec.name, message: `${unhandled.length} acknowledged puts were never handled to completion: ${unhandled.slice(0, 5).join(', ')}${unhandled.length > 5 ? ', ...' : ''}`, events: unhandled.slice(0, 3).flatMap(of) });
    }
    const remaining = history.final.queueItems[spec.name] ?? [];
    if (remaining.length > 0) {
      v.push({ check: 'queue', workload: spec.name, message: `${remaining.length} items are still queued after the drain: ${remaining.slice(0, 5).join(', ')}${remaining.length > 5 ? ', ...' : ''}`, events: remaining.slice(0, 3).flatMap(of) });
    }
  }
  return v;
}
