/**
 * The `delete-waiter` fault: an outside session deletes a node that waits in a lock's queue, as
 * an operator, a tool or Curator's `Revoker` may. Only nodes that certainly wait are chosen
 * (never one that is, or may be about to be, granted): see {@link pickWaiter}.
 *
 * @module
 */
import type { ZkSession } from '../../client/session.js';
import { parseNode } from '../../driver/names.js';
import { chaosNow } from './clock.js';
import type { HistoryRecorder } from './history.js';
import { checkInt, checkName, describe, need } from './validate.js';

/** A lock whose waiters the nemesis may delete. */
export interface WaiterLock {
  /** The lock's ZooKeeper path (its queue nodes are its children). */
  readonly path: string;
  /** The recipe: how its queue grants (`mutex`, `selector`, `latch`: one holder; `semaphore`: `maxLeases` nodes; `rwlock`: readers together, writers alone). */
  readonly kind: 'mutex' | 'selector' | 'latch' | 'semaphore' | 'rwlock';
  /** Leases a semaphore allows (1 otherwise). */
  readonly maxLeases: number;
}

/** What {@link deleteWaiter} did. */
export interface DeletedWaiter {
  /** The node's path, when one was deleted. */
  path?: string;
  /** The participant id its data carried (`<client>-<flow>` in the chaos runner), if any. */
  owner?: string;
  /** What happened, for the history. */
  detail: string;
}

const WRITE = '__WRIT__';
/** The lock names of the recipes' queue nodes (mutex and semaphore, latch, read-write lock). */
const KINDS = ['lock-', 'latch-', '__READ__', WRITE];

/**
 * The queue's children (names) that certainly wait, in queue order, such that even if the
 * holders ahead of them leave meanwhile (between the listing and the delete) they still wait:
 * - one holder (`mutex`, `selector`, `latch`): at least 2 nodes ahead;
 * - `semaphore`: at least `maxLeases + 2` nodes ahead (a node is granted once fewer than
 *   `maxLeases` are; one holder of 2 leases may leave meanwhile);
 * - `rwlock`: at least 2 *grant groups* ahead (a group is one write node, or a run of read
 *   nodes, each granted together once the groups ahead are gone).
 * Children that are not queue nodes (`[_c_<uuid>-]<lock name><sequence>`) are ignored.
 */
export function waitingNodes(children: readonly string[], lock: Pick<WaiterLock, 'kind' | 'maxLeases'>): string[] {
  need(Array.isArray(children) && children.every((c) => typeof c === 'string'), `waitingNodes: children must be an array of names, got ${describe(children)}`);
  need(lock !== null && typeof lock === 'object' && ['mutex', 'selector', 'latch', 'semaphore', 'rwlock'].includes(lock.kind), `waitingNodes: lock.kind must be mutex, selector, latch, semaphore or rwlock, got ${describe(lock?.kind)}`);
  need(Number.isInteger(lock.maxLeases) && lock.maxLeases >= 1, `waitingNodes: lock.maxLeases must be an integer >= 1, got ${describe(lock.maxLeases)}`);
  const queue = children
    .map((name) => parseNode(name, KINDS))
    .filter((n) => n !== undefined)
    .sort((a, b) => a.seq - b.seq);
  if (lock.kind === 'rwlock') {
    const out: string[] = [];
    let group = 0;
    queue.forEach((n, i) => {
      const prev = queue[i - 1];
      if (prev !== undefined && (n.kind === WRITE || prev.kind === WRITE)) group++;
      if (group >= 2) out.push(n.name);
    });
    return out;
  }
  const ahead = lock.kind === 'semaphore' ? lock.maxLeases + 2 : 2;
  return queue.slice(ahead).map((n) => n.name);
}

/**
 * Lists `lock`'s queue on `session` (after a `sync`, so the listing is the leader's), picks one
 * of its {@link waitingNodes} (`pick` in [0, 1) chooses), reads its owner from its data and
 * deletes it (any version). Resolves to what it did; a node gone meanwhile is no error.
 */
