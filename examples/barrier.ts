// One worker of a batch job: the batch starts when every worker is there (a double barrier's
// enter), each worker does its share, and the batch ends when every worker is done (its leave).
// A coordinator can also hold every worker at a plain barrier (set it, remove it to let them go).
// Run it in three terminals: none starts before the third is up, none finishes before the last.
//   node build/examples/barrier.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { pathToFileURL } from 'node:url';
import { Barrier, DoubleBarrier, ZkSession } from 'zk-recipes';

export interface BarrierExampleOptions {
  /** The batch's double barrier path: every worker uses the same path and `workers`. */
  path?: string;
  /** How many workers the batch has. */
  workers?: number;
  /** A plain barrier to wait at before entering (a coordinator removes it), if any. */
  gate?: string;
  /** This worker's share of the batch; stop when `signal` aborts. */
  work?: (signal: AbortSignal) => Promise<void>;
  /** Shutdown. */
  signal?: AbortSignal;
}

/** Runs one worker's part of the batch; resolves to true when the batch ran to its end. */
export async function main(connectString: string, options: BarrierExampleOptions = {}): Promise<boolean> {
  const { path = '/examples/barriers/batch', workers = 3, gate, work = async () => undefined, signal } = options;
  const session = await ZkSession.connect(connectString);
  const batch = new DoubleBarrier(session, path, { memberCount: workers });
  try {
    // Held until the coordinator removes the gate (at once if it is not set).
    if (gate !== undefined) await new Barrier(session, gate).wait({ timeoutMs: 60_000, signal });
    await batch.enter({ timeoutMs: 60_000, signal }); // every worker is here
    await work(signal ?? new AbortController().signal);
    await batch.leave({ timeoutMs: 60_000, signal }); // every worker is done
    return true;
  } catch (err) {
    if (!signal?.aborted) throw err;
    return false;
  } finally {
    await batch.close(); // a worker that gave up leaves nothing behind
    await session.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  console.log('batch done:', await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { signal: shutdown.signal }));
}
