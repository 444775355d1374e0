// A semaphore limiting concurrent use of a resource to maxLeases holders.
// Run: node build/examples/semaphore.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { Semaphore, ZkSession } from 'zk-recipes';

/** Six workers share a resource that serves at most 2 at a time; returns the peak observed. */
export async function main(connectString: string): Promise<number> {
  const sessions = await Promise.all(Array.from({ length: 6 }, () => ZkSession.connect(connectString)));
  let inUse = 0;
  let peak = 0;
  await Promise.all(
    sessions.map(async (session, i) => {
      const pool = new Semaphore(session, `/examples/semaphores/pool-${process.pid}`, { maxLeases: 2, participantId: `worker-${i}` });
      await pool.runExclusive(
        async (signal) => {
          inUse++;
          peak = Math.max(peak, inUse);
          // Pass the signal on: it aborts if the lease is lost (session expired).
          await new Promise((resolve) => setTimeout(resolve, 20, { signal }));
          inUse--;
        },
        { timeoutMs: 10_000 },
      );
      await pool.close();
    }),
  );
  await Promise.all(sessions.map((s) => s.close()));
  return peak; // 2
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log('peak concurrent holders =', await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181'));
}
