/**
 * Collecting what was left at the end of a chaos run: counters, queue items, ephemeral nodes,
 * and what every member reports (four-letter words).
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../../client/session.js';
import { AtomicNumber } from '../../atomic/atomic-number.js';
import { NoNodeError } from '../../errors.js';
import type { TestingCluster } from '../cluster.js';
import { waitFor } from '../wait.js';
import type { MemberLeftovers, WorkloadSpec } from './history.js';

/** Every node under `path` (depth first), with its ephemeral owner; nodes gone meanwhile are skipped. */
export async function walk(session: ZkSession, path: string): Promise<{ path: string; owner: bigint }[]> {
  let stat;
  let children: string[];
  try {
    ({ children, stat } = await session.getChildren(path));
  } catch (err) {
    if (err instanceof NoNodeError) return [];
    throw err;
  }
  const below = await Promise.all(children.map((c) => walk(session, `${path}/${c}`)));
  return [{ path, owner: stat.ephemeralOwner }, ...below.flat()];
}

/** Ephemeral nodes under `base`. */
export async function ephemeralsUnder(session: ZkSession, base: string): Promise<{ path: string; owner: string }[]> {
  await session.sync(base);
  return (await walk(session, base)).filter((n) => n.owner !== 0n).map((n) => ({ path: n.path, owner: `0x${n.owner.toString(16)}` }));
}

/** The payloads of the items still in a queue (items/p-*\/b-*\/i-*). */
export async function queueItems(session: ZkSession, spec: WorkloadSpec): Promise<string[]> {
  await session.sync(spec.path);
  const nodes = await walk(session, `${spec.path}/items`);
  const items = nodes.filter((n) => /\/i-[^/]*$/.test(n.path));
  const data = await Promise.all(items.map((n) => session.getData(n.path).then((d) => d.data.toString('utf8'), () => undefined)));
  return data.filter((d): d is string => d !== undefined);
}

/** A counter's value (null when it cannot be read). */
export async function counterValue(session: ZkSession, path: string): Promise<number | null> {
  await session.sync(path).catch(() => undefined);
  return session.getData(path).then((d) => Number(d.data.toString('utf8')), () => null);
}

/** A shared count's value (4 bytes, big-endian; null when it cannot be read or is not 4 bytes). */
export async function sharedCountValue(session: ZkSession, path: string): Promise<number | null> {
  await session.sync(path).catch(() => undefined);
  return session.getData(path).then((d) => (d.data.length === 4 ? d.data.readInt32BE(0) : null), () => null);
}

/** An atomic number's value as a decimal string (null when it cannot be read). */
export async function atomicValue(session: ZkSession, path: string): Promise<string | null> {
  return new AtomicNumber(session, path)
    .get({ timeoutMs: 15_000 })
    .then((v) => String(v.postValue), () => null);
}

/** `mntr` zk_watch_count of every member, once all are 0 or after `timeoutMs` (the last seen). */
export async function settleWatches(cluster: TestingCluster, timeoutMs: number): Promise<Map<number, number | null>> {
  const last = new Map<number, number | null>();
  await waitFor(
    async () => {
      // A member that is not running is not asked: another process may answer on its port.
      for (const m of cluster.members) last.set(m.id, m.running ? await m.mntr({ timeoutMs: 2000 }).then((s) => Number(s.zk_watch_count), () => null) : null);
      return cluster.members.every((m) => !m.running || last.get(m.id) === 0);
    },
    { timeoutMs, intervalMs: 250 },
  ).catch(() => undefined);
  return last;
}

/**
 * Per member, once no client session is connected or tracked and no ephemeral is left (or after
 * `timeoutMs`): the client sessions still connected (`cons`), the ephemeral count (`mntr`) and,
 * on the leader, the sessions it tracks besides the harness's own `harnessSessions` (`dump`).
 */
export async function settleSessions(cluster: TestingCluster, clientSessions: ReadonlySet<string>, watches: Map<number, number | null>, harnessSessions: ReadonlySet<string>, timeoutMs: number): Promise<MemberLeftovers[]> {
  let out: MemberLeftovers[] = [];
  const harness = new Set([...harnessSessions].map(normalize));
  await waitFor(
    async () => {
      out = await Promise.all(
        cluster.members.map(async (m): Promise<MemberLeftovers> => {
          if (!m.running) return { member: m.id, watches: null, clientConnections: [], ephemerals: null, trackedSessions: null, globalSessions: null };
          const conns = await m.connections({ timeoutMs: 2000 }).catch(() => []);
          const stats = await m.mntr({ timeoutMs: 2000 }).catch(() => undefined);
          const leader = stats?.zk_server_state === 'leader';
          const tracked = leader ? await m.dump({ timeoutMs: 2000 }).then((d) => d.sessions.map((s) => normalize(s.sessionId)).filter((id) => !harness.has(id)), () => null) : null;
          return {
            member: m.id,
            watches: watches.get(m.id) ?? null,
            clientConnections: conns.flatMap((c) => (c.sessionId !== undefined && clientSessions.has(normalize(c.sessionId)) ? [normalize(c.sessionId)] : [])),
            ephemerals: stats === undefined ? null : Number(stats.zk_ephemerals_count),
            trackedSessions: tracked,
            globalSessions: leader ? Number(stats.zk_global_sessions) - harness.size : null,
          };
        }),
      );
      const running = out.filter((m) => cluster.member(m.member).running);
      return running.every((m) => m.clientConnections.length === 0 && m.ephemerals === 0 && (m.trackedSessions?.length ?? 0) === 0) && running.some((m) => m.trackedSessions !== null);
    },
    { timeoutMs, intervalMs: 250 },
  ).catch(() => undefined);
  return out;
}

/** `0x00abc` and `0xabc` name the same session. */
function normalize(id: string): string {
  return `0x${BigInt(id).toString(16)}`;
}
