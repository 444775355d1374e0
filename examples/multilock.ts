// One service instance moving money between accounts kept in ZooKeeper: each transfer holds the
// locks of both accounts at once (a MultiLock, taken in path order, so two transfers in opposite
// directions cannot deadlock), reads both balances and writes both in one transaction that
// commits only while both lock nodes exist. Run it in two terminals: the total never changes.
//   node build/examples/multilock.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { pathToFileURL } from 'node:url';
import { MultiLock, ZkSession } from 'zk-recipes';

export interface MultiLockExampleOptions {
  /** The accounts' directory: one znode per account holding its balance; the locks beside it. */
  path?: string;
  /** How many accounts (created with `opening` each if missing). */
  accounts?: number;
  /** The opening balance of an account created here. */
  opening?: number;
  /** How many transfers this instance makes. */
  transfers?: number;
  /** Shutdown: stop between transfers (or while waiting for the locks). */
  signal?: AbortSignal;
}

/** Makes random transfers between two different accounts; returns how many it made. */
export async function main(connectString: string, options: MultiLockExampleOptions = {}): Promise<number> {
  const { path = '/examples/accounts', accounts = 4, opening = 100, transfers = 10, signal } = options;
  const session = await ZkSession.connect(connectString); // one session per process
  const account = (i: number): string => `${path}/data/account-${i}`;
  let made = 0;
  try {
    await session.mkdirp(`${path}/data`);
    for (let i = 0; i < accounts; i++) await session.create(account(i), { data: String(opening) }).catch(() => undefined); // exists: kept
    while (made < transfers && !signal?.aborted) {
      const from = Math.floor(Math.random() * accounts);
      const to = (from + 1 + Math.floor(Math.random() * (accounts - 1))) % accounts;
      // Given in transfer order; taken in path order whatever the order here.
      const both = new MultiLock(session, [`${path}/locks/account-${from}`, `${path}/locks/account-${to}`]);
      try {
        await both.runExclusive(
          async (_lost, held) => {
            const balance = async (i: number): Promise<number> => Number((await session.getData(account(i))).data.toString());
            const [a, b] = [await balance(from), await balance(to)];
            const amount = Math.min(a, 1 + Math.floor(Math.random() * 10));
            // Committed only while both lock nodes exist: a check of each in the transaction.
            await session.multi([
              ...held.handles.map((h) => ({ type: 'check' as const, path: h.path })),
              { type: 'setData', path: account(from), data: String(a - amount) },
              { type: 'setData', path: account(to), data: String(b + amount) },
            ]);
          },
          { timeoutMs: 10_000, signal },
        );
        made++;
      } finally {
        await both.close();
      }
    }
  } catch (err) {
    if (!signal?.aborted) throw err; // shut down while waiting: not an error
  } finally {
    await session.close();
  }
  return made;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  const made = await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { signal: shutdown.signal });
  console.log(JSON.stringify({ transfers: made }));
}
