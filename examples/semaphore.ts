// One service instance sharing a limited resource with its peers: a semaphore lets at most
// `maxLeases` holders in at once across every process on the path, each job gets the lease's
// signal (it aborts if the lease is lost), and shutdown (Ctrl-C / SIGTERM) ends it cleanly.
// Run it in several terminals: never more than two hold a lease at once.
//   node build/examples/semaphore.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Semaphore, ZkSession } from 'zk-recipes';

export interface SemaphoreExampleOptions {
  /** How many jobs this instance runs, one lease each. */
  jobs?: number;
  /** The semaphore's path: every participant uses the same path and `maxLeases`. */
  path?: string;
  /** The job: a call to the limited resource; stop when `signal` aborts. */
  work?: (signal: AbortSignal) => Promise<void>;
  /** Shutdown. */
  signal?: AbortSignal;
}

/** A call to the limited resource (here: 20 ms of waiting), abandoned if the lease is lost. */
async function callResource(signal: AbortSignal): Promise<void> {
  await sleep(20, undefined, { signal });
}

/** Runs `jobs` jobs, each holding one of the path's 2 leases; returns how many ran. */
export async function main(connectString: string, options: SemaphoreExampleOptions = {}): Promise<number> {
  const { jobs = 3, path = '/examples/semaphores/pool', work = callResource, signal } = options;
  const session = await ZkSession.connect(connectString);
  const pool = new Semaphore(session, path, { maxLeases: 2, participantId: `${hostname()}:${process.pid}` });
  let done = 0;
  try {
    for (let i = 0; i < jobs && !signal?.aborted; i++) {
      // The lease is released when the job settles; its signal aborts if the lease is lost.
      await pool.runExclusive((leaseSignal) => work(leaseSignal), { timeoutMs: 10_000, signal });
      done++;
    }
  } catch (err) {
    if (!signal?.aborted) throw err;
  } finally {
    await pool.close();
    await session.close();
  }
  return done;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  console.log('jobs run:', await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { signal: shutdown.signal }));
}
