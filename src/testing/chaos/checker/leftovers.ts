/**
 * Nothing left at the end: no ephemeral nodes (locks, latches, claims, consumer lines) under the
 * base path, no watches, no client session still connected, on any member, none tracked by the
 * leader; and no client crashed.
 *
 * @module
 */
import type { ChaosHistory } from '../history.js';
import type { Violation } from './types.js';

/** Checks the final state's leftovers and the harness's own health. */
export function checkLeftovers(history: ChaosHistory): Violation[] {
  const v: Violation[] = [];
  for (const e of history.events) {
    if (e.type === 'note' && e.level === 'error') v.push({ check: 'harness', t: e.t, message: `${e.client}: ${e.message.split('\n')[0]}`, events: [e] });
  }
  const final = history.final;
  if (!final) {
    v.push({ check: 'leftovers', message: 'the run ended before its final state was collected', events: [] });
    return v;
  }
  if (final.ephemerals.length > 0) {
    v.push({ check: 'leftovers', message: `${final.ephemerals.length} ephemeral nodes left under the base path after every client closed: ${final.ephemerals.slice(0, 5).map((n) => `${n.path} (owner ${n.owner})`).join(', ')}`, events: [] });
  }
  const owners = new Map<string, string>();
  for (const e of history.events) if (e.type === 'session' && e.sessionId !== '0x0') owners.set(e.sessionId, e.client);
  const named = (id: string): string => `${id} (${owners.has(id) ? `${owners.get(id)}'s` : 'no client reported it'})`;
  for (const m of final.members) {
    if (m.watches === null || m.ephemerals === null) v.push({ check: 'leftovers', message: `member ${m.member} did not answer mntr at the end`, events: [] });
    if (m.watches !== null && m.watches > 0) v.push({ check: 'leftovers', message: `member ${m.member} still holds ${m.watches} watches after every client closed its recipes`, events: [] });
    if (m.ephemerals !== null && m.ephemerals > 0) v.push({ check: 'leftovers', message: `member ${m.member} still holds ${m.ephemerals} ephemeral nodes after the clients exited`, events: [] });
    if (m.trackedSessions !== null && m.trackedSessions.length > 0) v.push({ check: 'leftovers', message: `the leader (member ${m.member}) still tracks ${m.trackedSessions.length} sessions besides the harness's after the clients exited: ${m.trackedSessions.slice(0, 5).map(named).join(', ')}`, events: [] });
    if (m.clientConnections.length > 0) v.push({ check: 'leftovers', message: `member ${m.member} still has client sessions connected after the clients exited: ${m.clientConnections.join(', ')}`, events: [] });
  }
  return v;
}
