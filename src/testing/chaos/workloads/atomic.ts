/**
 * The atomic workload: every flow adds 1 (now and then 2 or 3) to one {@link AtomicNumber}
 * under the nemesis, half of the clients with promotion to a lock on the workload's path, each
 * call bounded by a short deadline. Every call is recorded with what it claims: acknowledged
 * (with the value found and written), certainly not applied, or unknown.
 *
 * @internal
 * @module
 */
import { AtomicNumber } from '../../../atomic/atomic-number.js';
import { OutcomeUnknownError } from '../../../errors.js';
import { errorText, inFlows, pause, type Workload } from './common.js';

/** Runs updates until drained, with a short random pause between them. */
export const atomicWorkload: Workload = (ctx) =>
  inFlows(ctx, async (flow) => {
    const numberPath = ctx.spec.numberPath;
    if (numberPath === undefined) throw new Error(`atomic workload ${ctx.spec.name}: no numberPath`);
    // Odd clients promote to the lock after a few optimistic attempts; even ones only retry.
    const promote = Number(/(\d+)$/.exec(ctx.name)?.[1] ?? 0) % 2 === 1;
    const number = new AtomicNumber(flow.session, numberPath, {
      retry: { maxRetries: promote ? 3 : 20, baseDelayMs: 5, maxDelayMs: 200 },
      ...(promote && { promoteToLock: { lockPath: ctx.spec.path, timeoutMs: 3000 } }),
    });
    try {
      for (let i = 0; !ctx.drain.aborted && !ctx.stop.aborted; i++) {
        const delta = flow.random.int(0, 9) === 0 ? flow.random.int(2, 3) : 1;
        const op = `${ctx.name}-${flow.flow}${i}`;
        ctx.recorder.record({ type: 'atomic', phase: 'invoke', workload: ctx.spec.name, op, delta });
        try {
          const r = await number.add(delta, { timeoutMs: flow.random.int(1000, 6000), signal: ctx.stop });
          ctx.recorder.record({ type: 'atomic', phase: 'ok', workload: ctx.spec.name, op, delta, pre: String(r.preValue), post: String(r.postValue), promoted: r.stats.promotedTries > 0 });
        } catch (err) {
          ctx.recorder.record({ type: 'atomic', phase: err instanceof OutcomeUnknownError ? 'info' : 'fail', workload: ctx.spec.name, op, delta, error: errorText(err) });
        }
        if (!(await pause(flow.random.int(0, 50), ctx.drain))) break;
      }
    } finally {
      await number.close();
    }
  });