export async function deleteWaiter(session: ZkSession, lock: WaiterLock, pick: number): Promise<DeletedWaiter> {
  checkName(lock?.path, 'deleteWaiter: lock.path');
  need(typeof pick === 'number' && pick >= 0 && pick < 1, `deleteWaiter: pick must be in [0, 1), got ${describe(pick)}`);
  await session.sync(lock.path);
  const { children } = await session.getChildren(lock.path);
  const waiting = waitingNodes(children, lock);
  const name = waiting[Math.floor(pick * waiting.length)];
  if (name === undefined) return { detail: `no waiter to delete (${children.length} nodes)` };
  const path = `${lock.path}/${name}`;
  let owner: string | undefined;
  try {
    owner = (await session.getData(path)).data.toString('utf8') || undefined;
    await session.delete(path);
  } catch (err) {
    return { path, ...(owner !== undefined && { owner }), detail: `${name} not deleted: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  }
  return { path, ...(owner !== undefined && { owner }), detail: `deleted ${name} (${waiting.length} of ${children.length} nodes waiting; owner ${owner ?? 'unknown'})` };
}

/** Checks the nemesis's `waiters` option (a session and the locks). */
export function checkWaiters(waiters: { session: ZkSession; locks: readonly WaiterLock[] }, what: string): void {
  need(waiters !== null && typeof waiters === 'object' && typeof waiters.session === 'object' && waiters.session !== null, `${what}.session must be a ZkSession, got ${describe(waiters?.session)}`);
  need(Array.isArray(waiters.locks), `${what}.locks must be an array, got ${describe(waiters.locks)}`);
  waiters.locks.forEach((l, i) => {
    checkName(l?.path, `${what}.locks[${i}].path`);
    need(['mutex', 'selector', 'latch', 'semaphore', 'rwlock'].includes(l.kind), `${what}.locks[${i}].kind must be mutex, selector, latch, semaphore or rwlock, got ${describe(l.kind)}`);
    checkInt(l.maxLeases, `${what}.locks[${i}].maxLeases`, 1, 1_000_000);
  });
}

/** What {@link deleteWaiterFault} needs. */
export interface DeleteWaiterContext {
  /** The outside session. */
  session: ZkSession;
  /** The locks to choose among. */
  locks: readonly WaiterLock[];
  /** Where the fault is recorded. */
  recorder: HistoryRecorder;
  /** The fault's id. */
  id: number;
  /** The clients' names: the fault's target is the owner's client when it is one of them. */
  clients: readonly string[];
}

/**
 * The `delete-waiter` fault: {@link deleteWaiter} on one of `ctx.locks` (`lockPick` in [0, 1)
 * chooses it), recorded as a fault (start at the listing, end at once) aimed at the owner's
 * client (its participant id without the `-<flow>` suffix), or at the lock's path.
 */
export async function deleteWaiterFault(ctx: DeleteWaiterContext, lockPick: number, nodePick: number): Promise<void> {
  need(typeof lockPick === 'number' && lockPick >= 0 && lockPick < 1, `deleteWaiter: lockPick must be in [0, 1), got ${describe(lockPick)}`);
  need(typeof nodePick === 'number' && nodePick >= 0 && nodePick < 1, `deleteWaiter: nodePick must be in [0, 1), got ${describe(nodePick)}`);
  const lock = ctx.locks[Math.floor(lockPick * ctx.locks.length)];
  need(lock !== undefined, 'deleteWaiter: needs at least one lock');
  const began = chaosNow();
  let done: DeletedWaiter;
  try {
    done = await deleteWaiter(ctx.session, lock, nodePick);
  } catch (err) {
    done = { detail: `listing failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  }
  const owner = done.owner?.replace(/-[^-]*$/, '');
  const target = owner !== undefined && ctx.clients.includes(owner) ? owner : lock.path;
  const { recorder, id } = ctx;
  recorder.record({ type: 'fault', phase: 'start', id, fault: 'delete-waiter', target, detail: `${done.path ?? lock.path}: ${done.detail}` }, began);
  recorder.record({ type: 'fault', phase: 'end', id, fault: 'delete-waiter', target, detail: done.path === undefined ? 'nothing deleted' : 'done' });
}
