// A work queue: one producer, two at-least-once consumers; a failing job is redelivered.
// Run: node build/examples/queue.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { DistributedQueue, ZkSession } from 'zk-recipes';

/** Returns how many jobs were handled successfully and how many deliveries were retries. */
export async function main(connectString: string): Promise<{ handled: number; retries: number }> {
  const sessions = await Promise.all([1, 2, 3].map(() => ZkSession.connect(connectString)));
  const path = `/examples/queues/jobs-${process.pid}`;
  const producer = new DistributedQueue(sessions[0]!, path);
  await producer.putAll(Array.from({ length: 10 }, (_, i) => `job-${i}`));

  let handled = 0;
  let retries = 0;
  let failedOnce = false;
  const stop = new AbortController();
  const consumers = sessions.slice(1).map((session) =>
    new DistributedQueue(session, path).consume(
      async (data, { redeliveries }) => {
        if (redeliveries > 0) retries++;
        if (data.toString() === 'job-3' && !failedOnce) {
          failedOnce = true;
          throw new Error('transient failure'); // released: delivered again
        }
        if (++handled === 10) stop.abort();
      },
      { signal: stop.signal, onError: () => undefined },
    ),
  );
  await Promise.all(consumers);
  await sessions[0]!.deleteRecursive(path);
  await Promise.all(sessions.map((s) => s.close()));
  return { handled, retries }; // { handled: 10, retries: 1 }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181'));
}
