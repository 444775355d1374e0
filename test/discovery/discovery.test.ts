// ServiceDiscovery on one real server, with real faults: registrations kept through a dropped
// connection, a session expiry (back with the latest data, owned by the new session) and an
// operator's delete; a register that times out or is aborted while its create is on the way
// leaves nothing once the create lands; a create whose reply was lost makes one node; broken
// instance bodies written by someone else are skipped and reported by the queries, the cache
// and the provider, never thrown at them; the provider's strategies, filters and down-instance
// policy; bad input refused with typed errors; nothing left behind (nodes, watches).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { random, roundRobin, ServiceDiscovery, serviceInstance, sticky, type ServiceInstance } from '../../src/discovery/index.js';
import { ClosedError, IllegalStateError, InvalidArgumentError, InvalidInstanceError, NotRegisteredError, OperationTimeoutError } from '../../src/errors.js';
import type { ZkSession } from '../../src/client/session.js';
import { expireSession, waitFor, type ChaosProxy } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

type Payload = { v: number };

async function started(s: ZkSession, basePath: string): Promise<ServiceDiscovery<Payload>> {
  const d = new ServiceDiscovery<Payload>(s, { basePath });
  await d.start({ timeoutMs: 10_000 });
  return d;
}

/** The instance JSON at `path`, as the observer reads it. */
async function jsonAt(path: string): Promise<Record<string, unknown> | undefined> {
  const got = await fx.observer.getData(path).catch(() => undefined);
  return got === undefined ? undefined : (JSON.parse(got.data.toString()) as Record<string, unknown>);
}

const ids = (list: readonly ServiceInstance<unknown>[]): string[] => list.map((i) => i.id);

/** A session through a proxy of its own (for faults), with this session timeout. */
async function viaProxy(sessionTimeoutMs: number): Promise<{ s: ZkSession; proxy: ChaosProxy }> {
  const proxy = await fx.proxy();
  return { s: await fx.pool.connect(proxy.connectString, { sessionTimeoutMs }), proxy };
}

test('register, query, update and unregister; close removes every instance and watch; use after close is refused', async () => {
  const base = uniquePath('disc-basic');
  const baseline = await fx.watchTotal();
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  const d = await started(s, base);
  const a = serviceInstance<Payload>({ name: 'api', id: 'a', address: '10.0.0.1', port: 8080, payload: { v: 1 }, uriSpec: '{scheme}://{address}:{port}' });
  await d.register(a, { timeoutMs: 10_000 });
  await d.register({ name: 'api', id: 'b', address: '10.0.0.2', port: 8080 }, { timeoutMs: 10_000 });
  await d.register({ name: 'web', id: 'w', address: '10.0.0.3', sslPort: 8443, serviceType: 'STATIC' }, { timeoutMs: 10_000 });
  assert.deepEqual(await d.queryForNames(), ['api', 'web']);
  assert.deepEqual(ids(await d.queryForInstances('api', { sync: true })), ['a', 'b']);
  const got = await d.queryForInstance('api', 'a');
  assert.deepEqual({ ...got, uriSpec: got?.uriSpec?.toString() }, { ...a, uriSpec: '{scheme}://{address}:{port}' });
  assert.equal(got?.uriSpec?.build(got), 'http://10.0.0.1:8080');
  assert.equal(await d.queryForInstance('api', 'nope'), undefined);
  assert.deepEqual(await d.queryForInstances('nothing'), []);
  // Node modes as Curator's: DYNAMIC ephemeral, STATIC persistent; the service node a container.
  assert.equal((await fx.observer.exists(`${base}/api/a`))?.ephemeralOwner, s.sessionId);
  assert.equal((await fx.observer.exists(`${base}/web/w`))?.ephemeralOwner, 0n);

  await d.update(serviceInstance<Payload>({ ...a, port: 9090, payload: { v: 2 } }), { timeoutMs: 10_000 });
  assert.deepEqual(await jsonAt(`${base}/api/a`), { ...(await jsonAt(`${base}/api/a`)), port: 9090, payload: { v: 2 } });
  assert.equal((await d.queryForInstance('api', 'a'))?.port, 9090);
  assert.deepEqual(ids(d.registered), ['a', 'b', 'w']);

  await d.unregister('b', { timeoutMs: 10_000 });
  assert.deepEqual(ids(await d.queryForInstances('api')), ['a']);
  await assert.rejects(d.unregister('b'), NotRegisteredError);
  await assert.rejects(d.update({ name: 'api', id: 'b' }), NotRegisteredError);
  await assert.rejects(d.update({ name: 'web', id: 'a' }), NotRegisteredError, 'same id, another service');
  await assert.rejects(d.register({ name: 'web', id: 'a' }), InvalidArgumentError, 'an id registered for another service');

  const cache = d.serviceCache('api');
  await cache.start({ timeoutMs: 10_000 });
  assert.deepEqual(ids(cache.instances), ['a']);
  await d.close();
  assert.ok(d.closed);
  assert.deepEqual(await fx.children(`${base}/api`), []);
  assert.deepEqual(await fx.children(`${base}/web`), [], 'a STATIC instance goes at unregister or close too');
  await fx.waitNoWatches(s, base);
  await fx.waitWatchTotal(baseline, "back to the baseline (the cache's child watch too)");
  await assert.rejects(d.register({ name: 'api' }), ClosedError);
  await assert.rejects(d.queryForNames(), ClosedError);
  assert.throws(() => d.serviceCache('api'), ClosedError);
  await d.close(); // idempotent
});

