// Hand-made chaos histories for the tests of the checks: one workload, no final state.
import type { ChaosEvent, ChaosHistory } from '../../src/testing/index.js';

type Meta = ChaosHistory['meta'];

/** A history of `events` (as given: see {@link byTime}) for the one workload `spec`. */
export function historyOf(spec: Meta['workloads'][number], events: ChaosEvent[], { endedAt, clients = [] }: { endedAt: number; clients?: Meta['clients'] }): ChaosHistory {
  return {
    version: 1,
    meta: { seed: 1, seconds: 1, startedAt: 0, endedAt, sessionTimeoutMs: 4000, clients, workloads: [spec], members: [] },
    events,
    final: { counters: {}, queueItems: {}, ephemerals: [], members: [] },
  };
}

/** `events` in time order (a copy), for tests that build them out of order. */
export const byTime = (events: readonly ChaosEvent[]): ChaosEvent[] => [...events].sort((a, b) => a.t - b.t);
