/**
 * The multilock workload: each member lock path is a mutex of its own, and every acquisition
 * ends.
 *
 * @module
 */
import type { ChaosEvent, ChaosHistory, WaitEvent, WorkloadSpec } from '../history.js';
import { memberRegister } from '../plan.js';
import { ms, runSeconds } from '../format.js';
import { beliefIntervals, excusedCuts, type BeliefInterval } from './beliefs.js';
import { checkExclusion } from './exclusion.js';
import { checkResource } from './resource.js';
import { checkTokens } from './tokens.js';
import type { Violation } from './types.js';

/** What {@link checkMultiLock} found, with its counts for the summary. */
export interface MultiLockCheck {
  /** Violations: per member path exclusion, tokens and resource; `deadlock` for waits that did not end in time; `harness` for a grant naming a path not among the members. */
  violations: Violation[];
  /** Overlaps excused (forced expiry of a SUSPENDED holder, a paused holder), per member path. */
  excused: Violation[];
  /** The multi-lock grants believed (not lost at grant). */
  grants: number;
  /** Of those, ended by a loss. */
  lost: number;
  /** The member intervals of every path, with the cuts that excuse some (for the loss margin). */
  members: { list: BeliefInterval[]; cuts: Map<BeliefInterval, unknown> }[];
}

const key = (e: { client: string; attempt: string }): string => `${e.client}\u0000${e.attempt}`;

/**
 * The history as member lock `path` alone saw it: each grant of `spec` that holds it, with that
 * member's token; every other event of the workload's grants left out; the resource's records
 * of that member's register only. Ends are kept (they end the grants they share an attempt with).
 */
export function memberHistory(history: ChaosHistory, spec: WorkloadSpec, path: string): ChaosHistory {
  const register = memberRegister(spec, path);
  const events: ChaosEvent[] = [];
  for (const e of history.events) {
    if (e.type === 'grant') {
      if (e.workload !== spec.name) continue;
      const m = e.members?.find((x) => x.path === path);
      if (m) events.push({ ...e, token: m.token });
    } else if (e.type === 'resource') {
      if (e.register === register) events.push(e);
    } else events.push(e);
  }
  return { ...history, events };
}

/** The member paths of `spec`: those it declares and any a grant names. */
function memberPaths(history: ChaosHistory, spec: WorkloadSpec): string[] {
  const paths = new Set(spec.members ?? []);
  for (const e of history.events) if (e.type === 'grant' && e.workload === spec.name) for (const m of e.members ?? []) paths.add(m.path);
  return [...paths].sort();
}

/**
 * How late past its timeout an acquisition may end: the session timeout T twice (a partition
 * lasts up to 2.2 T; members taken are released before the call rejects) plus 5 s.
 */
export function deadlockGraceMs(history: ChaosHistory): number {
  return 2 * history.meta.sessionTimeoutMs + 5000;
}

/**
 * Checks a multilock workload:
 * - **per member path**, as a mutex of its own (see {@link memberHistory}): no two holders at
 *   once while each believed it held (the `exclusion` check, with its excuses), tokens unique
 *   and increasing between holders in turn (`tokens`), and the path's fenced register never
 *   accepting a stale or ungranted token (`resource`);
 * - **no deadlock** (`deadlock`): every acquisition ended (granted, or failed: timed out,
 *   aborted by the stop, an error) before the history's end, and within its timeout plus
 *   {@link deadlockGraceMs}, time its client was frozen (a `pause` fault) not counted.
 */
