// A service instance announcing itself: an ephemeral node under the service's directory that
// stays there while the process runs (through reconnects, a new session after expiry, and an
// operator or tool deleting it), carrying the instance's address and status, and gone when the
// process stops. Others list the directory to find the instances.
//   node build/examples/persistent-node.js [host:port] [address]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { hostname } from 'node:os';
import { pathToFileURL } from 'node:url';
import { PersistentNode, ZkSession } from 'zk-recipes';

export interface PersistentNodeExampleOptions {
  /** The service's directory; this instance's node is `<path>/<instance>`. */
  path?: string;
  /** This instance's name (the node's name). */
  instance?: string;
  /** What others need to reach it. */
  address?: string;
  /** Called once the node is there and says `ready`, with its path. */
  onReady?: (path: string) => void;
  /** Shutdown: the node is deleted and the session closed. */
  signal?: AbortSignal;
}

/** Announces this instance until `signal` aborts. */
export async function main(connectString: string, options: PersistentNodeExampleOptions = {}): Promise<void> {
  const { path = '/examples/services/api', instance = `${hostname()}-${process.pid}`, address = 'http://127.0.0.1:8080', onReady, signal } = options;
  const session = await ZkSession.connect(connectString);
  const node = new PersistentNode(session, `${path}/${instance}`, { mode: 'EPHEMERAL', data: JSON.stringify({ address, status: 'starting' }) });
  node.on('deleted', (p) => console.log(`${p} went; creating it again`));
  node.on('error', (err) => console.warn(`announcing ${instance}: ${err.message} (retrying)`));
  try {
    node.start();
    await node.waitForInitialCreate({ timeoutMs: 30_000, signal });
    // Warmed up: the new data is written now and kept by every re-create.
    await node.setData(JSON.stringify({ address, status: 'ready' }), { timeoutMs: 10_000, signal });
    onReady?.(node.actualPath as string);
    await new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    await node.close(); // deletes it: nothing left behind
    await session.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { ...(process.argv[3] && { address: process.argv[3] }), onReady: (p) => console.log(`announced at ${p}`), signal: shutdown.signal });
}
