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

/**
 * For intervals ended by a forced expiry: when their client became SUSPENDED for good before
 * being told LOST. A forced expiry (the session closed by a third party with its credentials,
 * as {@link expireSessionByTicket} does) ends a session before its timeout, which no loss clock
 * can foresee; what a holder can be promised then is to be SUSPENDED (told its lock may be lost)
 * before anyone else is granted, and LOST as soon as it hears. Returns, per interval (by
 * client and attempt), the instant it became SUSPENDED, when an expire fault on its client
 * overlaps that suspension and the belief ended `lost`.
 */
export function forcedExpiryCuts(history: ChaosHistory, intervals: readonly BeliefInterval[]): Map<BeliefInterval, number> {
  const sessions = new Map<string, { t: number; state: string }[]>();
  const expiries = new Map<string, { start: number; end: number }[]>();
  const open = new Map<number, { target: string; start: number }>();
  for (const e of history.events) {
    if (e.type === 'session') sessions.set(e.client, [...(sessions.get(e.client) ?? []), { t: e.t, state: e.state }]);
    if (e.type === 'fault' && e.fault === 'expire') {
      if (e.phase === 'start') open.set(e.id, { target: e.target, start: e.t });
      const started = open.get(e.id);
      if (e.phase === 'end' && started) expiries.set(started.target, [...(expiries.get(started.target) ?? []), { start: started.start, end: e.t }]);
    }
  }
  for (const o of open.values()) expiries.set(o.target, [...(expiries.get(o.target) ?? []), { start: o.start, end: Infinity }]);
  const cuts = new Map<BeliefInterval, number>();
  for (const i of intervals) {
    if (i.ended?.why !== 'lost') continue;
    let suspendedAt: number | undefined;
    for (const s of sessions.get(i.client) ?? []) {
      if (s.t > i.end) break;
      if (s.state === 'SUSPENDED') suspendedAt ??= s.t;
      else if (s.state === 'CONNECTED' || s.state === 'RECONNECTED') suspendedAt = undefined;
    }
    if (suspendedAt === undefined || suspendedAt < i.start) continue;
    const from = suspendedAt;
    if ((expiries.get(i.client) ?? []).some((x) => x.start <= i.end && x.end >= from)) cuts.set(i, from);
  }
  return cuts;
}
