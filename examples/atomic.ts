// One instance of an order service that numbers its orders from a shared AtomicNumber: every
// acknowledged increment's postValue is unique across every instance (and every Curator
// DistributedAtomicLong on the same path). Under heavy contention it promotes to a lock.
// Run it in several terminals at once: the numbers never repeat.
//   node build/examples/atomic.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { pathToFileURL } from 'node:url';
import { AtomicNumber, OutcomeUnknownError, RetriesExhaustedError, ZkSession } from 'zk-recipes';

export interface AtomicExampleOptions {
  /** The order counter's node: every instance uses the same. */
  path?: string;
  /** The lock taken when the optimistic attempts keep losing (Curator's PromotedToLock path). */
  lockPath?: string;
  /** How many orders this instance numbers. */
  orders?: number;
  /** Shutdown. */
  signal?: AbortSignal;
}

/** Numbers `orders` orders; resolves to their numbers, in the order they were given. */
export async function main(connectString: string, options: AtomicExampleOptions = {}): Promise<bigint[]> {
  const { path = '/examples/orders/next', lockPath = '/examples/orders/lock', orders = 10, signal } = options;
  const session = await ZkSession.connect(connectString);
  const counter = new AtomicNumber(session, path, {
    retry: { maxRetries: 5, baseDelayMs: 5, maxDelayMs: 200 },
    promoteToLock: { lockPath, timeoutMs: 10_000 },
  });
  const numbers: bigint[] = [];
  try {
    while (numbers.length < orders && !signal?.aborted) {
      try {
        const { postValue } = await counter.increment({ timeoutMs: 15_000, signal });
        numbers.push(postValue);
      } catch (err) {
        // A lost reply: the number may have been taken, or not. Asking again can only leave a
        // gap in the numbering, never give a number twice, so for order numbers it is safe. (A
        // counter of events must not do this: it would count one event twice.)
        if (err instanceof OutcomeUnknownError) continue;
        // Every attempt lost, under the lock too: nothing was taken; try again shortly.
        if (err instanceof RetriesExhaustedError) continue;
        if (signal?.aborted) break;
        throw err;
      }
    }
    return numbers;
  } finally {
    await counter.close();
    await session.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  const numbers = await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { signal: shutdown.signal });
  console.log('order numbers:', numbers.map(String).join(', '));
}