test('a registration survives a dropped connection, an operator deleting it, and a session expiry (back with its latest data, owned by the new session)', async () => {
  const base = uniquePath('disc-faults');
  const { s, proxy } = await viaProxy(4000);
  await using d = await started(s, base);
  const [w] = await fx.sessionsN(1);
  assert.ok(w);
  await using watcher = await started(w, base);
  const cache = watcher.serviceCache('api');
  await cache.start({ timeoutMs: 10_000 });
  const shows = async (v: number | undefined, what: string): Promise<void> => void await
    waitFor(() => (v === undefined ? cache.instances.length === 0 : cache.instances.length === 1 && cache.instances[0]?.payload?.v === v), { timeoutMs: 20_000, message: what });

  const inst = serviceInstance<Payload>({ name: 'api', id: 'i1', address: '10.0.0.9', port: 80, payload: { v: 1 } });
  await d.register(inst, { timeoutMs: 10_000 });
  await shows(1, 'the watcher sees v1');

  // A dropped connection: the same session comes back and the node never went.
  const czxid = (await fx.observer.exists(`${base}/api/i1`))?.czxid;
  const session = s.sessionId;
  proxy.dropAll();
  await d.update(serviceInstance<Payload>({ ...inst, payload: { v: 2 } }), { timeoutMs: 15_000 });
  await shows(2, 'the watcher sees v2 after the reconnect');
  assert.equal(s.sessionId, session);
  assert.equal((await fx.observer.exists(`${base}/api/i1`))?.czxid, czxid, 'the same node');

  // An operator deletes it: it is back, with the latest data.
  await fx.observer.delete(`${base}/api/i1`);
  await waitFor(async () => (await jsonAt(`${base}/api/i1`))?.payload !== undefined, { timeoutMs: 15_000, message: 're-registered after the delete' });
  assert.deepEqual((await jsonAt(`${base}/api/i1`))?.payload, { v: 2 });

  // The session expires: the next session registers it again, with the latest data.
  await expireSession(s, proxy);
  assert.notEqual(s.sessionId, session);
  await waitFor(async () => (await fx.observer.exists(`${base}/api/i1`))?.ephemeralOwner === s.sessionId, { timeoutMs: 20_000, message: 'registered again by the new session' });
  assert.deepEqual((await jsonAt(`${base}/api/i1`))?.payload, { v: 2 });
  await shows(2, 'the watcher sees it back');
  await d.update(serviceInstance<Payload>({ ...inst, payload: { v: 3 } }), { timeoutMs: 10_000 });
  await shows(3, 'an update on the new session');

  await d.unregister(inst, { timeoutMs: 10_000 });
  await shows(undefined, 'the watcher sees it go');
  await d.close();
  await watcher.close();
  await fx.waitNoWatches(s, base);
  await fx.waitNoWatches(w, base);
});

