// ServiceDiscovery against real Apache curator-x-discovery (Debian's 5.4 jars, driven by
// test/java/CuratorDiscoveryAgent, which builds its discovery with the builder's defaults: Map
// payloads, JsonInstanceSerializer in its compatible mode, as Java shops do). A Java instance is
// found by ours with every field, ours by Java's ServiceDiscovery and ServiceProvider; updates
// and removals are seen both ways; a Java session expiry takes its instance out of our cache
// until Curator registers it again. Without Java or the Curator jars these tests fail
// (locateCurator names the packages), never skip.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { curatorPayload, random, roundRobin, ServiceDiscovery, serviceInstance, sticky, type ServiceInstance } from '../../src/discovery/index.js';
import type { ZkSession } from '../../src/client/index.js';
import { waitFor } from '../../src/testing/index.js';
import { CuratorDiscoveryAgent, type CuratorInstance } from '../java/curator-discovery.js';
import { ServerFixture, uniquePath } from '../helpers.js';

type Payload = Record<string, unknown>;

const fx = new ServerFixture();
let agent: CuratorDiscoveryAgent;
after(async () => {
  await agent?.shutdown();
});

let handles = 0;
/** A fresh handle name for the agent (discoveries, providers, caches). */
const handle = (kind: string): string => `${kind}${++handles}`;

/** Our instance as the fields Curator's side prints (payloadClass and uri left to the caller). */
function fieldsOf(i: ServiceInstance<unknown>): Omit<CuratorInstance, 'payloadClass' | 'uri'> {
  return {
    name: i.name,
    id: i.id,
    address: i.address,
    port: i.port,
    sslPort: i.sslPort,
    payload: i.payload as Payload | null,
    registrationTimeUTC: i.registrationTimeUTC,
    serviceType: i.serviceType,
    enabled: i.enabled,
    uriParts: i.uriSpec === null ? null : i.uriSpec.parts.map((p) => ({ value: p.value, variable: p.variable })),
  };
}

const withoutExtras = ({ payloadClass: _c, uri: _u, ...rest }: CuratorInstance): Omit<CuratorInstance, 'payloadClass' | 'uri'> => rest;

/** A started discovery of ours; with `javaClass`, its codec is curatorPayload(javaClass). */
async function startedDiscovery(session: ZkSession, basePath: string, javaClass?: string): Promise<ServiceDiscovery<Payload>> {
  const d = new ServiceDiscovery<Payload>(session, javaClass === undefined ? { basePath } : { basePath, codec: curatorPayload<Payload>(javaClass) });
  await d.start({ timeoutMs: 10_000 });
  return d;
}

/** Waits until `list()` shows exactly `ids` (sorted) and `test` holds of it. */
async function shows<P>(list: () => readonly ServiceInstance<P>[], ids: readonly string[], what: string, test: (l: readonly ServiceInstance<P>[]) => boolean = () => true): Promise<readonly ServiceInstance<P>[]> {
  const want = [...ids].sort().join(',');
  await waitFor(() => list().map((i) => i.id).join(',') === want && test(list()), { timeoutMs: 15_000, message: `${what} shows [${want}] (shows [${list().map((i) => i.id).join(',')}])` });
  return list();
}

