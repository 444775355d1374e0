// One service instance that reads its configuration from ZooKeeper through a TreeCache: every
// read is local (no round trip), every change arrives as an event, and after a disconnect the
// cache re-reads the tree, so nothing changed meanwhile is missed. It reports each value it sees.
//   node build/examples/cache.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
// then, from another terminal: zkCli.sh set /examples/config/greeting hello
import { pathToFileURL } from 'node:url';
import { TreeCache, ZkSession, type CachedNode } from 'zk-recipes';

export interface CacheExampleOptions {
  /** The configuration's root path. */
  path?: string;
  /** Called with each setting's new value (undefined once deleted), in the order the server made them. */
  onSetting?: (name: string, value: string | undefined) => void;
  /** Called when the copy is known complete: first load, and after every re-read. */
  onSynced?: (settings: Record<string, string>) => void;
  /** Shutdown. */
  signal: AbortSignal;
}

/** Follows the configuration until `signal` aborts; returns the settings as last held. */
export async function main(connectString: string, options: CacheExampleOptions): Promise<Record<string, string>> {
  const { path = '/examples/config', onSetting, onSynced, signal } = options;
  const session = await ZkSession.connect(connectString);
  const config = new TreeCache(session, path, { maxDepth: 1 });
  const name = (node: CachedNode): string => node.path.slice(path.length + 1);
  const settings = (): Record<string, string> => Object.fromEntries([...config].filter((n) => n.path !== path).map((n) => [name(n), n.data?.toString() ?? '']));
  config.on('added', (node) => node.path !== path && onSetting?.(name(node), node.data?.toString()));
  config.on('changed', (node) => node.path !== path && onSetting?.(name(node), node.data?.toString()));
  config.on('removed', (node) => node.path !== path && onSetting?.(name(node), undefined));
  config.on('initialized', () => onSynced?.(settings()));
  config.on('resynced', () => onSynced?.(settings()));
  config.on('stale', () => console.warn('config: disconnected, values may be behind'));
  config.on('error', (err) => console.warn(`config: ${err.message}`));
  try {
    await config.start({ timeoutMs: 10_000, signal }); // the whole tree is loaded: reads are local from here
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return settings();
  } finally {
    await config.close(); // removes its watch from the server
    await session.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', {
    signal: shutdown.signal,
    onSetting: (name, value) => console.log(value === undefined ? `${name} removed` : `${name} = ${value}`),
    onSynced: (settings) => console.log(`in sync: ${JSON.stringify(settings)}`),
  });
}
