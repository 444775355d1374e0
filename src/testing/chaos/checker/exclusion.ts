/**
 * Exclusion: no more holders than the recipe allows while each believes it holds.
 *
 * @module
 */
import type { ChaosHistory, WorkloadSpec } from '../history.js';
import { excerpt, excusedCuts, faultsDuring, type BeliefInterval, type Cut } from './beliefs.js';
import { hexToken, ms, runSeconds } from '../format.js';
import type { Violation } from './types.js';

/** Whether `a` and `b` may hold at once on a read-write lock: two reads, or a write and its own downgrade. */
export function rwCompatible(a: BeliefInterval, b: BeliefInterval): boolean {
  if (a.mode === 'read' && b.mode === 'read') return true;
  const downgrade = (r: BeliefInterval, w: BeliefInterval): boolean => r.mode === 'read' && w.mode === 'write' && r.client === w.client && r.downgradeOf === w.attempt;
  return downgrade(a, b) || downgrade(b, a);
}

/**
 * Finds the instants where more hold than `spec` allows. Every interval is shrunk by half the
 * slack at each end, so only overlaps longer than the slack count. A sweep in start order
 * keeps the intervals still open; each new one is checked against them:
 * a lock or leadership allows one holder, a semaphore `maxLeases` leases, a read-write lock
 * readers together or one writer (with its own downgrade read).
 *
 * A holder whose session was force-expired while it was SUSPENDED, or whose process was paused,
 * counts as holding only up to then (see {@link excusedCuts}); overlaps this forgives are
 * returned as `excused`, so they stay visible.
 */
export function checkExclusion(history: ChaosHistory, spec: WorkloadSpec, intervals: readonly BeliefInterval[], slackMs: number): { violations: Violation[]; excused: Violation[] } {
  const cuts = excusedCuts(history, intervals);
  const strict = sweep(history, spec, intervals, slackMs, new Map());
  if (cuts.size === 0) return { violations: strict, excused: [] };
  const violations = sweep(history, spec, intervals, slackMs, cuts);
  const real = new Set(violations.map((v) => v.message));
  const excused = strict
    .filter((v) => !real.has(v.message))
    .map((v) => {
      const whys = new Set(v.events.flatMap((e) => [...cuts].filter(([i]) => i.grant === e).map(([, c]) => c.why)));
      const because = [
        ...(whys.has('forced-expiry') ? ['an older holder was SUSPENDED (told it may have lost the lock) when its session was force-expired, and LOST once it heard'] : []),
        ...(whys.has('paused') ? ['an older holder was frozen (paused) past its session timeout: only its fencing token protects what it writes'] : []),
      ];
      return { ...v, message: `${v.message}; excused: ${because.join('; ')}` };
    });
  return { violations, excused };
}

/** The sweep, with intervals of force-expired holders ending where `cuts` says. */
function sweep(history: ChaosHistory, spec: WorkloadSpec, intervals: readonly BeliefInterval[], slackMs: number, cuts: ReadonlyMap<BeliefInterval, Cut>): Violation[] {
  const half = slackMs / 2;
  const shrunk = intervals
    .map((i) => ({ i, s: i.start + half, e: (cuts.get(i)?.at ?? i.end) - half }))
    .filter((x) => x.e > x.s)
    .sort((a, b) => a.s - b.s);
  const open: typeof shrunk = [];
  const violations: Violation[] = [];
  for (const next of shrunk) {
    for (let k = open.length - 1; k >= 0; k--) if ((open[k]?.e ?? 0) <= next.s) open.splice(k, 1);
    const others = open.map((o) => o.i);
    let conflicting: BeliefInterval[] = [];
    if (spec.kind === 'rwlock') {
      conflicting = others.filter((o) => !rwCompatible(o, next.i));
    } else {
      const leases = others.reduce((n, o) => n + o.leases, 0) + next.i.leases;
      if (leases > spec.maxLeases) conflicting = others;
    }
    if (conflicting.length > 0) {
      const all = [...conflicting, next.i];
      const overlapEnd = Math.min(...all.map((x) => cuts.get(x)?.at ?? x.end));
      const what = spec.kind === 'rwlock' ? 'conflicting read-write holders' : `${all.reduce((n, x) => n + x.leases, 0)} leases held (at most ${spec.maxLeases} allowed)`;
      violations.push({
        check: 'exclusion',
        workload: spec.name,
        t: next.i.start,
        message: `${what}: ${all.map((x) => `${x.client} ${x.mode} token ${hexToken(x.token)}`).join(', ')} all believed they held for ${ms(overlapEnd - next.i.start)} from ${runSeconds(next.i.start, history.meta.startedAt)} into the run`,
        events: [...excerpt(all), ...faultsDuring(history, next.i.start - 10_000, overlapEnd)].sort((a, b) => a.t - b.t),
      });
    }
    open.push(next);
  }
  return violations;
}
