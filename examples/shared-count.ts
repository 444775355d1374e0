// One process of a fleet that shares a count: a knob every process follows (here, how many
// workers each one runs), which any process may bump with compare-and-set. Each process watches
// the count (its `changed` events, in zxid order), and adds its own increments with a trySet
// loop: read the copy, write copy + 1 at its version, and on a refusal (someone else wrote
// first) try again with the newer copy. A write whose reply was lost is not retried blindly: it
// may have been applied, so it is reported as unknown.
// Run it in two terminals and watch each follow the other's increments:
//   node build/examples/shared-count.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { pathToFileURL } from 'node:url';
import { OutcomeUnknownError, SharedCount, ZkSession } from 'zk-recipes';

export interface SharedCountExampleOptions {
  /** The count's path: every process of the fleet uses the same one. */
  path?: string;
  /** How many increments this process adds. */
  increments?: number;
  /** Called with every value the count takes (ours and the others'), in order. */
  onChange?: (count: number) => void;
  /** Shutdown. */
  signal?: AbortSignal;
}

/** What one process did. */
export interface SharedCountExampleResult {
  /** Increments applied. */
  applied: number;
  /** Increments whose reply was lost (each may or may not have been applied). */
  unknown: number;
  /** Tries refused because another process wrote first. */
  refused: number;
  /** The count as the ensemble's leader had it at the end. */
  final: number;
}

/** Adds this process's increments to the shared count, following everyone's changes meanwhile. */
export async function main(connectString: string, options: SharedCountExampleOptions = {}): Promise<SharedCountExampleResult> {
  const { path = '/examples/shared/workers', increments = 5, onChange, signal } = options;
  const session = await ZkSession.connect(connectString);
  // Created at 0 if nobody created it yet; otherwise its value is kept.
  const count = new SharedCount(session, path, 0);
  const result: SharedCountExampleResult = { applied: 0, unknown: 0, refused: 0, final: 0 };
  try {
    await count.start({ timeoutMs: 10_000, signal });
    if (onChange) count.on('changed', (v) => onChange(v.value));
    while (result.applied + result.unknown < increments && !signal?.aborted) {
      const seen = count.get(); // local: no request
      try {
        if (await count.trySet(seen.value + 1, seen, { timeoutMs: 10_000, signal })) result.applied++;
        else result.refused++; // someone wrote first; get() has their value now
      } catch (err) {
        if (!(err instanceof OutcomeUnknownError)) throw err;
        result.unknown++; // not retried: it may have been applied
      }
    }
    // The local copy may trail a lagging member; refresh() reads what the leader has.
    result.final = (await count.refresh({ timeoutMs: 10_000, signal })).value;
    return result;
  } finally {
    await count.close(); // its watch is removed from the server
    await session.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  const r = await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { signal: shutdown.signal, onChange: (n) => console.log('workers now', n) });
  console.log(`applied ${r.applied}, refused ${r.refused}, unknown ${r.unknown}; the count is ${r.final}`);
}
