/**
 * The service discovery check: after faults heal, every client's service cache holds every
 * registered instance with at least its last acknowledged payload within a bound, and none that
 * was unregistered for good; a cache never shows an instance's payload going back, nor one that
 * was never written.
 *
 * @module
 */
import type { ChaosEvent, ChaosHistory, DiscoveryOpEvent, DiscoveryViewEvent, WorkloadSpec } from '../history.js';
import { goneBy, quietSpans, settleBoundMs } from './group.js';
import type { Violation } from './types.js';

/** An instance's life, from its client's calls. */
interface Instance {
  readonly id: string;
  registered?: DiscoveryOpEvent;
  /** Acknowledged writes (the register's version 0 first), in order. */
  readonly acked: DiscoveryOpEvent[];
  /** The highest version any call tried to write. */
  maxTried: number;
  unregistering?: DiscoveryOpEvent;
  unregistered?: DiscoveryOpEvent;
}

/** A client's cache: its views in time order, from its first (the load) to its last. */
interface Viewer {
  readonly client: string;
  readonly views: DiscoveryViewEvent[];
}

/**
 * For a `discovery` workload (`boundMs` defaults to two session timeouts and 10 s):
 * - **complete**: in each interval without faults, for each write of an instance acknowledged
 *   at `t` (its register, each update) and each client cache, the cache's view at the later of
 *   the interval's start, `t` and the cache's first view, plus the bound, holds the instance with
 *   that version or a later one (if the interval, the instance's registration and the cache's
 *   life last that long);
 * - **no ghost**: once an instance was unregistered (acknowledged), from the first instant
 *   without faults at or after that, plus the bound, no cache's view holds it;
 * - **no going back**: a cache's version of an instance never decreases from one view to the
 *   next, and is never one no call tried to write.
 */
export function checkDiscovery(history: ChaosHistory, spec: WorkloadSpec, boundMs = settleBoundMs(history.meta.sessionTimeoutMs)): Violation[] {
  const instances = new Map<string, Instance>();
  const viewers = new Map<string, Viewer>();
  for (const e of history.events) {
    if (e.type === 'discovery' && e.workload === spec.name) {
      const inst = instances.get(e.instance) ?? { id: e.instance, acked: [], maxTried: -1 };
      instances.set(e.instance, inst);
      if (e.version !== undefined && e.phase === 'invoke') inst.maxTried = Math.max(inst.maxTried, e.version);
      if (e.phase !== 'ok') {
        if (e.op === 'unregister' && e.phase === 'invoke') inst.unregistering ??= e;
        continue;
      }
      if (e.op === 'register') inst.registered = e;
      if (e.op !== 'unregister') inst.acked.push(e);
      else inst.unregistered = e;
    } else if (e.type === 'discovery-view' && e.workload === spec.name) {
      const v = viewers.get(e.client) ?? { client: e.client, views: [] };
      viewers.set(e.client, v);
      v.views.push(e);
    }
  }
  for (const v of viewers.values()) v.views.sort((a, b) => a.t - b.t);
  const viewAt = (viewer: Viewer, t: number): DiscoveryViewEvent | undefined => {
    let found: DiscoveryViewEvent | undefined;
    for (const v of viewer.views) {
      if (v.t > t) break;
      found = v;
    }
    return found;
  };
  const at = (t: number): string => (Number.isFinite(t) ? `${((t - history.meta.startedAt) / 1000).toFixed(1)} s` : 'the start');
  const quiet = quietSpans(history);
  const violations: Violation[] = [];

  // Complete: each acknowledged write is in every cache a bound into a quiet interval.
  for (const [q0, q1] of quiet) {
    for (const inst of instances.values()) {
      if (!inst.registered) continue;
      const until = inst.unregistering?.t ?? Infinity;
      for (const write of inst.acked) {
        const version = write.version ?? 0;
        for (const viewer of viewers.values()) {
          const first = viewer.views[0];
          const last = viewer.views[viewer.views.length - 1];
          if (!first || !last) continue;
          const c = Math.max(q0, write.t, first.t) + boundMs;
          if (c >= q1 || c >= until || c > last.t) continue;
          const view = viewAt(viewer, c);
          const seen = view?.instances[inst.id];
          if (seen !== undefined && seen >= version) continue;
          violations.push({
            check: 'discovery',
            workload: spec.name,
            t: c,
            message: `${viewer.client}'s cache ${seen === undefined ? `lacked ${inst.id}` : `held ${inst.id} at version ${seen}`} ${boundMs} ms after version ${version} was acknowledged (at ${at(write.t)}) in a quiet interval (no fault from ${at(q0)})`,
            events: [write, ...(view ? [view] : [])] as ChaosEvent[],
          });
          break; // one report per write and quiet interval is enough
        }
      }
    }
  }

  // No ghost: an unregistered instance is in no cache a bound after the first quiet instant after.
  for (const inst of instances.values()) {
    const gone = inst.unregistered;
    if (!gone) continue;
    const c = goneBy(quiet, gone.t, boundMs);
    if (c === undefined) continue;
    for (const viewer of viewers.values()) {
      const seen: DiscoveryViewEvent[] = [];
      const atC = viewAt(viewer, c);
      const last = viewer.views[viewer.views.length - 1];
      if (atC?.instances[inst.id] !== undefined && last !== undefined && last.t > c) seen.push(atC);
      for (const v of viewer.views) if (v.t > c && v.instances[inst.id] !== undefined) seen.push(v);
      const v = seen[0];
      if (v === undefined) continue;
      violations.push({
        check: 'discovery',
        workload: spec.name,
        t: Math.max(v.t, c),
        message: `${viewer.client}'s cache still held ${inst.id} ${boundMs} ms or more after it was unregistered (at ${at(gone.t)}) and the faults healed`,
        events: [gone, v],
      });
    }
  }

  // No going back, and nothing never written.
  for (const viewer of viewers.values()) {
    const latest = new Map<string, DiscoveryViewEvent>();
    for (const v of viewer.views) {
      for (const [id, version] of Object.entries(v.instances)) {
        const tried = instances.get(id)?.maxTried ?? -1;
        if (version > tried) {
          violations.push({ check: 'discovery', workload: spec.name, t: v.t, message: `${viewer.client}'s cache held ${id} at version ${version}, which no call wrote (the highest tried: ${tried})`, events: [v] });
        }
        const before = latest.get(id);
        const was = before?.instances[id];
        if (before !== undefined && was !== undefined && version < was) {
          violations.push({ check: 'discovery', workload: spec.name, t: v.t, message: `${viewer.client}'s cache went back from version ${was} to ${version} of ${id}`, events: [before, v] });
        }
        latest.set(id, v);
      }
    }
  }
  return violations;
}
