/**
 * Fencing tokens: unique per grant, and increasing in grant order between holders that exclude
 * each other.
 *
 * @module
 */
import type { WorkloadSpec } from '../history.js';
import { excerpt, type BeliefInterval } from './beliefs.js';
import { rwCompatible } from './exclusion.js';
import { hexToken } from '../format.js';
import type { Violation } from './types.js';

/** Whether two intervals must exclude each other under `spec` (so their tokens are ordered). */
function excluding(spec: WorkloadSpec, a: BeliefInterval, b: BeliefInterval): boolean {
  if (spec.kind === 'rwlock') return !rwCompatible(a, b);
  return spec.maxLeases === 1;
}

/**
 * Checks tokens:
 * - **unique**: no two grants share a token (each grant is its own node; only a downgrade's read
 *   carries its write's token);
 * - **ordered**: when `a` was granted before `b`, they exclude each other, and `a` ended before
 *   `b` began (within the slack), `a`'s token is smaller. For a semaphore no order is asserted:
 *   leases are granted in node order on the server, but a client may notice its grant after a
 *   later node's holder has come and gone, and concurrent leases need no order.
 */
export function checkTokens(spec: WorkloadSpec, intervals: readonly BeliefInterval[], slackMs: number): Violation[] {
  const violations: Violation[] = [];
  const byToken = new Map<bigint, BeliefInterval>();
  for (const i of intervals) {
    const seen = byToken.get(i.token);
    const sharedByDowngrade = seen !== undefined && (i.downgradeOf === seen.attempt || seen.downgradeOf === i.attempt) && i.client === seen.client;
    if (seen && !sharedByDowngrade) {
      violations.push({ check: 'tokens', workload: spec.name, t: i.start, message: `token ${hexToken(i.token)} granted twice: to ${seen.client} (${seen.attempt}) and ${i.client} (${i.attempt})`, events: excerpt([seen, i]) });
    }
    byToken.set(i.token, seen ?? i);
  }
  if (spec.kind === 'semaphore') return violations;
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  for (let x = 0; x < sorted.length; x++) {
    const a = sorted[x] as BeliefInterval;
    for (let y = x + 1; y < sorted.length; y++) {
      const b = sorted[y] as BeliefInterval;
      if (a.end - b.start > slackMs || !excluding(spec, a, b)) continue;
      if (b.token <= a.token) {
        violations.push({
          check: 'tokens',
          workload: spec.name,
          t: b.start,
          message: `token went backwards: ${b.client} was granted token ${hexToken(b.token)} after ${a.client} held token ${hexToken(a.token)}`,
          events: excerpt([a, b]),
        });
      }
      // For exclusive recipes the next excluding interval suffices (order is transitive).
      if (spec.kind !== 'rwlock') break;
    }
  }
  return violations;
}
