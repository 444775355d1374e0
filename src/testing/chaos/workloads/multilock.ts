/**
 * The multilock workload: each flow takes a {@link MultiLock} over 2 or 3 of the workload's
 * member lock paths (drawn with the flow's seeded random, given in random order: the recipe
 * sorts them), writes each member's fenced register with that member's token, holds like the
 * mutex workload (now and then past the session timeout), writes the registers again and
 * releases. Every acquisition is recorded with its members and timeout, so the checker can
 * treat each member path as a lock of its own and see that every wait ended.
 *
 * @internal
 * @module
 */
import { MultiLock, type MultiLockHandle } from '../../../multilock/multilock.js';
import { memberRegister } from '../plan.js';
import { attemptName, believe, errorText, inFlows, participantId, pause, type Belief, type FlowContext, type WorkloadContext } from './common.js';
import { backoff, hold } from './locks.js';

/** Each acquisition's timeout, ms (for the whole multi-lock, not each member). */
const TIMEOUT_MS = 8000;

/** Runs both flows; `seq` numbers the client's fenced writes (shared by its flows). */
export async function multiLockWorkload(ctx: WorkloadContext): Promise<void> {
  const seq = { n: 0 };
  await inFlows(ctx, (flow) => multiLockFlow(flow, seq));
}

/** `k` distinct members of `all`, in the order drawn. */
function draw(ctx: FlowContext, all: readonly string[], k: number): string[] {
  const left = [...all];
  const out: string[] = [];
  while (out.length < k && left.length > 0) out.push(...left.splice(ctx.random.int(0, left.length - 1), 1));
  return out;
}

/** Each member lock's path (not its node's: a handle's `path` is its node) and token, in acquisition order. */
function membersOf(lock: MultiLock, handle: MultiLockHandle): { path: string; token: bigint }[] {
  return handle.handles.map((h, i) => ({ path: lock.paths[i] as string, token: h.fencingToken }));
}

/** Writes every member's register with its token, while still believed. */
async function fenceMembers(ctx: WorkloadContext, members: readonly { path: string; token: bigint }[], belief: Belief, seq: { n: number }): Promise<void> {
  for (const m of members) {
    if (!belief.active) return;
    await ctx.resource.write(memberRegister(ctx.spec, m.path), m.token, seq.n++).catch(() => undefined);
  }
}

/** One flow: a new MultiLock per acquisition (its own member set), closed after it. */
async function multiLockFlow(ctx: FlowContext, seq: { n: number }): Promise<void> {
  const all = ctx.spec.members;
  if (all === undefined || all.length < 2) throw new Error(`multilock workload ${ctx.spec.name}: needs at least 2 member paths`);
  const workload = ctx.spec.name;
  for (let i = 0; !ctx.stop.aborted; i++) {
    const attempt = attemptName(ctx, i);
    const lock = new MultiLock(ctx.session, draw(ctx, all, ctx.random.chance(0.5) ? 2 : 3), { participantId: participantId(ctx) });
    let granted = false;
    try {
      ctx.recorder.record({ type: 'wait', workload, attempt, leases: 1, mode: 'exclusive', members: [...lock.paths], timeoutMs: TIMEOUT_MS });
      let handle: MultiLockHandle;
      try {
        handle = await lock.acquire({ timeoutMs: TIMEOUT_MS, signal: ctx.stop });
      } catch (err) {
        ctx.recorder.record({ type: 'wait-fail', workload, attempt, error: errorText(err) });
        continue;
      }
      granted = true;
      const first = handle.handles[0];
      const members = membersOf(lock, handle);
      if (first === undefined || members.length !== lock.paths.length) throw new Error(`a multi-lock handle of ${handle.handles.length} members over ${lock.paths.length} paths`);
      const belief = believe(ctx, { attempt, token: first.fencingToken, leases: 1, mode: 'exclusive', sessionId: first.sessionId, members: members.map((m) => ({ path: m.path, token: String(m.token) })) }, handle.signal);
      try {
        await fenceMembers(ctx, members, belief, seq);
        await hold(ctx, handle.signal);
        // Again at the end: a holder frozen meanwhile wakes up believing, and must be refused.
        await fenceMembers(ctx, members, belief, seq);
      } finally {
        belief.release();
        await handle.release().catch(() => undefined);
      }
    } finally {
      await lock.close();
      if (granted) await pause(ctx.random.int(0, 100), ctx.stop);
      else await backoff(ctx);
    }
  }
}
