/**
 * The group workload: each client is a {@link GroupMember} of one group, again and again: it
 * joins with a new member id (never used again), stays 2-8 s, leaves (closes), and joins again,
 * recording its starts, closes and every view it has. Once the nemesis is done (the drain) the
 * member it has (or the next it starts) stays, and at the stop it waits a settle bound past the
 * drain before leaving, so that the checker can judge every view after the last heal.
 *
 * @internal
 * @module
 */
import { GroupMember } from '../../../group/group-member.js';
import { settleBoundMs } from '../checker/group.js';
import { chaosNow } from '../clock.js';
import { errorText, pause, type WorkloadContext } from './common.js';

/** Joins, stays and leaves until the drain; then stays until the stop and a settle bound after the drain. */
export async function groupWorkload(ctx: WorkloadContext): Promise<void> {
  const workload = ctx.spec.name;
  const settleMs = settleBoundMs(ctx.session.timeoutMs);
  let drainedAt: number | undefined;
  ctx.drain.addEventListener('abort', () => (drainedAt = chaosNow()), { once: true });
  let lastStart = 0;
  // After the drain, the next member joined stays to the end (a few tries, should one fail).
  let lastTries = 3;
  for (let n = 0; lastTries > 0; n++) {
    const last = ctx.drain.aborted;
    if (last) lastTries--;
    const id = `${ctx.name}-g${n}`;
    const member = new GroupMember(ctx.session, ctx.spec.path, id, id);
    member.on('members', (view) => void ctx.recorder.record({ type: 'group-view', workload, member: id, members: [...view.keys()].sort(), synced: member.synced }));
    ctx.recorder.record({ type: 'group', phase: 'invoke', workload, op: 'start', member: id });
    let joined = false;
    try {
      await member.start({ timeoutMs: settleMs, ...(!last && { signal: ctx.stop }) });
      ctx.recorder.record({ type: 'group', phase: 'ok', workload, op: 'start', member: id });
      joined = true;
      lastStart = chaosNow();
    } catch (err) {
      ctx.recorder.record({ type: 'group', phase: 'fail', workload, op: 'start', member: id, error: errorText(err) });
    }
    if (joined) {
      // Stays 2-8 s; the drain ends the stay, and the member then stays on.
      if (!ctx.drain.aborted) await pause(ctx.random.int(2000, 8000), ctx.drain);
      if (ctx.drain.aborted) {
        // The nemesis is done: stay until the stop, then a settle bound past the heal (or our join).
        await untilAborted(ctx.stop);
        await pause(Math.max(drainedAt ?? 0, lastStart) + settleMs + 1000 - chaosNow());
        ctx.recorder.record({ type: 'group-view', workload, member: id, members: [...member.currentMembers().keys()].sort(), synced: member.synced, final: true });
        lastTries = 0;
      }
    }
    ctx.recorder.record({ type: 'group', phase: 'invoke', workload, op: 'close', member: id });
    await member.close();
    ctx.recorder.record({ type: 'group', phase: 'ok', workload, op: 'close', member: id });
    if (lastTries > 0) await pause(ctx.random.int(100, 1000));
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}
