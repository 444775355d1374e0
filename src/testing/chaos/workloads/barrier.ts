/**
 * The double-barrier workload: every client of the workload meets the others in rounds, one
 * barrier path per time slot, entering and leaving a {@link DoubleBarrier} of `memberCount`
 * (the workload's client count) under the nemesis.
 *
 * @internal
 * @module
 */
import { DoubleBarrier } from '../../../barrier/double-barrier.js';
import { errorText, pause, type Workload } from './common.js';

/** Length of a round: every client tries every round, so a failed round does not desynchronize them. */
const SLOT_MS = 6000;

/** Runs rounds until drained: enter, a short stay, leave; each call bounded by the round's end. */
export const doubleBarrierWorkload: Workload = async (ctx) => {
  const memberCount = ctx.spec.memberCount ?? 1;
  while (!ctx.drain.aborted && !ctx.stop.aborted) {
    // The next slot, on the wall clock all clients share (one machine).
    const slot = Math.floor(Date.now() / SLOT_MS) + 1;
    const startAt = slot * SLOT_MS;
    if (!(await pause(startAt - Date.now() + ctx.random.int(0, 300), ctx.drain))) break;
    const round = `${ctx.spec.path}/round-${slot}`;
    const barrier = new DoubleBarrier(ctx.session, round, { memberCount });
    const left = (): number => Math.max(1, startAt + SLOT_MS - 300 - Date.now());
    let op: 'enter' | 'leave' = 'enter';
    try {
      ctx.recorder.record({ type: 'barrier', phase: 'invoke', workload: ctx.spec.name, op, round });
      await barrier.enter({ timeoutMs: left(), signal: ctx.stop });
      ctx.recorder.record({ type: 'barrier', phase: 'ok', workload: ctx.spec.name, op, round });
      await pause(ctx.random.int(0, 200), ctx.stop);
      op = 'leave';
      ctx.recorder.record({ type: 'barrier', phase: 'invoke', workload: ctx.spec.name, op, round });
      await barrier.leave({ timeoutMs: left(), signal: ctx.stop });
      ctx.recorder.record({ type: 'barrier', phase: 'ok', workload: ctx.spec.name, op, round });
    } catch (err) {
      ctx.recorder.record({ type: 'barrier', phase: 'fail', workload: ctx.spec.name, op, round, error: errorText(err) });
    } finally {
      await barrier.close();
    }
  }
};
