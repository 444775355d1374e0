// One service instance taking part in a leader election: it does the leader's work only while
// elected (stopping the moment its signal aborts), tags what it writes with the term's fencing
// token, and on shutdown (Ctrl-C / SIGTERM) steps down so another instance takes over at once.
// Run it in several terminals, then stop the leader:
//   node build/examples/leader.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { LeaderLatch, ZkSession } from 'zk-recipes';

export interface LeaderExampleOptions {
  /** The election's path. */
  path?: string;
  /** This participant's id, as `participants()` shows it. */
  id?: string;
  /** Called once per term of leadership, with the term's fencing token (as a string). */
  onElected?: (id: string, fencingToken: string) => void;
  /** Shutdown: step down and leave the election. */
  signal: AbortSignal;
}

/** One tick of the leader's work (a scheduler, a compactor...), fenced by the term's token. */
async function leaderTick(fencingToken: string, signal: AbortSignal): Promise<void> {
  // e.g. await jobs.schedule(next, { fencingToken }): the store refuses older tokens.
  void fencingToken;
  await sleep(100, undefined, { signal });
}

/** Takes part until `signal` aborts; returns how many terms this instance led. */
export async function main(connectString: string, options: LeaderExampleOptions): Promise<number> {
  const { path = '/examples/elections/scheduler', id = `${hostname()}:${process.pid}`, onElected, signal } = options;
  const session = await ZkSession.connect(connectString);
  const latch = new LeaderLatch(session, path, { participantId: id });
  let terms = 0;
  // Leadership is an event, not a call to wait on: followers simply never get it.
  latch.on('elected', (leadership, token) => {
    terms++;
    const fencingToken = token.toString(); // a bigint does not survive JSON.stringify
    onElected?.(id, fencingToken);
    void (async () => {
      // Work as leader until `leadership` aborts: leadership lost, or we stepped down.
      while (!leadership.aborted) await leaderTick(fencingToken, leadership).catch(() => undefined);
    })();
  });
  latch.on('revoked', (reason) => console.warn(`${id}: no longer leader (${reason.message})`));
  latch.on('error', (err) => console.warn(`${id}: election error, retrying: ${err.message}`));
  try {
    await latch.start(); // resolves once this instance is in the election: participants() lists it
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  } finally {
    await latch.close(); // steps down (the next participant is elected now) and leaves
    await session.close();
  }
  return terms;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  const terms = await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', {
    signal: shutdown.signal,
    onElected: (id, token) => console.log(`${id}: leader now (fencing token ${token}); Ctrl-C to step down`),
  });
  console.log(`terms led: ${terms}`);
}
