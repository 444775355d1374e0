/**
 * Workloads of the lock recipes: a mutex guarding a counter and a fenced register, a semaphore
 * with some multi-lease requests, a read-write lock with downgrades. Each client runs two flows
 * ({@link inFlows}), each with its own recipe instance on the client's session.
 *
 * @internal
 * @module
 */
import type { LockHandle } from '../../../driver/handle.js';
import { Mutex } from '../../../mutex/mutex.js';
import { ReadWriteLock } from '../../../rwlock/rwlock.js';
import { Semaphore } from '../../../semaphore/semaphore.js';
import type { LockMode } from '../history.js';
import { attemptName, believe, checkIn, errorText, fenceAgain, holdThroughSuspension, incrementAndFence, inFlows, participantId, pause, type Belief, type FlowContext, type WorkloadContext } from './common.js';

/**
 * How long a holder holds: mostly short; one in ten 0.8-2.5 s; one in ten 3-7 s, past the
 * session timeout, so that a partition aimed at it lands while it holds and outlasts its
 * session: it must be told it lost the lock before anyone else is granted it.
 */
function holdMs(ctx: WorkloadContext): number {
  const x = ctx.random.next();
  if (x < 0.1) return ctx.random.int(3000, 7000);
  if (x < 0.2) return ctx.random.int(800, 2500);
  return ctx.random.int(20, 250);
}

/** One acquisition: records the wait, the grant or the failure; null when not granted. */
async function acquire(
  ctx: WorkloadContext,
  attempt: string,
  leases: number,
  mode: LockMode,
  get: () => Promise<LockHandle>,
  downgradeOf?: string,
): Promise<{ handle: LockHandle; belief: Belief } | null> {
  ctx.recorder.record({ type: 'wait', workload: ctx.spec.name, attempt, leases, mode });
  let handle: LockHandle;
  try {
    handle = await get();
  } catch (err) {
    ctx.recorder.record({ type: 'wait-fail', workload: ctx.spec.name, attempt, error: errorText(err) });
    return null;
  }
  const belief = believe(ctx, { attempt, token: handle.fencingToken, leases, mode, sessionId: handle.sessionId, ...(downgradeOf !== undefined && { downgradeOf }) }, handle.signal);
  return { handle, belief };
}

/** Ends the belief, then releases; a lost lock's release error is expected. */
async function release(held: { handle: LockHandle; belief: Belief }): Promise<void> {
  held.belief.release();
  await held.handle.release().catch(() => undefined);
}

/** Backs off after a failed acquisition (a partitioned client retries a few times a second). */
export function backoff(ctx: WorkloadContext): Promise<boolean> {
  return pause(ctx.random.int(50, 300), ctx.stop);
}

/** Holds: a pause, the check-in, and riding out a suspension, all ending with the lock's signal. */
export async function hold(ctx: WorkloadContext, signal: AbortSignal): Promise<void> {
  await pause(holdMs(ctx), signal);
  await checkIn(ctx, signal);
  await holdThroughSuspension(ctx, signal);
}

/** Holds what `held` got, then releases it whatever happens. */
async function holdThenRelease(ctx: WorkloadContext, held: { handle: LockHandle; belief: Belief }): Promise<void> {
  try {
    await hold(ctx, held.handle.signal);
  } finally {
    await release(held);
  }
}

/**
 * Runs one flow's rounds until the workload stops, then closes its recipe: `round` returns
 * whether it got the lock; a round that did not backs off, one that did pauses a little before
 * the next.
 */
async function rounds(ctx: FlowContext, recipe: { close(): Promise<void> }, round: (attempt: string) => Promise<boolean>): Promise<void> {
  try {
    for (let i = 0; !ctx.stop.aborted; i++) {
      if (await round(attemptName(ctx, i))) await pause(ctx.random.int(0, 100), ctx.stop);
      else await backoff(ctx);
    }
  } finally {
    await recipe.close();
  }
}