export function checkMultiLock(history: ChaosHistory, spec: WorkloadSpec, slackMs: number): MultiLockCheck {
  const violations: Violation[] = [];
  const excused: Violation[] = [];
  const members: MultiLockCheck['members'] = [];
  const declared = new Set(spec.members ?? []);
  for (const e of history.events) {
    const strange = e.type === 'grant' && e.workload === spec.name ? (e.members ?? []).filter((m) => !declared.has(m.path)) : [];
    if (e.type === 'grant' && strange.length > 0) {
      violations.push({ check: 'harness', workload: spec.name, t: e.t, message: `${e.client}'s grant ${e.attempt} names member ${strange.map((m) => m.path).join(', ')}, not one of the workload's member lock paths (recorded wrong: the checks of those paths prove nothing)`, events: [e] });
    }
  }
  for (const path of memberPaths(history, spec)) {
    const sub = memberHistory(history, spec, path);
    const member: WorkloadSpec = { name: spec.name, kind: 'mutex', path, maxLeases: 1, register: memberRegister(spec, path) };
    const list = beliefIntervals(sub).get(spec.name) ?? [];
    members.push({ list, cuts: excusedCuts(sub, list) });
    const tag = (v: Violation): Violation => ({ ...v, message: `member lock ${path}: ${v.message}` });
    const exclusion = checkExclusion(sub, member, list, slackMs);
    violations.push(...[...exclusion.violations, ...checkTokens(member, list, slackMs), ...checkResource(sub, member)].map(tag));
    excused.push(...exclusion.excused.map(tag));
  }
  violations.push(...checkWaitsEnd(history, spec));
  const all = beliefIntervals(history).get(spec.name) ?? [];
  return { violations, excused, grants: all.length, lost: all.filter((i) => i.ended?.why === 'lost').length, members };
}

/** The pause faults of each client: when its process was frozen. */
function pauses(history: ChaosHistory): Map<string, { start: number; end: number }[]> {
  const open = new Map<number, { target: string; start: number }>();
  const out = new Map<string, { start: number; end: number }[]>();
  const add = (target: string, start: number, end: number): void => void out.set(target, [...(out.get(target) ?? []), { start, end }]);
  for (const e of history.events) {
    if (e.type !== 'fault' || e.fault !== 'pause') continue;
    const started = open.get(e.id);
    if (e.phase === 'start') open.set(e.id, { target: e.target, start: e.t });
    else if (started) {
      add(started.target, started.start, e.t);
      open.delete(e.id);
    }
  }
  for (const o of open.values()) add(o.target, o.start, Infinity);
  return out;
}

/** The `deadlock` check: every wait of `spec` ends, in time (time its client was frozen by a pause fault not counted). */
export function checkWaitsEnd(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  const waits = new Map<string, WaitEvent>();
  const ended = new Map<string, ChaosEvent>();
  let last = history.meta.endedAt;
  for (const e of history.events) {
    if (e.t > last) last = e.t;
    if (!('workload' in e) || e.workload !== spec.name) continue;
    if (e.type === 'wait') waits.set(key(e), e);
    else if ((e.type === 'grant' || e.type === 'wait-fail') && !ended.has(key(e))) ended.set(key(e), e);
  }
  const grace = deadlockGraceMs(history);
  const frozen = pauses(history);
  const violations: Violation[] = [];
  for (const [k, w] of waits) {
    const what = `${w.client}'s acquisition ${w.attempt} of ${(w.members ?? [w.workload]).join(', ')}`;
    const end = ended.get(k);
    if (end === undefined) {
      violations.push({ check: 'deadlock', workload: spec.name, t: w.t, message: `${what}, begun ${runSeconds(w.t, history.meta.startedAt)} into the run, never ended: no grant, timeout or failure by the end of the run (${ms(last - w.t)} later)`, events: [w] });
    } else if (w.timeoutMs !== undefined) {
      // Time the client was frozen does not count: no timer of its runs then.
      const paused = (frozen.get(w.client) ?? []).reduce((n, p) => n + Math.max(0, Math.min(p.end, end.t) - Math.max(p.start, w.t)), 0);
      if (end.t - w.t - paused > w.timeoutMs + grace) {
        violations.push({ check: 'deadlock', workload: spec.name, t: w.t, message: `${what} took ${ms(end.t - w.t)} to end${paused > 0 ? ` (${ms(paused)} of it frozen)` : ''}, past its timeout of ${ms(w.timeoutMs)} by more than ${ms(grace)}`, events: [w, end] });
      }
    }
  }
  return violations;
}
