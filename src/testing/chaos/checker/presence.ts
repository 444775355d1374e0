/**
 * The persistent node's promise: once created, the node is there again within a bound after
 * each time it went (deleted by someone else, gone with its session), except while faults keep
 * its owner from the ensemble.
 *
 * @module
 */
import type { ChaosHistory, FaultEvent, PersistentNodeEvent, WorkloadSpec } from '../history.js';
import type { Violation } from './types.js';

/** Slack beyond the faults, ms: a lost session is noticed and replaced within about two session timeouts after a fault ends. */
export function presenceBoundMs(sessionTimeoutMs: number): number {
  return 2 * sessionTimeoutMs + 3000;
}

/**
 * For each client's node (`<path>/<client>`), from its owner's first `created` until its owner's
 * `closing` (else the run's end), every stretch of probes that did not list it, from the first
 * such probe to the next that did (or to that end), must last at most
 * {@link presenceBoundMs} plus the time faults were under way during the stretch. Probes are
 * the evidence (a `sync` and a listing by any client), not what the owner believes.
 */
export function checkPresence(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  const bound = presenceBoundMs(history.meta.sessionTimeoutMs);
  const mine = history.events.filter((e): e is PersistentNodeEvent => e.type === 'pnode' && e.workload === spec.name);
  const probes = mine.filter((e) => e.op === 'probe' && Array.isArray(e.present)).sort((a, b) => a.t - b.t);
  const faults = faultIntervals(history);
  const owners = new Set(history.meta.clients.filter((c) => c.workload === spec.name).map((c) => c.name));
  for (const e of mine) if (e.op === 'created' || e.op === 'closing') owners.add(e.client);
  const violations: Violation[] = [];
  for (const owner of [...owners].sort()) {
    const name = owner;
    const path = `${spec.path}/${name}`;
    const own = mine.filter((e) => e.client === owner && e.node === path);
    const first = own.find((e) => e.op === 'created');
    if (first === undefined) {
      // Never created: reported only if the owner ran a while without faults keeping it away.
      const end = own.find((e) => e.op === 'closing')?.t ?? history.meta.endedAt;
      const start = history.meta.startedAt;
      if (end - start > bound + overlap(faults, start, end)) {
        violations.push({ check: 'presence', workload: spec.name, t: end, message: `${path} was never created in ${Math.round(end - start)} ms`, events: own.slice(0, 5) });
      }
      continue;
    }
    const closing = own.find((e) => e.op === 'closing' && e.t >= first.t)?.t ?? history.meta.endedAt;
    let absentSince: PersistentNodeEvent | undefined;
    const report = (until: number, last: PersistentNodeEvent | undefined): void => {
      if (absentSince === undefined) return;
      const lasted = until - absentSince.t;
      const excused = overlap(faults, absentSince.t, until);
      if (lasted > bound + excused) {
        violations.push({
          check: 'presence',
          workload: spec.name,
          t: absentSince.t,
          message: `${path} was missing for ${Math.round(lasted)} ms (from the probe by ${absentSince.client}${last ? ` to the probe by ${last.client}` : ' to the end'}), over the ${bound} ms bound plus ${Math.round(excused)} ms of faults`,
          events: [absentSince, ...(last ? [last] : [])],
        });
      }
    };
    for (const p of probes) {
      if (p.t <= first.t || p.t >= closing) continue;
      const present = (p.present as string[]).includes(name);
      if (!present && absentSince === undefined) absentSince = p;
      else if (present && absentSince !== undefined) {
        report(p.t, p);
        absentSince = undefined;
      }
    }
    report(closing, undefined);
  }
  return violations;
}

/** The faults' [start, end] intervals (an unended one lasts to the run's end), merged. */
function faultIntervals(history: ChaosHistory): [number, number][] {
  const starts = new Map<number, number>();
  const list: [number, number][] = [];
  for (const e of history.events) {
    if (e.type !== 'fault') continue;
    const f = e as FaultEvent;
    if (f.phase === 'start') starts.set(f.id, f.t);
    else {
      const s = starts.get(f.id);
      if (s !== undefined) list.push([s, f.t]);
      starts.delete(f.id);
    }
  }
  for (const s of starts.values()) list.push([s, history.meta.endedAt]);
  list.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [s, e] of list) {
    const last = merged[merged.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  return merged;
}

/** How long the merged `intervals` cover [from, to]. */
function overlap(intervals: readonly [number, number][], from: number, to: number): number {
  let sum = 0;
  for (const [s, e] of intervals) sum += Math.max(0, Math.min(e, to) - Math.max(s, from));
  return sum;
}