test('a register that times out or is aborted while its create is on the way leaves nothing once the create lands; the caller is not held past its deadline', async () => {
  const base = uniquePath('disc-timeout');
  const { s, proxy } = await viaProxy(8000);
  const d = await started(s, base);
  const session = s.sessionId;
  const creates = s.counters.create;
  proxy.latency(1500);
  const t0 = performance.now();
  await assert.rejects(d.register({ name: 'api', id: 'late' }, { timeoutMs: 300 }), OperationTimeoutError);
  const stop = new AbortController();
  const aborted = d.register({ name: 'api', id: 'gone' }, { signal: stop.signal });
  setTimeout(() => stop.abort(new Error('shutting down')), 300).unref();
  await assert.rejects(aborted, /shutting down/);
  // The replies come 3 s after their sends: anything well under that is the deadlines'.
  const took = Math.round(performance.now() - t0);
  assert.ok(took < 2500, `both rejected at their deadlines, not after the delayed replies (${took} ms)`);
  assert.deepEqual(ids(d.registered), []);
  // The creates land (1.5 s late) and are removed by the discovery, on the same session.
  await waitFor(() => s.counters.create - creates >= 2, { timeoutMs: 10_000, message: 'both creates sent' });
  proxy.pass();
  await d.close({ timeoutMs: 15_000 });
  assert.equal(s.sessionId, session, 'removed by us, not by an expiry');
  assert.deepEqual(await fx.children(`${base}/api`), []);
  await fx.waitNoWatches(s, base);
});

test('an unregister that times out in a partition: the caller is told at its deadline, and the instance is still removed once the partition heals (the session lives on)', async () => {
  const base = uniquePath('disc-unreg');
  const { s, proxy } = await viaProxy(8000);
  await using d = await started(s, base);
  await d.register({ name: 'api', id: 'u', port: 1 }, { timeoutMs: 10_000 });
  const session = s.sessionId;
  proxy.blackhole();
  const t0 = performance.now();
  await assert.rejects(d.unregister('u', { timeoutMs: 500 }), OperationTimeoutError);
  const took = Math.round(performance.now() - t0);
  assert.ok(took < 2000, `told at its deadline (${took} ms)`);
  assert.deepEqual(ids(d.registered), [], 'no longer kept');
  assert.deepEqual(await fx.children(`${base}/api`), ['u'], 'still there during the partition');
  // The connection dies with the delete held in it: it never reaches the server.
  proxy.dropAll();
  proxy.pass();
  await waitFor(async () => (await fx.children(`${base}/api`)).length === 0, { timeoutMs: 15_000, message: 'removed after the heal' });
  assert.equal(s.sessionId, session, 'by us, not by an expiry');
  await d.close();
  await fx.waitNoWatches(s, base);
});

test('a register whose create reply was lost makes exactly one node, ours', async () => {
  const base = uniquePath('disc-lost');
  const { s, proxy } = await viaProxy(4000);
  await using d = await started(s, base);
  await fx.observer.mkdirp(`${base}/api`);
  const lost = proxy.loseReply({ op: 'create', path: `${base}/api/one` });
  const registering = d.register({ name: 'api', id: 'one', port: 1 }, { timeoutMs: 15_000 });
  await lost;
  await registering;
  assert.deepEqual(await fx.children(`${base}/api`), ['one']);
  assert.equal((await fx.observer.exists(`${base}/api/one`))?.ephemeralOwner, s.sessionId);
  assert.equal((await jsonAt(`${base}/api/one`))?.port, 1);
  await d.close();
  assert.deepEqual(await fx.children(`${base}/api`), []);
});