/** Mutex: increment the counter under the lock (handle.multi), write the fenced register, hold. */
export async function mutexWorkload(ctx: WorkloadContext): Promise<void> {
  const seq = { n: 0 };
  await inFlows(ctx, (flow) => mutexFlow(flow, seq));
}

/** One flow of a mutex client: its own Mutex, the client's `seq`. */
async function mutexFlow(ctx: FlowContext, seq: { n: number }): Promise<void> {
  const mutex = new Mutex(ctx.session, ctx.spec.path, { participantId: participantId(ctx) });
  await rounds(ctx, mutex, async (attempt) => {
    const held = await acquire(ctx, attempt, 1, 'exclusive', () => mutex.acquire({ timeoutMs: 8000, signal: ctx.stop }));
    if (!held) return false;
    try {
      await incrementAndFence(ctx, attempt, held.handle, held.belief, seq).catch(() => undefined);
      await hold(ctx, held.handle.signal);
      await fenceAgain(ctx, held.handle.fencingToken, held.belief, seq);
    } finally {
      await release(held);
    }
    return true;
  });
}

/** Semaphore: one or (sometimes) two leases at a time, in each flow. */
export function semaphoreWorkload(ctx: WorkloadContext): Promise<void> {
  return inFlows(ctx, semaphoreFlow);
}

/** One flow of a semaphore client, with its own Semaphore. */
async function semaphoreFlow(ctx: FlowContext): Promise<void> {
  const max = ctx.spec.maxLeases;
  const sem = new Semaphore(ctx.session, ctx.spec.path, { maxLeases: max, participantId: participantId(ctx) });
  await rounds(ctx, sem, async (attempt) => {
    const leases = max >= 2 && ctx.random.chance(0.3) ? 2 : 1;
    const held = await acquire(ctx, attempt, leases, 'lease', () => sem.acquire(leases, { timeoutMs: 8000, signal: ctx.stop }));
    if (!held) return false;
    await holdThenRelease(ctx, held);
    return true;
  });
}

/** Read-write lock: readers, writers (counter under the write lock), and downgrades. */
export async function rwlockWorkload(ctx: WorkloadContext): Promise<void> {
  const seq = { n: 0 };
  await inFlows(ctx, (flow) => rwlockFlow(flow, seq));
}

/**
 * One flow of a read-write lock client. Its own ReadWriteLock: an instance is one participant,
 * and a downgrade is of its own write lock only (the other flow's write excludes this one's read).
 */
async function rwlockFlow(ctx: FlowContext, seq: { n: number }): Promise<void> {
  const rw = new ReadWriteLock(ctx.session, ctx.spec.path, { participantId: participantId(ctx) });
  const opts = { timeoutMs: 8000, signal: ctx.stop };
  await rounds(ctx, rw, async (attempt) => {
    if (ctx.random.chance(0.6)) {
      const read = await acquire(ctx, attempt, 1, 'read', () => rw.readLock().acquire(opts));
      if (!read) return false;
      await holdThenRelease(ctx, read);
      return true;
    }
    const write = await acquire(ctx, attempt, 1, 'write', () => rw.writeLock().acquire(opts));
    if (!write) return false;
    let read: { handle: LockHandle; belief: Belief } | null = null;
    try {
      await incrementAndFence(ctx, attempt, write.handle, write.belief, seq).catch(() => undefined);
      await hold(ctx, write.handle.signal);
      await fenceAgain(ctx, write.handle.fencingToken, write.belief, seq);
      // Downgrade: take the read lock while holding the write lock, then let the write go.
      if (ctx.random.chance(0.5) && write.belief.active) {
        read = await acquire(ctx, `${attempt}-d`, 1, 'read', () => rw.readLock().acquire(opts), attempt);
      }
    } finally {
      await release(write);
    }
    if (read) await holdThenRelease(ctx, read);
    return true;
  });
}
