/**
 * Belief intervals: from a client's grant to the moment it stopped believing it held.
 *
 * @module
 */
import type { expireSessionByTicket } from '../expire.js';
import type { ChaosEvent, ChaosHistory, EndEvent, GrantEvent, LockMode } from '../history.js';

/** One belief interval of one client. */
export interface BeliefInterval {
  /** The workload. */
  workload: string;
  /** The client. */
  client: string;
  /** The acquisition. */
  attempt: string;
  /** When the client started believing (its grant). */
  start: number;
  /** When it stopped (release or told lost); the end of the history if it never said. */
  end: number;
  /** Its fencing token. */
  token: bigint;
  /** Leases held. */
  leases: number;
  /** Side or kind. */
  mode: LockMode;
  /** For a downgrade's read: the attempt of its write lock. */
  downgradeOf: string | undefined;
  /** The grant. */
  grant: GrantEvent;
  /** The end, if recorded. */
  ended: EndEvent | undefined;
}

/** The key of an acquisition: client and attempt. */
const key = (e: { client: string; attempt: string }): string => `${e.client}\u0000${e.attempt}`;

/**
 * Every belief interval of the history, by workload, sorted by start. Grants whose signal was
 * already aborted (`lostAtGrant`) are left out: the client never believed it held.
 */
export function beliefIntervals(history: ChaosHistory): Map<string, BeliefInterval[]> {
  const ends = new Map<string, EndEvent>();
  let last = history.meta.endedAt;
  for (const e of history.events) {
    if (e.type === 'end' && !ends.has(key(e))) ends.set(key(e), e);
    if (e.t > last) last = e.t;
  }
  const out = new Map<string, BeliefInterval[]>();
  for (const e of history.events) {
    if (e.type !== 'grant' || e.lostAtGrant) continue;
    const ended = ends.get(key(e));
    const list = out.get(e.workload) ?? [];
    list.push({
      workload: e.workload,
      client: e.client,
      attempt: e.attempt,
      start: e.t,
      end: ended?.t ?? last,
      token: BigInt(e.token),
      leases: e.leases,
      mode: e.mode,
      downgradeOf: e.downgradeOf,
      grant: e,
      ended,
    });
    out.set(e.workload, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.start - b.start);
  return out;
}

/** The grant and end events of some intervals, for a violation's excerpt. */
export function excerpt(intervals: readonly BeliefInterval[]): ChaosEvent[] {
  return intervals.flatMap((i) => (i.ended ? [i.grant, i.ended] : [i.grant])).sort((a, b) => a.t - b.t);
}

/** Fault starts of faults active at some point of [from, to] (context for an excerpt). */
export function faultsDuring(history: ChaosHistory, from: number, to: number): ChaosEvent[] {
  const ends = new Map<number, number>();
  for (const e of history.events) if (e.type === 'fault' && e.phase === 'end') ends.set(e.id, e.t);
  return history.events.filter((e) => e.type === 'fault' && e.phase === 'start' && e.t <= to && (ends.get(e.id) ?? Infinity) >= from);
}

/** Where and why a belief stops counting for exclusion (see {@link excusedCuts}). */
export interface Cut {
  /** The instant the interval stops counting. */
  at: number;
  /** `forced-expiry`: SUSPENDED, then its session was closed by a third party; `paused`: its process was stopped. */
  why: 'forced-expiry' | 'paused';
}

/**
 * The intervals that count for exclusion only up to some instant, because the fault made the
 * promise impossible to keep, and what a holder is promised instead:
 * - **forced expiry**: a session closed by a third party with its credentials (as
 *   {@link expireSessionByTicket} does) ends before its timeout, which no loss clock can
 *   foresee. The holder is promised to be SUSPENDED (told its lock may be lost) before anyone
 *   else is granted, and LOST as soon as it hears: an interval ended `lost` counts up to the
 *   instant its session (the grant's) became SUSPENDED for good, when an expire fault on its
 *   client overlaps that suspension.
 * - **paused** (frozen past the session timeout, like a long GC pause): a frozen process cannot be told anything;
 *   only fencing protects what it writes when it wakes up (the resource and counter checks
 *   still apply). An interval open when its client was paused counts up to the pause.
 */
export function excusedCuts(history: ChaosHistory, intervals: readonly BeliefInterval[]): Map<BeliefInterval, Cut> {
  const sessions = new Map<string, { t: number; state: string }[]>();
  const faults = new Map<string, { fault: string; start: number; end: number }[]>();
  const open = new Map<number, { target: string; fault: string; start: number }>();
  for (const e of history.events) {
    // By client and session: a client with two sessions has a state per session.
    if (e.type === 'session') sessions.set(`${e.client} ${e.sessionId}`, [...(sessions.get(`${e.client} ${e.sessionId}`) ?? []), { t: e.t, state: e.state }]);
    if (e.type === 'fault' && (e.fault === 'expire' || e.fault === 'pause')) {
      if (e.phase === 'start') open.set(e.id, { target: e.target, fault: e.fault, start: e.t });
      const started = open.get(e.id);
      if (e.phase === 'end' && started) {
        faults.set(started.target, [...(faults.get(started.target) ?? []), { fault: started.fault, start: started.start, end: e.t }]);
        open.delete(e.id);
      }
    }
  }
  for (const o of open.values()) faults.set(o.target, [...(faults.get(o.target) ?? []), { fault: o.fault, start: o.start, end: Infinity }]);
  const cuts = new Map<BeliefInterval, Cut>();
  for (const i of intervals) {
    const mine = faults.get(i.client) ?? [];
    const paused = mine.find((f) => f.fault === 'pause' && f.start > i.start && f.start < i.end);
    if (paused) {
      cuts.set(i, { at: paused.start, why: 'paused' });
      continue;
    }
    if (i.ended?.why !== 'lost') continue;
    let suspendedAt: number | undefined;
    for (const s of sessions.get(`${i.client} ${i.grant.sessionId}`) ?? []) {
      if (s.t > i.end) break;
      if (s.state === 'SUSPENDED') suspendedAt ??= s.t;
      else if (s.state === 'CONNECTED' || s.state === 'RECONNECTED') suspendedAt = undefined;
    }
    if (suspendedAt === undefined || suspendedAt < i.start) continue;
    const from = suspendedAt;
    if (mine.some((x) => x.fault === 'expire' && x.start <= i.end && x.end >= from)) cuts.set(i, { at: from, why: 'forced-expiry' });
  }
  return cuts;
}