test('an instance node with a broken body is skipped and reported by the queries, the cache and the provider; fixed, it comes in', async () => {
  const base = uniquePath('disc-broken');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  await using d = await started(s, base);
  await d.register({ name: 'api', id: 'good', port: 1 }, { timeoutMs: 10_000 });
  await fx.observer.create(`${base}/api/broken`, { data: 'not json {' });
  await fx.observer.create(`${base}/api/wrong`, { data: JSON.stringify({ name: 'api', id: 'wrong', port: 'eighty' }) });
  const invalid: InvalidInstanceError[] = [];
  d.on('invalid', (e) => invalid.push(e));
  assert.deepEqual(ids(await d.queryForInstances('api')), ['good']);
  assert.deepEqual(invalid.map((e) => e.path).sort(), [`${base}/api/broken`, `${base}/api/wrong`]);
  await assert.rejects(d.queryForInstance('api', 'broken'), InvalidInstanceError);

  const provider = d.serviceProvider('api');
  const reported: string[] = [];
  provider.on('invalid', (e) => reported.push(e.path ?? ''));
  await provider.start({ timeoutMs: 10_000 });
  assert.deepEqual(ids(provider.getAllInstances()), ['good']);
  assert.deepEqual(reported.sort(), [`${base}/api/broken`, `${base}/api/wrong`]);
  await fx.observer.setData(`${base}/api/broken`, JSON.stringify({ name: 'api', id: 'broken', port: 2 }));
  await waitFor(() => ids(provider.getAllInstances()).join() === 'broken,good', { timeoutMs: 10_000, message: 'the fixed instance comes in' });
  // Broken again: it is dropped (and reported), the rest stays.
  await fx.observer.setData(`${base}/api/broken`, '[]');
  await waitFor(() => ids(provider.getAllInstances()).join() === 'good', { timeoutMs: 10_000, message: 'the broken instance goes' });
  assert.equal(reported.filter((p) => p.endsWith('/broken')).length, 2);
  await fx.observer.delete(`${base}/api/broken`);
  await fx.observer.delete(`${base}/api/wrong`);
  await d.close();
  await fx.waitNoWatches(s, base);
});

test('providers: round robin, random and sticky pick among usable instances; disabled and filtered ones are left out; the down-instance policy', async () => {
  const base = uniquePath('disc-provider');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  await using d = await started(s, base);
  for (const id of ['a', 'b', 'c']) await d.register({ name: 'api', id, port: 80 }, { timeoutMs: 10_000 });
  await d.register({ name: 'api', id: 'off', port: 80, enabled: false }, { timeoutMs: 10_000 });
  await d.register({ name: 'api', id: 'tls', port: 80, sslPort: 443 }, { timeoutMs: 10_000 });

  const rr = d.serviceProvider('api', { strategy: roundRobin(), filters: [(i) => i.sslPort === null], downInstancePolicy: { timeoutMs: 300, errorThreshold: 2 } });
  const changes: string[][] = [];
  rr.on('changed', (list) => changes.push(ids(list)));
  await rr.start({ timeoutMs: 10_000 });
  const picks = Array.from({ length: 6 }, () => rr.getInstance()?.id);
  assert.deepEqual(picks, ['a', 'b', 'c', 'a', 'b', 'c']);
  const b = rr.getAllInstances().find((i) => i.id === 'b');
  assert.ok(b);
  rr.noteError(b);
  assert.deepEqual(ids(rr.getAllInstances()), ['a', 'b', 'c'], 'one error is under the threshold');
  rr.noteError(b);
  assert.deepEqual(ids(rr.getAllInstances()), ['a', 'c'], 'down at the threshold');
  await waitFor(() => ids(rr.getAllInstances()).includes('b'), { timeoutMs: 5000, message: 'back after the policy timeout' });

  const st = d.serviceProvider('api', { strategy: sticky(random()) });
  await st.start({ timeoutMs: 10_000 });
  const first = st.getInstance()?.id;
  assert.ok(first !== undefined && first !== 'off');
  for (let i = 0; i < 5; i++) assert.equal(st.getInstance()?.id, first, 'sticky');
  await d.unregister(first, { timeoutMs: 10_000 });
  await waitFor(() => !ids(st.getAllInstances()).includes(first), { timeoutMs: 10_000, message: 'the sticky instance went' });
  const next = st.getInstance()?.id;
  assert.ok(next !== undefined && next !== first && next !== 'off', `sticks to another (${next})`);
  await waitFor(() => changes.length > 0 && !changes.at(-1)?.includes(first), { timeoutMs: 10_000, message: 'the change reached every provider' });

  for (const id of ['a', 'b', 'c', 'tls'].filter((x) => x !== first)) await d.unregister(id, { timeoutMs: 10_000 });
  await waitFor(() => rr.getAllInstances().length === 0, { timeoutMs: 10_000 });
  assert.equal(rr.getInstance(), undefined, 'none usable: undefined, not a throw (only the disabled one is left)');
  await d.close();
  await fx.waitNoWatches(s, base);
});

