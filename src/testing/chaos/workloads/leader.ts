/**
 * Workloads of leader election: LeaderLatch terms and LeaderSelector terms, each leader
 * writing the fenced register with its term's token. Each client runs two flows
 * ({@link inFlows}), each with its own latch or selector on the client's session.
 *
 * @internal
 * @module
 */
import { LeaderLatch } from '../../../leader/latch.js';
import { LeaderSelector } from '../../../leader/selector.js';
import { attemptName, believe, errorText, fenceAgain, inFlows, participantId, pause, type Belief, type FlowContext, type WorkloadContext } from './common.js';

/** How long a leader keeps leading before it steps down. */
function termMs(ctx: WorkloadContext): number {
  return ctx.random.chance(0.2) ? ctx.random.int(1500, 4000) : ctx.random.int(100, 800);
}

/** Writes the register as leader (only while the term is believed). */
async function fence(ctx: WorkloadContext, belief: Belief, token: bigint, value: number): Promise<void> {
  if (ctx.spec.register !== undefined && belief.active) await ctx.resource.write(ctx.spec.register, token, value).catch(() => undefined);
}

/**
 * LeaderLatch: join, lead for a while when elected (possibly several terms, if leadership is
 * lost and regained), step down by closing the latch, join again later.
 */
export function latchWorkload(ctx: WorkloadContext): Promise<void> {
  return inFlows(ctx, latchFlow);
}

/** One flow of a latch client: its own latches, one after another. */
async function latchFlow(ctx: FlowContext): Promise<void> {
  let terms = 0;
  while (!ctx.stop.aborted) {
    const latch = new LeaderLatch(ctx.session, ctx.spec.path, { participantId: participantId(ctx) });
    const stepDown = new AbortController();
    let current: Belief | undefined;
    const waiting = (): void => void ctx.recorder.record({ type: 'wait', workload: ctx.spec.name, attempt: attemptName(ctx, terms), leases: 1, mode: 'exclusive' });
    latch.on('elected', (signal, token) => {
      const attempt = attemptName(ctx, terms++);
      const belief = believe(ctx, { attempt, token, leases: 1, mode: 'exclusive', sessionId: ctx.session.sessionId }, signal);
      current = belief;
      signal.addEventListener('abort', () => {
        if (!stepDown.signal.aborted && !ctx.stop.aborted) waiting();
      }, { once: true });
      void fence(ctx, belief, token, terms);
      void pause(termMs(ctx), signal).then(async (served) => {
        await fenceAgain(ctx, token, belief, { n: terms });
        if (served) stepDown.abort();
      });
    });
    latch.on('error', () => undefined);
    waiting();
    latch.start();
    await pause(ctx.random.int(20_000, 40_000), AbortSignal.any([stepDown.signal, ctx.stop]));
    current?.release();
    await latch.close().catch(() => undefined);
    await pause(ctx.random.int(0, 300), ctx.stop);
  }
}

/** LeaderSelector with requeue: each term runs a callback that leads until it returns. */
export function selectorWorkload(ctx: WorkloadContext): Promise<void> {
  return inFlows(ctx, selectorFlow);
}

/** One flow of a selector client, with its own LeaderSelector. */
async function selectorFlow(ctx: FlowContext): Promise<void> {
  const selector = new LeaderSelector(ctx.session, ctx.spec.path, { participantId: participantId(ctx) });
  let terms = 0;
  const waiting = (): void => void ctx.recorder.record({ type: 'wait', workload: ctx.spec.name, attempt: attemptName(ctx, terms), leases: 1, mode: 'exclusive' });
  try {
    while (!ctx.stop.aborted) {
      waiting();
      try {
        await selector.run(
          async (signal, term) => {
            const attempt = attemptName(ctx, terms++);
            const belief = believe(ctx, { attempt, token: term.fencingToken, leases: 1, mode: 'exclusive', sessionId: ctx.session.sessionId }, signal);
            await fence(ctx, belief, term.fencingToken, terms);
            await pause(termMs(ctx), signal);
            await fenceAgain(ctx, term.fencingToken, belief, { n: terms });
            belief.release();
          },
          { requeue: false, signal: ctx.stop },
        );
      } catch (err) {
        if (!ctx.stop.aborted) ctx.recorder.record({ type: 'wait-fail', workload: ctx.spec.name, attempt: attemptName(ctx, terms), error: errorText(err) });
      }
      await pause(ctx.random.int(0, 200), ctx.stop);
    }
  } finally {
    await selector.close();
  }
}
