// Service discovery: lookups from a provider, and how soon a registration is seen
// (bench/anchors/CuratorDiscovery.java beside it).
import { ServiceDiscovery, serviceInstance, roundRobin, UriSpec, type ServiceCache, type ServiceInstance } from '../src/discovery/index.js';
import type { ZkSession } from '../src/index.js';
import type { BenchContext } from './context.js';
import { since, type Result } from './metrics.js';

type Payload = Record<string, unknown>;

const SERVICE = 'bench';
const INSTANCES = 10;
const LOOKUPS = 500_000;
const BATCH = 1000;
const URI = new UriSpec('{scheme}://{address}:{port}');

const instance = (id: string): ServiceInstance<Payload> => serviceInstance<Payload>({ name: SERVICE, id, address: '10.0.0.1', port: 8080, payload: { zone: 'a' }, uriSpec: URI });

async function discovery(ctx: BenchContext, session: ZkSession): Promise<ServiceDiscovery<Payload>> {
  const d = new ServiceDiscovery<Payload>(session, { basePath: `${ctx.root}/services` });
  await d.start({ timeoutMs: 30_000 });
  return d;
}

/**
 * 1 session: 10 instances of one service registered, a round-robin provider over them (its
 * cache loaded with all 10), warmed with 50 000 untimed calls. Measured: 500 000
 * `getInstance()` calls; p50/p99 are the mean call time of each batch of 1000, in ms.
 * requests_per_op shows that no call reads the server.
 */
export async function discoveryLookup(ctx: BenchContext): Promise<Result> {
  const [session] = await ctx.sessionsN(1);
  const d = await discovery(ctx, session!);
  for (let i = 0; i < INSTANCES; i++) await d.register(instance(`i${i}`), { timeoutMs: 30_000 });
  const provider = d.serviceProvider(SERVICE, { strategy: roundRobin() });
  await provider.start({ timeoutMs: 30_000 });
  if (provider.getAllInstances().length !== INSTANCES) throw new Error(`discovery_lookup: the provider holds ${provider.getAllInstances().length} instances, not ${INSTANCES}`);
  let sink = 0;
  for (let k = 0; k < 50_000; k++) sink += provider.getInstance()!.id.length;
  const times: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let b = 0; b < LOOKUPS / BATCH; b++) {
    const t = performance.now();
    for (let k = 0; k < BATCH; k++) sink += provider.getInstance()!.id.length;
    times.push(since(t) / BATCH);
  }
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  if (sink === 42) console.error('');
  await d.close();
  return ctx.result(LOOKUPS, seconds, times, before, after);
}

/** Resolves once `cache` holds `id` (present) or not, on its `changed` events; 30 s at most. */
function cacheHolds(cache: ServiceCache<Payload>, id: string, present: boolean): Promise<void> {
  const holds = (): boolean => cache.instances.some((i) => i.id === id) === present;
  if (holds()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cache.off('changed', on);
      reject(new Error(`discovery_register_visible: the cache did not see ${id} ${present ? 'registered' : 'unregistered'} within 30 s`));
    }, 30_000);
    const on = (): void => {
      if (!holds()) return;
      clearTimeout(timer);
      cache.off('changed', on);
      resolve();
    };
    cache.on('changed', on);
  });
}

/**
 * 2 sessions, a discovery on each: a cache of the service on B; each round A registers a new
 * instance (a new id); 100 rounds. Measured: from A's `register()` until B's cache holds it (its
 * `changed` event). Its `unregister()` and B's cache losing it are awaited before the next
 * round, untimed. One untimed round first, as the anchor.
 */
export async function discoveryRegisterVisible(ctx: BenchContext): Promise<Result> {
  const [sa, sb] = await ctx.sessionsN(2);
  const a = await discovery(ctx, sa!);
  const b = await discovery(ctx, sb!);
  const cache = b.serviceCache(SERVICE);
  await cache.start({ timeoutMs: 30_000 });
  const round = async (id: string): Promise<number> => {
    const inst = instance(id);
    const seen = cacheHolds(cache, id, true);
    const t = performance.now();
    await a.register(inst, { timeoutMs: 30_000 });
    await seen;
    const ms = since(t);
    const gone = cacheHolds(cache, id, false);
    await a.unregister(inst, { timeoutMs: 30_000 });
    await gone;
    return ms;
  };
  await round('warm-up');
  const rounds = 100;
  const times: number[] = [];
  const before = await ctx.counters();
  const start = performance.now();
  for (let r = 0; r < rounds; r++) times.push(await round(`instance-${r}`));
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  await b.close();
  await a.close();
  return ctx.result(rounds, seconds, times, before, after);
}
