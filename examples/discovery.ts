// Service discovery: instances of an HTTP service register themselves (address, port and a
// payload, in curator-x-discovery's format, so Java services using Curator find them too), and a
// client calls the service through a provider that picks an instance round robin from a live
// cache, never a read per call, and leaves out an instance that keeps failing.
//   node build/examples/discovery.js [host:port] instance   serves and registers until Ctrl-C
//   node build/examples/discovery.js [host:port] client     calls the service 6 times
// (default host:port: ZK_CONNECT or 127.0.0.1:2181)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { ZkSession } from 'zk-recipes';
import { roundRobin, ServiceDiscovery, serviceInstance } from 'zk-recipes/discovery';

/** What each instance publishes beside its address. */
export interface ApiPayload {
  zone: string;
}

export interface DiscoveryExampleOptions {
  /** Where the services are registered (Curator's base path). */
  basePath?: string;
  /** This instance's id (default: a random UUID). */
  id?: string;
  /** Called once the instance serves and is registered. */
  onReady?: (id: string, port: number) => void;
  /** Shutdown: the instance unregisters, stops serving and closes its session. */
  signal?: AbortSignal;
}

/** Serves `GET /` (answering with its id) and stays registered as service `api` until `signal` aborts. */
export async function instance(connectString: string, options: DiscoveryExampleOptions = {}): Promise<void> {
  const { basePath = '/examples/services', onReady, signal } = options;
  const http = createServer((_req, res) => res.end(me.id));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const me = serviceInstance<ApiPayload>({
    name: 'api',
    ...(options.id !== undefined && { id: options.id }),
    address: '127.0.0.1',
    port: (http.address() as AddressInfo).port,
    payload: { zone: 'eu-1' },
    uriSpec: '{scheme}://{address}:{port}/',
  });
  const session = await ZkSession.connect(connectString);
  const discovery = new ServiceDiscovery<ApiPayload>(session, { basePath });
  discovery.on('error', (err) => console.warn(`keeping ${me.id} registered: ${err.message} (retrying)`));
  try {
    await discovery.start({ timeoutMs: 10_000, signal });
    // Kept there through reconnects and a new session; removed by close().
    await discovery.register(me, { timeoutMs: 10_000, signal });
    onReady?.(me.id, me.port as number);
    await new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    await discovery.close(); // unregisters: nothing left behind
    await session.close();
    await new Promise((resolve) => http.close(resolve));
  }
}

/** Calls the `api` service `calls` times; returns the id that answered each call. */
export async function client(connectString: string, options: { basePath?: string; calls?: number; signal?: AbortSignal } = {}): Promise<string[]> {
  const { basePath = '/examples/services', calls = 6, signal } = options;
  const session = await ZkSession.connect(connectString);
  try {
    await using discovery = new ServiceDiscovery<ApiPayload>(session, { basePath });
    await discovery.start({ timeoutMs: 10_000, signal });
    await using provider = discovery.serviceProvider('api', { strategy: roundRobin(), downInstancePolicy: { errorThreshold: 2, timeoutMs: 30_000 } });
    await provider.start({ timeoutMs: 10_000, signal });
    const answers: string[] = [];
    while (answers.length < calls) {
      const target = provider.getInstance(); // from memory: no request to ZooKeeper
      if (target === undefined) throw new Error('no instance of api is registered');
      try {
        const res = await fetch(target.uriSpec?.build(target) ?? `http://${target.address}:${target.port}/`, { signal: AbortSignal.timeout(2000) });
        answers.push(await res.text());
      } catch (err) {
        provider.noteError(target); // twice, and it is left out for 30 s
        console.warn(`${target.id}: ${(err as Error).message}`);
      }
    }
    return answers;
  } finally {
    await session.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const connect = process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181';
  if (process.argv[3] === 'client') {
    console.log((await client(connect)).join('\n'));
  } else {
    const shutdown = new AbortController();
    process.once('SIGINT', () => shutdown.abort());
    process.once('SIGTERM', () => shutdown.abort());
    await instance(connect, { onReady: (id, port) => console.log(`api instance ${id} on 127.0.0.1:${port}`), signal: shutdown.signal });
  }
}
