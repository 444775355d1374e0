/**
 * Workloads of the distributed queue: each client puts items and takes them (at-most-once) or
 * consumes them (at-least-once), on one session.
 *
 * @internal
 * @module
 */
import { OperationTimeoutError } from '../../../errors.js';
import { DistributedQueue } from '../../../queue/queue.js';
import { errorText, pause, type WorkloadContext } from './common.js';

/** Puts unique items (`<client>:<n>`) until the drain phase. */
async function produce(ctx: WorkloadContext, queue: DistributedQueue): Promise<void> {
  for (let n = 0; !ctx.drain.aborted && !ctx.stop.aborted; n++) {
    const item = `${ctx.name}:${n}`;
    ctx.recorder.record({ type: 'put', phase: 'invoke', workload: ctx.spec.name, item });
    try {
      await queue.put(item);
      ctx.recorder.record({ type: 'put', phase: 'ok', workload: ctx.spec.name, item });
    } catch (err) {
      ctx.recorder.record({ type: 'put', phase: 'fail', workload: ctx.spec.name, item, error: errorText(err) });
      await pause(ctx.random.int(50, 300), ctx.stop);
    }
    await pause(ctx.random.int(20, 150), ctx.drain);
  }
}

/** At-most-once: put and take. A take that times out took nothing; any other failure may have lost an item. */
export async function takeWorkload(ctx: WorkloadContext): Promise<void> {
  const queue = new DistributedQueue(ctx.session, ctx.spec.path, { participantId: ctx.name });
  const taker = async (): Promise<void> => {
    while (!ctx.stop.aborted) {
      try {
        const data = await queue.take({ timeoutMs: 2000, signal: ctx.stop });
        ctx.recorder.record({ type: 'take', phase: 'ok', workload: ctx.spec.name, item: data.toString('utf8') });
      } catch (err) {
        if (ctx.stop.aborted || err instanceof OperationTimeoutError) continue;
        ctx.recorder.record({ type: 'take', phase: 'fail', workload: ctx.spec.name, error: errorText(err) });
        await pause(ctx.random.int(50, 300), ctx.stop);
      }
    }
  };
  try {
    await Promise.all([produce(ctx, queue), taker()]);
  } finally {
    await queue.close();
  }
}

/** At-least-once: put and consume; a few handlers throw (the item must come back). */
export async function consumeWorkload(ctx: WorkloadContext): Promise<void> {
  const queue = new DistributedQueue(ctx.session, ctx.spec.path, { participantId: ctx.name });
  const consumer = async (): Promise<void> => {
    while (!ctx.stop.aborted) {
      await queue
        .consume(
          async (data, delivery) => {
            const item = data.toString('utf8');
            const base = { workload: ctx.spec.name, item, redeliveries: delivery.redeliveries, path: delivery.path };
            ctx.recorder.record({ type: 'deliver', ...base });
            const fail = ctx.random.chance(0.05);
            const done = await pause(ctx.random.int(10, 80), delivery.signal);
            if (fail || !done) {
              ctx.recorder.record({ type: 'handled', ...base, outcome: 'threw' });
              throw new Error(fail ? 'chaos: a handler that fails now and then' : 'chaos: our claim was lost');
            }
            ctx.recorder.record({ type: 'handled', ...base, outcome: 'resolved' });
          },
          { signal: ctx.stop, concurrency: 1, onError: () => undefined },
        )
        .catch((err: unknown) => {
          ctx.recorder.record({ type: 'note', level: 'info', message: `consume ended: ${errorText(err)}` });
          return pause(200, ctx.stop);
        });
    }
  };
  try {
    await Promise.all([produce(ctx, queue), consumer()]);
  } finally {
    await queue.close();
  }
}
