/**
 * The nemesis's member helpers: restarting a member, and the faults between ensemble members
 * (a {@link TestingCluster} started with `memberLinks`): a follower cut off from the others
 * while its clients stay connected, the leader alone in a minority, a slow follower. One member impaired at a time; each fault heals
 * itself and waits for a quorum with every member serving before it resolves.
 *
 * @internal
 * @module
 */
import type { TestingCluster } from '../cluster.js';
import type { HistoryRecorder } from './history.js';

/** The first line of an error's message. */
export function firstLine(err: unknown): string {
  return err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
}

/** Resolves after `ms` or when `signal` aborts (a fault schedule's pause, not synchronization). */
export function idle(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Restarts a member, up to `attempts` attempts of 30 s (under load a restarted member
 * sometimes does not rejoin in time, and another process may have taken one of its ports
 * meanwhile); each failure is noted with the member's log tail. Resolves to a note.
 */
export async function bringBack(cluster: TestingCluster, recorder: HistoryRecorder, member: number, attempts: number): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      await cluster.restart(member, { timeoutMs: 30_000 });
      return attempt === 1 ? 'restarted' : `restarted (attempt ${attempt})`;
    } catch (err) {
      const first = firstLine(err);
      const tail = cluster
        .member(member)
        .logs()
        .filter((l) => !/NIOServerCnxn|^\s+at |ZooKeeperServer not running|^\s*$/.test(l))
        .slice(-12)
        .join('\n');
      recorder.record({ type: 'note', level: 'info', message: `member ${member} did not serve after a restart (attempt ${attempt}): ${first}\n${tail}` });
      if (attempt >= attempts) throw err;
    }
  }
}

/** The member-link fault kinds. */
export const LINK_FAULTS = ['isolate-follower', 'minority-partition', 'slow-follower'] as const;

/** One member-link fault kind. */
export type LinkFault = (typeof LINK_FAULTS)[number];

/** Whether `cluster` routes member-to-member traffic through link proxies (`memberLinks`). */
export function hasMemberLinks(cluster: TestingCluster): boolean {
  const [a, b] = cluster.members;
  if (a === undefined || b === undefined || typeof cluster.link !== 'function') return false;
  try {
    cluster.link(a.id, b.id);
    return true;
  } catch {
    return false;
  }
}

/**
 * The running member that serves session `sessionId` (`0x...`), asking `cons` on each; undefined
 * when none lists it (between connections) or none answers.
 */
export async function memberServing(cluster: TestingCluster, sessionId: string): Promise<number | undefined> {
  let wanted: bigint;
  try {
    wanted = BigInt(sessionId);
  } catch {
    return undefined;
  }
  const found = await Promise.all(
    cluster.members
      .filter((m) => m.running)
      .map(async (m) => {
        const list = await m.connections({ timeoutMs: 1000 }).catch(() => []);
        return list.some((c) => c.sessionId !== undefined && safeBigInt(c.sessionId) === wanted) ? m.id : undefined;
      }),
  );
  return found.find((id) => id !== undefined);
}

function safeBigInt(s: string): bigint | undefined {
  try {
    return BigInt(s);
  } catch {
    return undefined;
  }
}

/** What a member-link fault needs. */
export interface LinkFaultContext {
  /** The ensemble, with member links. */
  cluster: TestingCluster;
  /** Where the fault is recorded. */
  recorder: HistoryRecorder;
  /** The clients' session timeout T, ms. */
  sessionTimeoutMs: number;
  /** The fault's id in the history. */
  id: number;
  /** The session of the longest holder (`0x...`), if any: `isolate-follower` aims at its member. */
  holderSession?: string | undefined;
}

/**
 * Injects one member-link fault, heals it and waits for a quorum; resolves to the impaired
 * member. `amount` in [0, 1) scales its duration, `pick` in [0, 1) chooses a follower when no
 * holder's member decides:
 * - `isolate-follower`: every link of a follower cut (both ways) for 1.3-2.2 T, its client port
 *   untouched: it answers its clients' reads and pings from its own copy while the leader hears
 *   nothing of their sessions. The follower serving the longest holder's session when it is one
 *   (asked with `cons`), else a random one;
 * - `minority-partition`: the leader alone against the other two for 1.3-2.2 T;
 * - `slow-follower`: every link of a random follower delayed 100-400 ms each way for 2-6 s (it
 *   lags: its clients read older data than the leader has committed).
 */
export async function impairLinks(ctx: LinkFaultContext, kind: LinkFault, amount: number, pick: number): Promise<number> {
  const { cluster, recorder, sessionTimeoutMs: T, id } = ctx;
  const leader = await cluster.waitForQuorum({ timeoutMs: 60_000 });
  const followers = cluster.members.filter((m) => m.id !== leader && m.running).map((m) => m.id);
  const random = followers[Math.floor(pick * followers.length)] ?? followers[0];
  let target = kind === 'minority-partition' ? leader : random;
  let why = kind === 'minority-partition' ? 'the leader' : 'a random follower';
  if (kind === 'isolate-follower' && ctx.holderSession !== undefined) {
    const serving = await memberServing(cluster, ctx.holderSession);
    if (serving !== undefined && followers.includes(serving)) {
      target = serving;
      why = `the follower serving the longest holder's session ${ctx.holderSession}`;
    }
  }
  if (target === undefined) throw new Error(`${kind}: no follower is running`);
  const start = (detail: string): void => void recorder.record({ type: 'fault', phase: 'start', id, fault: kind, target: `member-${target}`, detail });
  let ms: number;
  switch (kind) {
    case 'isolate-follower':
      ms = Math.round(T * (1.3 + 0.9 * amount));
      start(`${why}: every link to the other members cut for ${ms} ms (${(ms / T).toFixed(2)} x the session timeout), its clients' links untouched`);
      cluster.isolate(target);
      break;
    case 'minority-partition':
      ms = Math.round(T * (1.3 + 0.9 * amount));
      start(`partition [[${target}], [${followers.join(', ')}]] for ${ms} ms (${(ms / T).toFixed(2)} x the session timeout)`);
      cluster.partition([[target], followers]);
      break;
    case 'slow-follower': {
      const delay = Math.round(100 + 300 * amount);
      ms = Math.round(2000 + 4000 * amount);
      start(`${why}: every link delayed ${delay} ms each way for ${ms} ms`);
      cluster.delayLinks(target, delay);
      break;
    }
  }
  await new Promise((r) => setTimeout(r, ms));
  cluster.heal();
  let detail = 'healed';
  try {
    await cluster.waitForQuorum({ timeoutMs: 60_000 });
    return target;
  } catch (err) {
    detail = `healed; no quorum after 60 s: ${firstLine(err)}`;
    throw err;
  } finally {
    recorder.record({ type: 'fault', phase: 'end', id, fault: kind, target: `member-${target}`, detail });
  }
}