describe('ServiceDiscovery with Curator curator-x-discovery', () => {
  before(async () => {
    agent ??= await CuratorDiscoveryAgent.start(fx.server.connectString);
  });

  test('a Java instance is found by ours with every field; the payload keeps or drops @class by codec', async () => {
    const base = uniquePath('interop-discovery-java');
    const d = handle('d');
    await agent.open(d, base);
    const full = await agent.register(d, {
      name: 'orders',
      id: 'java-1',
      address: '10.1.2.3',
      port: 8080,
      sslPort: 8443,
      payload: { zone: 'eu-west', weight: 3, tags: ['a', 'b'], nested: { on: true } },
      registrationTimeUTC: 1_700_000_000_123,
      serviceType: 'DYNAMIC',
      uriSpec: '{scheme}://{address}:{ssl-port}/orders/{id}',
    });
    // No payload, no sslPort (null, not a number), no uriSpec; and enabled false, which
    // Curator's compatible writer does not write (so every reader, Curator's too, sees true).
    const bare = await agent.register(d, { name: 'orders', id: 'java-2', address: 'host-b', port: 9090, registrationTimeUTC: 1_700_000_000_456, enabled: false });

    // The node as Curator wrote it: its JSON, its @class, no "enabled".
    const [s] = await fx.sessionsApart(1);
    const raw = JSON.parse((await s!.getData(`${base}/orders/java-1`)).data.toString('utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(raw), ['name', 'id', 'address', 'port', 'sslPort', 'payload', 'registrationTimeUTC', 'serviceType', 'uriSpec']);
    assert.equal((raw.payload as Payload)['@class'], 'java.util.LinkedHashMap');
    const rawBare = JSON.parse((await s!.getData(`${base}/orders/java-2`)).data.toString('utf8')) as Record<string, unknown>;
    assert.equal(rawBare.sslPort, null);
    assert.equal(rawBare.payload, null);
    assert.equal(rawBare.uriSpec, null);
    assert.equal('enabled' in rawBare, false);

    // Ours with the default codec (JSON): the payload as written, @class included.
    await using ours = await startedDiscovery(s!, base);
    assert.deepEqual(await ours.queryForNames({ timeoutMs: 10_000 }), ['orders']);
    const found = await ours.queryForInstances('orders', { timeoutMs: 10_000 });
    assert.deepEqual(
      found.map((i) => i.id),
      ['java-1', 'java-2'],
    );
    const [one, two] = found as [ServiceInstance<Payload>, ServiceInstance<Payload>];
    assert.deepEqual(fieldsOf(one), { ...withoutExtras(full), payload: { '@class': 'java.util.LinkedHashMap', ...(full.payload as Payload) } });
    assert.equal(one.sslPort, 8443);
    assert.equal(one.registrationTimeUTC, 1_700_000_000_123);
    assert.equal(one.serviceType, 'DYNAMIC');
    // The template fills in as Curator's buildUriSpec() does (https: an sslPort is set).
    assert.equal(full.uri, 'https://10.1.2.3:8443/orders/java-1');
    assert.equal(one.uriSpec?.build(one), full.uri);
    assert.deepEqual(fieldsOf(two), { ...withoutExtras(bare), enabled: true });
    assert.equal(bare.enabled, false, 'Curator held it disabled');
    assert.equal(two.sslPort, null);
    assert.equal(two.payload, null);
    assert.equal(two.uriSpec, null);
    // Curator's own reader agrees: enabled was not written, so it reads true too.
    const curatorReads = await agent.queryForInstances(d, 'orders');
    assert.deepEqual(
      curatorReads.map((i) => [i.id, i.enabled, i.sslPort, i.payloadClass]),
      [
        ['java-1', true, 8443, 'java.util.LinkedHashMap'],
        ['java-2', true, null, null],
      ],
    );
    assert.deepEqual(fieldsOf((await ours.queryForInstance('orders', 'java-1', { timeoutMs: 10_000 })) as ServiceInstance<unknown>), fieldsOf(one));
    assert.equal(await ours.queryForInstance('orders', 'java-3', { timeoutMs: 10_000 }), undefined);

    // With curatorPayload (the Java class named): @class dropped on reading.
    await using typed = await startedDiscovery(s!, base, 'java.util.LinkedHashMap');
    const typedOne = await typed.queryForInstance('orders', 'java-1', { timeoutMs: 10_000 });
    assert.deepEqual(typedOne?.payload, full.payload);

    // A cache and a provider of ours over Java's instances.
    const cache = ours.serviceCache('orders');
    await cache.start({ timeoutMs: 10_000 });
    assert.deepEqual(
      cache.instances.map((i) => fieldsOf(i)),
      [fieldsOf(one), fieldsOf(two)],
    );
    const provider = ours.serviceProvider('orders', { strategy: roundRobin() });
    await provider.start({ timeoutMs: 10_000 });
    assert.deepEqual(new Set([0, 1, 2, 3].map(() => provider.getInstance()?.id)), new Set(['java-1', 'java-2']));

    await agent.close(d);
    await shows(() => cache.instances, [], 'our cache after Curator closed its discovery');
    await ours.close();
    await typed.close();
    assert.deepEqual(await fx.children(`${base}/orders`), []);
    await fx.waitNoWatches(s!, base);
  });

  test("ours is found by Java's ServiceDiscovery and ServiceProvider (getInstance returns ours, strategies, noteError)", async () => {
    const base = uniquePath('interop-discovery-ours');
    const [s] = await fx.sessionsApart(1);
    await using ours = await startedDiscovery(s!, base);
    const n1 = serviceInstance<Payload>({
      name: 'billing',
      id: 'node-1',
      address: '10.9.8.7',
      port: 3000,
      payload: { region: 'us', shards: [1, 2], meta: { v: 2 } },
      registrationTimeUTC: 1_700_000_111_000,
      uriSpec: '{scheme}://{address}:{port}/v1',
    });
    const n2 = serviceInstance<Payload>({ name: 'billing', id: 'node-2', address: '10.9.8.8', port: 3001, sslPort: 3443, serviceType: 'STATIC', registrationTimeUTC: 1_700_000_222_000 });
    const off = serviceInstance<Payload>({ name: 'billing', id: 'node-3', address: '10.9.8.9', port: 3002, enabled: false });
    for (const i of [n1, n2, off]) await ours.register(i, { timeoutMs: 10_000 });

    const d = handle('d');
    await agent.open(d, base);
    assert.deepEqual(await agent.queryForNames(d), ['billing']);
    const seen = await agent.queryForInstances(d, 'billing');
    assert.deepEqual(
      seen.map((i) => withoutExtras(i)),
      [n1, n2, off].map((i) => fieldsOf(i)),
    );
    // Jackson made a Map of our plain-JSON payload (no @class needed); null stayed null.
    assert.deepEqual(
      seen.map((i) => i.payloadClass),
      ['java.util.LinkedHashMap', null, null],
    );
    assert.equal(seen[0]?.uri, 'http://10.9.8.7:3000/v1');
    assert.equal(seen[0]?.uri, n1.uriSpec?.build(n1));
    assert.deepEqual(withoutExtras((await agent.queryForInstance(d, 'billing', 'node-2')) as CuratorInstance), fieldsOf(n2));
    assert.equal(await agent.queryForInstance(d, 'billing', 'nope'), undefined);

    // Curator's providers: the disabled one is never given; round robin gives both others.
    const rr = handle('p');
    await agent.provider(d, rr, 'billing', 'roundRobin');
    const got = await agent.getInstance(rr);
    assert.ok(got && ['node-1', 'node-2'].includes(got.id), `getInstance returned ours: ${got?.id}`);
    assert.deepEqual(withoutExtras(got), fieldsOf(got.id === 'node-1' ? n1 : n2));
    assert.deepEqual(new Set(await agent.getInstanceIds(rr, 6)), new Set(['node-1', 'node-2']));
    assert.deepEqual(
      (await agent.getAllInstances(rr)).map((i) => i.id),
      ['node-1', 'node-2'],
    );
    const st = handle('p');
    await agent.provider(d, st, 'billing', 'sticky');
    const stuck = await agent.getInstanceIds(st, 5);
    assert.equal(new Set(stuck).size, 1, `sticky gives one instance: ${stuck.join(',')}`);
    const rnd = handle('p');
    await agent.provider(d, rnd, 'billing', 'random');
    for (const id of await agent.getInstanceIds(rnd, 10)) assert.ok(id === 'node-1' || id === 'node-2', `random gave ${id}`);

    // Curator's DownInstancePolicy over ours: two noted errors take node-1 out.
    const down = handle('p');
    await agent.provider(d, down, 'billing', 'roundRobin', { timeoutMs: 60_000, errorThreshold: 2 });
    await agent.noteError(down, 'node-1');
    await agent.noteError(down, 'node-1');
    assert.deepEqual([...new Set(await agent.getInstanceIds(down, 4))], ['node-2']);
    // Ours does the same over the same instances.
    const provider = ours.serviceProvider('billing', { strategy: sticky(random()), downInstancePolicy: { timeoutMs: 60_000, errorThreshold: 2 } });
    await provider.start({ timeoutMs: 10_000 });
    const first = provider.getInstance() as ServiceInstance<Payload>;
    assert.ok(first.id === 'node-1' || first.id === 'node-2');
    provider.noteError(first);
    provider.noteError(first);
    assert.equal(provider.getInstance()?.id, first.id === 'node-1' ? 'node-2' : 'node-1');

    for (const p of [rr, st, rnd, down]) await agent.closeProvider(p);
    await agent.close(d);
    await ours.close();
    assert.deepEqual(await fx.children(`${base}/billing`), []);
    await fx.waitNoWatches(s!, base);
  });

  test("updates and removals are seen both ways: Curator's ServiceCache sees ours, ours sees Curator's", async () => {
    const base = uniquePath('interop-discovery-changes');
    const [s] = await fx.sessionsApart(1);
    await using ours = await startedDiscovery(s!, base);
    const d = handle('d');
    await agent.open(d, base);

    // Curator's ServiceCache of a service that ours registers in.
    const c = handle('c');
    assert.deepEqual(await agent.cache(d, c, 'search'), []);
    const mine = serviceInstance<Payload>({ name: 'search', id: 'node-a', address: '10.0.0.1', port: 7000, payload: { gen: 1 } });
    await ours.register(mine, { timeoutMs: 10_000 });
    const [added] = await agent.cacheShows(c, ['node-a']);
    assert.deepEqual(withoutExtras(added as CuratorInstance), fieldsOf(mine));
    const moved = serviceInstance<Payload>({ ...mine, port: 7001, payload: { gen: 2 }, enabled: false });
    await ours.update(moved, { timeoutMs: 10_000 });
    const [changed] = await agent.cacheShows(c, ['node-a'], 15_000, (l) => l[0]?.port === 7001);
    assert.deepEqual(withoutExtras(changed as CuratorInstance), fieldsOf(moved));
    await ours.unregister(moved, { timeoutMs: 10_000 });
    await agent.cacheShows(c, []);
    assert.deepEqual(await agent.cachedNow(c), []);

    // Our ServiceCache of a service that Curator registers in.
    const cache = ours.serviceCache('index');
    await cache.start({ timeoutMs: 10_000 });
    const events: (readonly ServiceInstance<unknown>[])[] = [];
    cache.on('changed', (list) => events.push(list));
    const java = await agent.register(d, { name: 'index', id: 'java-x', address: '10.0.0.2', port: 7100, payload: { gen: 1 }, uriSpec: '{scheme}://{address}:{port}' });
    const [first] = await shows(() => cache.instances, ['java-x'], 'our cache');
    assert.deepEqual(fieldsOf(first as ServiceInstance<unknown>), { ...withoutExtras(java), payload: { '@class': 'java.util.LinkedHashMap', gen: 1 } });
    const javaMoved = await agent.update(d, { name: 'index', id: 'java-x', address: '10.0.0.3', port: 7101, sslPort: 7443, payload: { gen: 2 }, registrationTimeUTC: java.registrationTimeUTC, uriSpec: '{scheme}://{address}:{ssl-port}' });
    const [second] = await shows(() => cache.instances, ['java-x'], 'our cache after the update', (l) => l[0]?.port === 7101);
    assert.deepEqual(fieldsOf(second as ServiceInstance<unknown>), { ...withoutExtras(javaMoved), payload: { '@class': 'java.util.LinkedHashMap', gen: 2 } });
    assert.equal(second?.uriSpec?.build(second), 'https://10.0.0.3:7443');
    await agent.unregister(d, 'index', 'java-x');
    await shows(() => cache.instances, [], 'our cache after the unregister');
    assert.deepEqual(
      events.map((l) => l.map((i) => `${i.id}:${i.port}`).join(',')),
      ['java-x:7100', 'java-x:7101', ''],
    );

    await agent.closeCache(c);
    await agent.close(d);
    await ours.close();
    for (const name of ['search', 'index']) assert.deepEqual(await fx.children(`${base}/${name}`), []);
    await fx.waitNoWatches(s!, base);
  });

  test("a Java session expiry takes its instance out of our cache, and Curator's re-registration brings it back", async () => {
    const base = uniquePath('interop-discovery-expiry');
    const [s] = await fx.sessionsApart(1);
    const other = await CuratorDiscoveryAgent.start(fx.server.connectString);
    try {
      const d = handle('d');
      await other.open(d, base);
      const java = await other.register(d, { name: 'jobs', id: 'java-e', address: '10.0.0.5', port: 7200, payload: { k: 'v' } });
      const owner = async (): Promise<string> => `0x${(await s!.exists(`${base}/jobs/java-e`))?.ephemeralOwner.toString(16)}`;
      assert.equal(await owner(), other.sessionId);

      await using ours = await startedDiscovery(s!, base);
      const cache = ours.serviceCache('jobs');
      await cache.start({ timeoutMs: 10_000 });
      assert.deepEqual(
        cache.instances.map((i) => i.id),
        ['java-e'],
      );
      const events: string[][] = [];
      cache.on('changed', (list) => events.push(list.map((i) => i.id)));

      await other.expire();
      // Gone with the session, then back once Curator reconnects on a new session.
      await waitFor(() => events.some((e) => e.length === 0), { timeoutMs: 15_000, message: `our cache saw java-e go (events ${JSON.stringify(events)})` });
      await other.until(() => other.states.some((st) => st.state === 'RECONNECTED'), 20_000, 'Curator to reconnect on a new session');
      const renewed = other.states.find((st) => st.state === 'RECONNECTED')?.session ?? '';
      assert.notEqual(renewed, other.sessionId);
      assert.ok(
        other.states.some((st) => st.state === 'LOST'),
        `Curator saw its session lost: ${JSON.stringify(other.states)}`,
      );
      const [back] = await shows(() => cache.instances, ['java-e'], 'our cache after the re-registration');
      assert.deepEqual(fieldsOf(back as ServiceInstance<unknown>), { ...withoutExtras(java), payload: { '@class': 'java.util.LinkedHashMap', k: 'v' } });
      assert.deepEqual(events.slice(events.findIndex((e) => e.length === 0)), [[], ['java-e']]);
      assert.equal(await owner(), renewed);

      await other.close(d);
      await shows(() => cache.instances, [], 'our cache after Curator closed');
      await ours.close();
      assert.deepEqual(await fx.children(`${base}/jobs`), []);
      await fx.waitNoWatches(s!, base);
    } finally {
      await other.shutdown();
    }
  });
});
