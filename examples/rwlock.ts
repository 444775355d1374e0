// A read-write lock over a shared catalog: readers share, the writer is alone, and the writer
// downgrades to a read lock to verify its own write without letting another writer in.
// Run: node build/examples/rwlock.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { ReadWriteLock, ZkSession } from 'zk-recipes';

/** Three readers and one writer; returns the most readers seen holding at once. */
export async function main(connectString: string): Promise<{ maxReaders: number; writerAlone: boolean }> {
  const sessions = await Promise.all([1, 2, 3, 4].map(() => ZkSession.connect(connectString)));
  const path = `/examples/rwlocks/catalog-${process.pid}`;
  let readers = 0;
  let maxReaders = 0;
  let writerAlone = true;
  let catalog = 'v1';

  const writer = new ReadWriteLock(sessions[0]!, path);
  const write = await writer.writeLock().acquire({ timeoutMs: 10_000 });
  const readersDone = Promise.all(
    sessions.slice(1).map(async (session) => {
      const rw = new ReadWriteLock(session, path);
      await rw.readLock().runExclusive(
        async () => {
          readers++;
          maxReaders = Math.max(maxReaders, readers);
          if (catalog !== 'v2') writerAlone = false; // a reader must never see the old catalog here
          await new Promise((r) => setTimeout(r, 20));
          readers--;
        },
        { timeoutMs: 10_000 },
      );
      await rw.close();
    }),
  );
  catalog = 'v2';
  if (readers > 0) writerAlone = false;
  // Downgrade: read lock granted at once in the write lock's place, then release the write lock.
  const read = await writer.readLock().acquire({ timeoutMs: 1000 });
  await write.release();
  if (catalog !== 'v2') throw new Error('lost our own write');
  await read.release();
  await readersDone;
  await writer.close();
  await Promise.all(sessions.map((s) => s.close()));
  return { maxReaders, writerAlone };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181'));
}
