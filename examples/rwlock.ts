// One service instance over a catalog kept in ZooKeeper as two znodes that must agree: readers
// share the read lock; a publisher takes the write lock, writes both, then downgrades to a read
// lock to check what it wrote without letting another writer in between. Shutdown (Ctrl-C /
// SIGTERM) ends it cleanly. Run a publisher and a few readers in several terminals:
//   node build/examples/rwlock.js [host:port] [reader|publisher]   (default: ZK_CONNECT or 127.0.0.1:2181, reader)
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { ReadWriteLock, ZkSession } from 'zk-recipes';

export interface RwLockExampleOptions {
  /** A reader reads the catalog; a publisher writes new versions of it. */
  role?: 'reader' | 'publisher';
  /** How many reads or publications. */
  rounds?: number;
  /** The lock's path; the catalog's two znodes live beside it. */
  path?: string;
  /** Shutdown. */
  signal?: AbortSignal;
}

/** What an instance did: reads and how many of them saw the two halves disagree (never). */
export interface RwLockExampleResult {
  reads: number;
  torn: number;
  published: number;
}

export async function main(connectString: string, options: RwLockExampleOptions = {}): Promise<RwLockExampleResult> {
  const { role = 'reader', rounds = 5, path = '/examples/rwlocks/catalog', signal } = options;
  const session = await ZkSession.connect(connectString);
  const rw = new ReadWriteLock(session, path);
  const [a, b] = [`${path}.catalog/a`, `${path}.catalog/b`];
  const read = async (p: string): Promise<string> => (await session.getData(p)).data.toString();
  const result: RwLockExampleResult = { reads: 0, torn: 0, published: 0 };
  try {
    await session.mkdirp(a);
    await session.mkdirp(b);
    for (let i = 0; i < rounds && !signal?.aborted; i++) {
      if (role === 'reader') {
        // Many readers at once; never beside the writer.
        await rw.readLock().runExclusive(
          async () => {
            const [x, y] = await Promise.all([read(a), read(b)]);
            result.reads++;
            if (x !== y) result.torn++;
          },
          { timeoutMs: 10_000, signal },
        );
        await sleep(10);
        continue;
      }
      const write = await rw.writeLock().acquire({ timeoutMs: 10_000, signal });
      let verify;
      try {
        const version = String(Number((await read(a)) || '0') + 1);
        await session.setData(a, version);
        await sleep(20); // readers would see the two halves disagree now, but none can read
        await session.setData(b, version);
        // Downgrade: granted at once, in the write lock's place; no writer can slip in between.
        verify = await rw.readLock().acquire({ timeoutMs: 1000 });
      } finally {
        await write.release();
      }
      try {
        if ((await read(a)) !== (await read(b))) throw new Error('our own publication was overwritten');
        result.published++;
      } finally {
        await verify.release();
      }
    }
  } catch (err) {
    if (!signal?.aborted) throw err;
  } finally {
    await rw.close();
    await session.close();
  }
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  const role = process.argv[3] === 'publisher' ? 'publisher' : 'reader';
  console.log(await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { role, signal: shutdown.signal }));
}
