/**
 * What the chaos checker reports.
 *
 * @module
 */
import type { ChaosEvent } from '../history.js';
import type { CacheSummary } from './cache.js';

/** The checks of {@link checkHistory}. */
export type CheckName = 'exclusion' | 'tokens' | 'counter' | 'resource' | 'queue' | 'cache' | 'barrier' | 'shared' | 'presence' | 'atomic' | 'group' | 'discovery' | 'deadlock' | 'leftovers' | 'harness';

/** One broken promise, with the events that show it. */
export interface Violation {
  /** The check that found it. */
  check: CheckName;
  /** The workload concerned, if any. */
  workload?: string;
  /** What is wrong, in a sentence. */
  message: string;
  /** When it happened (chaos clock), if it has an instant. */
  t?: number;
  /** The events that show it (a minimal excerpt of the history). */
  events: ChaosEvent[];
}

/** Options of {@link checkHistory}. */
export interface CheckOptions {
  /**
   * Clock slack, ms: two belief intervals conflict only if they overlap by more than this, and
   * order is asserted only between intervals that do not. Default 0: every process of a run
   * stamps its events with the same monotonic clock of one host ({@link chaosNow}), and each
   * event is stamped in the tick its belief changed, so no skew needs forgiving. Raise it for
   * histories gathered across hosts (by their clock error bound).
   */
  slackMs?: number;
  /**
   * The checks to report (default: all). E.g. `['exclusion', 'tokens']` for a history of your
   * own service's locks without a final state (which `leftovers` would report as missing).
   */
  checks?: readonly CheckName[];
}

/** Counts of what a history contains, for the summary line. */
export interface CheckStats {
  /** Grants the clients believed (not lost at grant), per workload. */
  grants: Record<string, number>;
  /** Belief intervals ended by a loss, per workload. */
  lost: Record<string, number>;
  /**
   * For exclusive workloads (mutex, leadership): the smallest gap, ms, between a holder being
   * told it lost and the next grant to another client (null: no loss was followed by a grant),
   * excused losses (forced expiry, freeze) left out. How much slack was left in the closest case.
   */
  lossMarginMs: Record<string, number | null>;
  /** Faults injected. */
  faults: number;
  /** Acknowledged counter increments, per workload. */
  increments: Record<string, number>;
  /** Writes the fenced resource accepted and rejected. */
  resource: {
    /** Writes accepted. */
    accepted: number;
    /** Writes rejected (a stale token). */
    rejected: number;
  };
  /** Acknowledged puts, takes and resolved handlers, per queue workload. */
  queue: Record<
    string,
    {
      /** Acknowledged puts. */
      acked: number;
      /** Items returned by take(). */
      taken: number;
      /** Handlers that resolved. */
      handled: number;
      /** Items left after the drain. */
      remaining: number;
    }
  >;
  /** Per cache workload: the writers' writes and what each cache went through. */
  cache: Record<
    string,
    {
      /** Acknowledged creates, setData and deletes. */
      writes: number;
      /** Writes whose outcome is unknown (reply lost). */
      unknownWrites: number;
      /** Each cache: node events, re-reads, staleness, and its end. */
      caches: CacheSummary[];
    }
  >;
}

/** The result of {@link checkHistory}: every violation found, and counts. */
export interface CheckResult {
  /** Every violation (empty: the history is consistent with every promise checked). */
  violations: Violation[];
  /**
   * Overlaps that are not violations of a promise but are shown: a holder SUSPENDED when its
   * session was force-expired by the nemesis (before its timeout, which no loss clock can
   * foresee), or a holder whose process was paused (it cannot be told; fencing protects).
   */
  excused: Violation[];
  /** Counts. */
  stats: CheckStats;
}
