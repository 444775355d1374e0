/**
 * The fenced resource: it never accepts a stale token, and only tokens that were granted.
 *
 * @module
 */
import type { ChaosHistory, GrantEvent, ResourceEvent, WorkloadSpec } from '../history.js';
import { hexToken } from '../format.js';
import type { Violation } from './types.js';

/**
 * Over the resource's own records of `spec.register`, in the order it decided:
 * - an accepted token is never below one accepted before it (stale);
 * - every accepted token was granted to the writer, in this workload (nothing forged or
 *   borrowed from another workload's path).
 */
export function checkResource(history: ChaosHistory, spec: WorkloadSpec): Violation[] {
  if (spec.register === undefined) return [];
  const granted = new Map<string, GrantEvent>();
  for (const e of history.events) if (e.type === 'grant' && e.workload === spec.name) granted.set(`${e.client}\u0000${e.token}`, e);
  const violations: Violation[] = [];
  let highest: ResourceEvent | undefined;
  for (const e of history.events) {
    if (e.type !== 'resource' || e.register !== spec.register || !e.accepted) continue;
    const token = BigInt(e.token);
    if (highest && token < BigInt(highest.token)) {
      violations.push({ check: 'resource', workload: spec.name, t: e.t, message: `the resource accepted stale token ${hexToken(token)} from ${e.writer} after accepting ${hexToken(highest.token)} from ${highest.writer}`, events: [highest, e] });
    }
    const grant = granted.get(`${e.writer}\u0000${e.token}`);
    if (!grant) {
      violations.push({ check: 'resource', workload: spec.name, t: e.t, message: `the resource accepted token ${hexToken(token)} from ${e.writer}, which was never granted it`, events: [e] });
    }
    if (!highest || token >= BigInt(highest.token)) highest = e;
  }
  return violations;
}
