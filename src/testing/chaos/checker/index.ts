/**
 * {@link checkHistory}: the offline checker of a chaos history.
 *
 * @module
 */
import type { ChaosHistory } from '../history.js';
import { beliefIntervals, excusedCuts, type BeliefInterval } from './beliefs.js';
import { checkAtomic } from './atomic.js';
import { checkDoubleBarrier } from './barrier.js';
import { checkPresence } from './presence.js';
import { checkCache } from './cache.js';
import { checkCounter } from './counter.js';
import { checkDiscovery } from './discovery.js';
import { checkGroup } from './group.js';
import { checkExclusion } from './exclusion.js';
import { checkLeftovers } from './leftovers.js';
import { checkMultiLock } from './multilock.js';
import { checkAtLeastOnce, checkAtMostOnce } from './queue.js';
import { checkResource } from './resource.js';
import { checkSharedCount } from './shared.js';
import { checkTokens } from './tokens.js';
import type { CheckName, CheckOptions, CheckResult, CheckStats, Violation } from './types.js';
import { checkNumber, checkObject, describe, need, optionKeys } from '../validate.js';

/** The keys of {@link CheckOptions}. @internal */
export const CHECK_OPTION_KEYS = optionKeys<CheckOptions>({ slackMs: true, checks: true });

const CHECKS: readonly CheckName[] = ['exclusion', 'tokens', 'counter', 'resource', 'queue', 'cache', 'barrier', 'shared', 'presence', 'atomic', 'group', 'discovery', 'deadlock', 'leftovers', 'harness'];

const LOCK_KINDS = new Set(['mutex', 'semaphore', 'rwlock', 'latch', 'selector', 'zkr']);

/**
 * Checks a chaos history against every promise the recipes make, trusting nothing the clients
 * concluded: only what each recorded it believed and did, what the fenced resource decided,
 * what ZooKeeper held at the end, and what the servers reported.
 *
 * - **exclusion**: never more holders than allowed while each believes it holds;
 * - **tokens**: unique, and increasing in grant order between holders that exclude each other;
 * - **counter**: the counter in ZooKeeper equals the acknowledged increments;
 * - **resource**: the fenced resource never accepted a stale or foreign token;
 * - **queue**: at-most-once and at-least-once as the queue guide promises, exactly-once puts;
 * - **cache**: per node, cache events in zxid order without duplicates; no state the writers
 *   never produced; every cache SYNCED at the end and equal to a fresh read of the server;
 * - **barrier**: no double-barrier participant returned from `enter` before `memberCount`
 *   participants had started entering its round;
 * - **shared**: a shared count ends at its acknowledged compare-and-set increments (plus at
 *   most the unknown outcomes), no two acknowledged increments wrote one value, and each
 *   client saw the count rise in zxid order, agreeing with the others on every zxid;
 * - **presence**: each persistent node, once first created and until its owner closes it, is
 *   seen missing for no longer than a bound beyond the faults that overlap its absence;
 * - **atomic**: an atomic number's final value is the sum of its acknowledged updates, plus at
 *   most those of unknown outcome; no two acknowledged updates claim the same value;
 * - **group**: after faults heal, every live group member's view holds every live member within
 *   two session timeouts and 10 s, and none holds a member that had closed for good past that;
 * - **discovery**: after faults heal, every client's service cache holds every registered
 *   instance with at least its last acknowledged payload within that bound, and none that was
 *   unregistered; no cache shows an instance's payload going back, or one never written;
 * - **exclusion**, **tokens**, **resource** for a multi-lock: each member lock path on its own,
 *   as a mutex;
 * - **deadlock**: every multi-lock acquisition ended (granted, timed out or failed) before the
 *   run's end, and within its timeout plus a grace of 2 T + 5 s;
 * - **leftovers**: no nodes, watches or sessions left, on any member; no client crashed.
 *
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import { checkHistory, type ChaosHistory } from 'zk-recipes/testing';
 * declare const history: ChaosHistory; // recorded by a chaos run (runChaos, or your own)
 *
 * const { violations } = checkHistory(history);
 * assert.deepEqual(violations, []);
 * ```
 */