test('bad input is refused with typed errors, nothing sent', async () => {
  const base = uniquePath('disc-bad');
  const [s] = await fx.sessionsN(1);
  assert.ok(s);
  assert.throws(() => new ServiceDiscovery(s, { basePath: 'relative' }), InvalidArgumentError);
  assert.throws(() => new ServiceDiscovery(s, { basePath: '/a/' }), InvalidArgumentError);
  assert.throws(() => new ServiceDiscovery({} as ZkSession, { basePath: '/a' }), InvalidArgumentError);
  assert.throws(() => new ServiceDiscovery(s, { basePath: '/a', codec: {} as never }), InvalidArgumentError);
  const d = new ServiceDiscovery<unknown>(s, { basePath: base });
  await assert.rejects(d.register({ name: 'api' }), IllegalStateError, 'before start');
  await assert.rejects(d.queryForNames(), IllegalStateError);
  await d.start({ timeoutMs: 10_000 });
  await assert.rejects(d.start(), IllegalStateError, 'started twice');
  const writes = s.counters.create + s.counters.setData;
  for (const name of ['', 'a/b', '.', '..', 'x\u0000y', 42, undefined]) {
    assert.throws(() => serviceInstance({ name } as never), InvalidArgumentError, `name ${JSON.stringify(name)}`);
    await assert.rejects(d.register({ name } as never), InvalidArgumentError);
    await assert.rejects(d.queryForInstances(name as never), InvalidArgumentError);
  }
  for (const id of ['', 'a/b', '..']) await assert.rejects(d.register({ name: 'api', id }), InvalidArgumentError, `id ${id}`);
  for (const port of [-1, 65536, 1.5, '80']) await assert.rejects(d.register({ name: 'api', port } as never), InvalidArgumentError, `port ${String(port)}`);
  await assert.rejects(d.register({ name: 'api', serviceType: 'FOREVER' } as never), InvalidArgumentError);
  await assert.rejects(d.register({ name: 'api', colour: 'red' } as never), InvalidArgumentError, 'unknown field');
  await assert.rejects(d.register({ name: 'api', uriSpec: '{scheme' }), InvalidArgumentError, 'unclosed template');
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  for (const payload of [() => 1, 1n, Number.NaN, new Date(), cyclic, { deep: [undefined] }]) {
    await assert.rejects(d.register({ name: 'api', payload }), InvalidArgumentError, `payload ${String(payload)}`);
  }
  await assert.rejects(d.register({ name: 'api', payload: 'x'.repeat(s.dataLimit) }), InvalidArgumentError, 'over the data limit');
  await assert.rejects(d.register({ name: 'api' }, { timeoutMs: -1 }), InvalidArgumentError);
  await assert.rejects(d.register({ name: 'api' }, { wait: 1 } as never), InvalidArgumentError);
  await assert.rejects(d.unregister(7 as never), InvalidArgumentError);
  assert.throws(() => d.serviceProvider('api', { strategy: {} as never }), InvalidArgumentError);
  assert.throws(() => d.serviceProvider('api', { downInstancePolicy: { errorThreshold: 0 } }), InvalidArgumentError);
  assert.throws(() => d.serviceProvider('api', { filters: ['x'] as never }), InvalidArgumentError);
  assert.throws(() => d.serviceCache('a/b'), InvalidArgumentError);
  assert.equal(s.counters.create + s.counters.setData, writes, 'nothing sent');
  await d.close();
  assert.deepEqual(await fx.children(base), []);
});
