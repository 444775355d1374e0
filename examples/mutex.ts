// A mutex guarding a read-modify-write on shared state, with fencing tokens.
// Run: node build/examples/mutex.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { Mutex, ZkSession } from 'zk-recipes';

/** Three workers increment a counter kept in ZooKeeper; the mutex makes the increments safe. */
export async function main(connectString: string): Promise<number> {
  const sessions = await Promise.all([1, 2, 3].map(() => ZkSession.connect(connectString)));
  const counterPath = `/examples/counter-${process.pid}`;
  await sessions[0]!.mkdirp(counterPath);
  await sessions[0]!.setData(counterPath, '0');
  let lastToken = -1n;

  await Promise.all(
    sessions.map(async (session) => {
      const mutex = new Mutex(session, `/examples/locks/counter-${process.pid}`);
      for (let i = 0; i < 5; i++) {
        await using lock = await mutex.acquire({ timeoutMs: 10_000 });
        // A resource guarded by fencing tokens rejects writes from a holder older than the last.
        if (lock.fencingToken <= lastToken) throw new Error('stale holder');
        lastToken = lock.fencingToken;
        const value = Number((await session.getData(counterPath)).data.toString());
        // The write commits only if our lock node still exists.
        await lock.multi([{ type: 'setData', path: counterPath, data: String(value + 1) }]);
      }
    }),
  );

  const total = Number((await sessions[0]!.getData(counterPath)).data.toString());
  await sessions[0]!.deleteRecursive(counterPath);
  await Promise.all(sessions.map((s) => s.close()));
  return total; // 15
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log('counter =', await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181'));
}