export function checkHistory(history: ChaosHistory, options: CheckOptions = {}): CheckResult {
  need(history !== null && typeof history === 'object', `checkHistory: history must be a ChaosHistory, got ${describe(history)}`);
  need(history.meta !== null && typeof history.meta === 'object' && Array.isArray(history.meta.workloads) && Array.isArray(history.meta.clients), `checkHistory: history.meta must have workloads and clients arrays, got ${describe(history.meta)}`);
  need(Array.isArray(history.events), `checkHistory: history.events must be an array, got ${describe(history.events)}`);
  const o = checkObject(options, 'checkHistory', CHECK_OPTION_KEYS);
  const slack = o.slackMs === undefined ? 0 : checkNumber(o.slackMs, 'checkHistory options.slackMs', 0);
  need(o.checks === undefined || (Array.isArray(o.checks) && o.checks.every((c) => CHECKS.includes(c))), `checkHistory options.checks must be an array of ${CHECKS.join(', ')}, got ${describe(o.checks)}`);
  const intervals = beliefIntervals(history);
  const violations: Violation[] = [];
  const excused: Violation[] = [];
  const stats: CheckStats = { grants: {}, lost: {}, lossMarginMs: {}, faults: 0, increments: {}, resource: { accepted: 0, rejected: 0 }, queue: {}, cache: {} };
  for (const spec of history.meta.workloads) {
    if (LOCK_KINDS.has(spec.kind)) {
      const list = intervals.get(spec.name) ?? [];
      stats.grants[spec.name] = list.length;
      stats.lost[spec.name] = list.filter((i) => i.ended?.why === 'lost').length;
      if (spec.kind !== 'rwlock' && spec.maxLeases === 1) stats.lossMarginMs[spec.name] = lossMargin(list, excusedCuts(history, list));
      const exclusion = checkExclusion(history, spec, list, slack);
      excused.push(...exclusion.excused);
      violations.push(...exclusion.violations, ...checkTokens(spec, list, slack), ...checkCounter(history, spec), ...checkResource(history, spec));
      if (spec.counterPath !== undefined) stats.increments[spec.name] = history.events.filter((e) => e.type === 'counter' && e.workload === spec.name && e.phase === 'ok').length;
    } else if (spec.kind === 'multilock') {
      const found = checkMultiLock(history, spec, slack);
      violations.push(...found.violations);
      excused.push(...found.excused);
      stats.grants[spec.name] = found.grants;
      stats.lost[spec.name] = found.lost;
      const margins = found.members.map((m) => lossMargin(m.list, m.cuts)).filter((m): m is number => m !== null);
      stats.lossMarginMs[spec.name] = margins.length > 0 ? Math.min(...margins) : null;
    } else if (spec.kind === 'cache') {
      const { violations: found, caches } = checkCache(history, spec);
      violations.push(...found);
      const writes = history.events.filter((e) => e.type === 'cache-write' && e.workload === spec.name && e.client !== 'runner');
      stats.cache[spec.name] = { writes: writes.filter((e) => e.type === 'cache-write' && e.phase === 'ok').length, unknownWrites: writes.filter((e) => e.type === 'cache-write' && e.phase === 'info').length, caches };
    } else if (spec.kind === 'double-barrier') {
      violations.push(...checkDoubleBarrier(history, spec));
    } else if (spec.kind === 'group') {
      violations.push(...checkGroup(history, spec));
    } else if (spec.kind === 'discovery') {
      violations.push(...checkDiscovery(history, spec));
    } else if (spec.kind === 'shared-count') {
      violations.push(...checkSharedCount(history, spec));
      stats.increments[spec.name] = history.events.filter((e) => e.type === 'shared-count' && e.workload === spec.name && e.phase === 'ok').length;
    } else if (spec.kind === 'persistent-node') {
      violations.push(...checkPresence(history, spec));
    } else if (spec.kind === 'atomic') {
      violations.push(...checkAtomic(history, spec));
      stats.increments[spec.name] = history.events.filter((e) => e.type === 'atomic' && e.workload === spec.name && e.phase === 'ok').length;
    } else {
      violations.push(...(spec.kind === 'queue-at-most-once' ? checkAtMostOnce(history, spec) : checkAtLeastOnce(history, spec)));
      const mine = history.events.filter((e) => 'workload' in e && e.workload === spec.name);
      stats.queue[spec.name] = {
        acked: mine.filter((e) => e.type === 'put' && e.phase === 'ok').length,
        taken: mine.filter((e) => e.type === 'take' && e.phase === 'ok').length,
        handled: mine.filter((e) => e.type === 'handled' && e.outcome === 'resolved').length,
        remaining: history.final?.queueItems[spec.name]?.length ?? 0,
      };
    }
  }
  for (const e of history.events) {
    if (e.type === 'fault' && e.phase === 'start') stats.faults++;
    if (e.type === 'resource') stats.resource[e.accepted ? 'accepted' : 'rejected']++;
  }
  violations.push(...checkLeftovers(history));
  const wanted = new Set(o.checks ?? CHECKS);
  const reported = violations.filter((v) => wanted.has(v.check)).sort((a, b) => (a.t ?? Infinity) - (b.t ?? Infinity));
  return { violations: reported, excused: excused.filter((v) => wanted.has(v.check)), stats };
}

/** The smallest gap between a loss and the next grant to another client (see {@link CheckStats.lossMarginMs}). */
function lossMargin(list: readonly BeliefInterval[], excused: ReadonlyMap<BeliefInterval, unknown>): number | null {
  let min: number | null = null;
  for (const i of list) {
    if (i.ended?.why !== 'lost' || excused.has(i)) continue;
    // The list is sorted by start: the first later grant to someone else.
    const next = list.find((j) => j.client !== i.client && j.start > i.start);
    if (next === undefined) continue;
    const gap = next.start - i.end;
    min = min === null ? gap : Math.min(min, gap);
  }
  return min;
}

export { beliefIntervals, type BeliefInterval } from './beliefs.js';
export type { CheckName, CheckOptions, CheckResult, CheckStats, Violation } from './types.js';
export type { CacheSummary } from './cache.js';
