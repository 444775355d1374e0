/**
 * The group membership check: after faults heal, every live member's view holds every live
 * member within a bound, and no view holds a member that had left for good past a bound.
 *
 * @module
 */
import type { ChaosEvent, ChaosHistory, GroupOpEvent, GroupViewEvent, WorkloadSpec } from '../history.js';
import type { Violation } from './types.js';

/** A member id's life, from its client's start and close events. */
interface Life {
  readonly member: string;
  started?: GroupOpEvent;
  closing?: GroupOpEvent;
  closed?: GroupOpEvent;
}

/** An interval of time, end exclusive (Infinity: never ended). */
export type Span = readonly [start: number, end: number];

/**
 * Intervals without any fault under way, from the first event on: the complement of every
 * fault's start to end (a fault never healed lasts to the end of time).
 */
export function quietSpans(history: ChaosHistory): Span[] {
  const faults = new Map<number, [number, number]>();
  for (const e of history.events) {
    if (e.type !== 'fault') continue;
    const f = faults.get(e.id) ?? [e.t, Infinity];
    if (e.phase === 'start') f[0] = e.t;
    else f[1] = e.t;
    faults.set(e.id, f);
  }
  const busy = [...faults.values()].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  let from = -Infinity;
  for (const [s, e] of busy) {
    if (s > from) out.push([from, s]);
    from = Math.max(from, e);
  }
  if (from < Infinity) out.push([from, Infinity]);
  return out;
}

/**
 * How long after faults heal the membership views (group members, service caches) must have
 * caught up: two session timeouts and 10 s. The workloads wait it out before their last views.
 */
export function settleBoundMs(sessionTimeoutMs: number): number {
  return 2 * sessionTimeoutMs + 10_000;
}

/**
 * The instant, `boundMs` into the first quiet interval at or after `t`, from which something
 * that ended at `t` must be gone from every view; undefined when no quiet interval lasts that long.
 */
export function goneBy(quiet: readonly Span[], t: number, boundMs: number): number | undefined {
  const span = quiet.find(([, q1]) => q1 > t);
  if (!span) return undefined;
  const c = Math.max(span[0], t) + boundMs;
  return c < span[1] ? c : undefined;
}

/**
 * For a `group` workload (`boundMs` defaults to two session timeouts and 10 s):
 * - **complete**: in each interval without faults, for every pair of members A and B live in it
 *   (started, not yet closing), A's view at the later of the interval's start and both starts,
 *   plus the bound, holds B (if the interval and both lives last that long);
 * - **no ghost**: once a member closed (its node deleted), from the first instant without
 *   faults at or after its close, plus the bound (if that quiet interval lasts that long), no
 *   member's view holds it, then or later.
 */
export function checkGroup(history: ChaosHistory, spec: WorkloadSpec, boundMs = settleBoundMs(history.meta.sessionTimeoutMs)): Violation[] {
  const lives = new Map<string, Life>();
  const views = new Map<string, GroupViewEvent[]>();
  for (const e of history.events) {
    if (e.type === 'group' && e.workload === spec.name && e.phase !== 'fail') {
      const life = lives.get(e.member) ?? { member: e.member };
      lives.set(e.member, life);
      if (e.op === 'start' && e.phase === 'ok') life.started = e;
      else if (e.op === 'close' && e.phase === 'invoke') life.closing = e;
      else if (e.op === 'close' && e.phase === 'ok') life.closed = e;
    } else if (e.type === 'group-view' && e.workload === spec.name) {
      const list = views.get(e.member) ?? [];
      views.set(e.member, list);
      list.push(e);
    }
  }
  for (const list of views.values()) list.sort((a, b) => a.t - b.t);
  const viewAt = (member: string, t: number): GroupViewEvent | undefined => {
    let found: GroupViewEvent | undefined;
    for (const v of views.get(member) ?? []) {
      if (v.t > t) break;
      found = v;
    }
    return found;
  };
  // Seconds from the run's start, as the report's timeline.
  const at = (t: number): string => (Number.isFinite(t) ? `${((t - history.meta.startedAt) / 1000).toFixed(1)} s` : 'the start');
  const quiet = quietSpans(history);
  const started = [...lives.values()].filter((l): l is Life & { started: GroupOpEvent } => l.started !== undefined);
  const until = (l: Life): number => l.closing?.t ?? Infinity;
  const violations: Violation[] = [];

  // Complete: every live member sees every live member a bound into a quiet interval.
  for (const [q0, q1] of quiet) {
    for (const a of started) {
      for (const b of started) {
        if (a === b) continue;
        const c = Math.max(q0, a.started.t, b.started.t) + boundMs;
        if (c >= q1 || c >= until(a) || c >= until(b)) continue;
        const view = viewAt(a.member, c);
        if (view?.members.includes(b.member)) continue;
        violations.push({
          check: 'group',
          workload: spec.name,
          t: c,
          message: `${a.member}'s view lacked ${b.member} ${boundMs} ms into a quiet interval (both live, no fault from ${at(q0)}): it held [${view?.members.join(', ') ?? 'nothing yet'}]`,
          events: [a.started, b.started, ...(view ? [view] : [])] as ChaosEvent[],
        });
      }
    }
  }

  // No ghost: a member that closed is in no view a bound after the first quiet instant after.
  for (const gone of lives.values()) {
    const closed = gone.closed;
    if (!closed) continue;
    const c = goneBy(quiet, closed.t, boundMs);
    if (c === undefined) continue;
    const seen: GroupViewEvent[] = [];
    for (const [member, list] of views) {
      if (member === gone.member) continue;
      const at = viewAt(member, c);
      if (at?.members.includes(gone.member) && (lives.get(member)?.closing?.t ?? Infinity) > c) seen.push(at);
      for (const v of list) if (v.t > c && v.members.includes(gone.member)) seen.push(v);
    }
    for (const v of seen) {
      violations.push({
        check: 'group',
        workload: spec.name,
        t: Math.max(v.t, c),
        message: `${v.member}'s view still held ${gone.member} ${boundMs} ms or more after it closed for good (at ${at(closed.t)}) and the faults healed`,
        events: [closed, v],
      });
    }
  }
  return violations;
}


