// One service instance with a mutex: one ZooKeeper session for the whole process, the lock
// around each read-modify-write of a counter kept in ZooKeeper, fencing tokens passed on as
// strings, and a clean shutdown (Ctrl-C / SIGTERM) that releases the lock and ends the session.
// Run it in two terminals and watch them take turns:
//   node build/examples/mutex.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { pathToFileURL } from 'node:url';
import { Mutex, ZkSession } from 'zk-recipes';

export interface MutexExampleOptions {
  /** How many increments this instance makes. */
  increments?: number;
  /** The counter's znode; the lock lives beside it. */
  path?: string;
  /** Shutdown: stop between increments (or while waiting for the lock). */
  signal?: AbortSignal;
}

/** Increments the counter under the mutex; returns the fencing token of every increment made. */
export async function main(connectString: string, options: MutexExampleOptions = {}): Promise<string[]> {
  const { increments = 5, path = '/examples/counter', signal } = options;
  const session = await ZkSession.connect(connectString); // one session per process
  const mutex = new Mutex(session, `${path}-lock`);
  const tokens: string[] = [];
  try {
    await session.mkdirp(path);
    for (let i = 0; i < increments && !signal?.aborted; i++) {
      await using lock = await mutex.acquire({ timeoutMs: 10_000, signal });
      const value = Number((await session.getData(path)).data.toString() || '0');
      // Committed only while our lock node exists: a transaction with a check of it.
      await lock.multi([{ type: 'setData', path, data: String(value + 1) }]);
      // A resource outside ZooKeeper gets the token with each write and refuses older ones.
      // bigint does not survive JSON.stringify: send it as a string (BigInt(s) to compare).
      tokens.push(lock.fencingToken.toString());
    } // the lock is released here, at the end of each iteration
  } catch (err) {
    if (!signal?.aborted) throw err; // shut down while waiting: not an error
  } finally {
    await mutex.close(); // gives up a pending acquire, releases what is still held
    await session.close(); // our ephemeral nodes go at once, not after the session timeout
  }
  return tokens;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  const tokens = await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { signal: shutdown.signal });
  console.log(JSON.stringify({ increments: tokens.length, fencingTokens: tokens }));
}
