// One service instance working off a queue: it puts jobs (a producer) and/or handles them
// at least once (a consumer: a job whose handler throws, or whose consumer dies, is delivered
// again), and on shutdown (Ctrl-C / SIGTERM) stops taking work, lets running jobs finish and
// ends its session. Run a producer and a few consumers in several terminals:
//   node build/examples/queue.js [host:port] [produce N]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { pathToFileURL } from 'node:url';
import { DistributedQueue, ZkSession, type Delivery } from 'zk-recipes';

export interface QueueExampleOptions {
  /** The queue's path. */
  path?: string;
  /** Jobs this instance puts (one transaction) before it consumes. */
  produce?: readonly string[];
  /** Handles one job; throw to have it delivered again. Without it, the instance only produces. */
  handle?: (job: string, delivery: Delivery) => Promise<void>;
  /** Shutdown: stop consuming. */
  signal?: AbortSignal;
}

/** Puts `produce`, then consumes until `signal` aborts; returns how many jobs it handled. */
export async function main(connectString: string, options: QueueExampleOptions = {}): Promise<number> {
  const { path = '/examples/queues/jobs', produce = [], handle, signal } = options;
  const session = await ZkSession.connect(connectString);
  const queue = new DistributedQueue(session, path);
  let handled = 0;
  try {
    if (produce.length > 0) await queue.putAll(produce, { timeoutMs: 10_000 });
    if (handle) {
      await queue.consume(
        async (data, delivery) => {
          await handle(data.toString(), delivery); // idempotent: a job may come again
          handled++;
        },
        {
          signal,
          onError: (err, item) => console.warn(`job ${item.path} failed (delivery ${item.redeliveries + 1}), it comes again:`, err),
        },
      );
    }
  } catch (err) {
    if (!signal?.aborted) throw err;
  } finally {
    await queue.close();
    await session.close();
  }
  return handled;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  const produce = process.argv[3] === 'produce' ? Array.from({ length: Number(process.argv[4] ?? 10) }, (_, i) => `job-${i}`) : [];
  const handled = await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', {
    produce,
    signal: shutdown.signal,
    handle: produce.length > 0 ? undefined : async (job) => console.log('handled', job),
  });
  console.log(`handled ${handled} jobs`);
}
