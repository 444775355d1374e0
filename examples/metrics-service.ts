// One service instance that exposes its locks' metrics: prom-client series in a registry of
// its own, served on /metrics (node:http), fed by zk-recipes/metrics while workers take turns
// on a mutex (each job under the lock with a deadline, a best-effort job only when the lock is free).
// Run it and scrape it:
//   node build/examples/metrics-service.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
//   curl -s localhost:9464/metrics | grep zk_recipes_
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import * as promClient from 'prom-client';
import { Mutex, ZkSession } from 'zk-recipes';
import { prometheusMetrics } from 'zk-recipes/metrics';

export interface MetricsServiceOptions {
  /** The lock's path. */
  path?: string;
  /** The HTTP port of /metrics (0: any free one, see `onListening`). */
  port?: number;
  /** Workers taking turns on the lock. */
  workers?: number;
  /** How long a job holds the lock, ms. */
  holdMs?: number;
  /** How long a worker waits for the lock before giving this job up, ms. */
  timeoutMs?: number;
  /** Where a failed job is told (default: stderr). */
  log?: (line: string) => void;
  /** Told the metrics URL once the service listens. */
  onListening?: (url: string) => void;
  /** Shutdown. */
  signal?: AbortSignal;
}

/** Serves /metrics and runs the workers until `signal` aborts; resolves once everything is closed. */
export async function main(connectString: string, options: MetricsServiceOptions = {}): Promise<void> {
  const { path = '/examples/metrics/report', port = 9464, workers = 3, holdMs = 50, timeoutMs = 1000, log = console.error, onListening, signal = new AbortController().signal } = options;
  // The service's own registry (not prom-client's global one), created before the session so
  // that its states are counted too.
  // (promClient.collectDefaultMetrics({ register: registry }) adds the process's own series.)
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client: promClient, registry });
  const http = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  onListening?.(`http://127.0.0.1:${(http.address() as AddressInfo).port}/metrics`);

  let session: ZkSession | undefined;
  const worker = async (lock: Mutex): Promise<void> => {
    while (!signal.aborted) {
      try {
        // The job stops when the lock is lost (its signal aborts): zk_recipes_lock_lost_total.
        await lock.runExclusive((lockSignal) => sleep(holdMs, undefined, { signal: lockSignal }), { timeoutMs, signal });
        // A best-effort job, only if nobody holds the lock now: zk_recipes_lock_miss_total.
        const spare = await lock.tryAcquire();
        await spare?.release();
      } catch (err) {
        if (signal.aborted) break;
        // A timeout, a lost lock or a failure: counted by the metrics; back off, go on.
        log(`job failed: ${(err as Error).message}`);
        await sleep(100, undefined, { signal }).catch(() => undefined);
      }
    }
  };
  try {
    session = await ZkSession.connect(connectString, { signal });
    // One Mutex per worker: each has a node of its own in the lock's queue.
    const locks = Array.from({ length: workers }, () => new Mutex(session as ZkSession, path));
    await Promise.all(locks.map(worker)).finally(() => Promise.all(locks.map((l) => l.close())));
  } finally {
    await session?.close();
    metrics.close();
    await new Promise((resolve) => http.close(resolve));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', { signal: shutdown.signal, onListening: (url) => console.log(`metrics on ${url}`) });
}
