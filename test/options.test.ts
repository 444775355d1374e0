// Every documented option is accepted, and only those: an unknown key is refused. The keys are
// read from the exported types themselves (with the TypeScript compiler, from src/), so a key
// added to a type but not to the runtime list its entry point checks (or the other way round)
// fails here, whatever list the entry point happens to use. No server: calls are made on a
// session that never connects, with an aborted signal, or with one option poisoned so that
// they fail right after the options are checked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import {
  ChildrenCache,
  DistributedQueue,
  NodeCache,
  TreeCache,
  InvalidArgumentError,
  LeaderLatch,
  LeaderSelector,
  Mutex,
  ReadWriteLock,
  Semaphore,
  Barrier,
  DoubleBarrier,
  MultiLock,
  SharedCount,
  SharedValue,
  PersistentNode,
  AtomicNumber,
  GroupMember,
  ZkSession,
  tlsFromFiles,
  Acls,
} from '../src/index.js';
import {
  ChaosProxy,
  checkHistory,
  expireSession,
  expireSessionByTicket,
  fourLetterWord,
  freePort,
  generateTestCertificates,
  HistoryRecorder,
  connectAs,
  testIdentity,
  Nemesis,
  runChaos,
  SeededRandom,
  TestingCluster,
  TestingServer,
  waitFor,
  ZooKeeperProcess,
  type ChaosHistory,
  type TestingCluster as Cluster,
} from '../src/testing/index.js';
import { openTelemetryMetrics, openTelemetryTracing, prometheusMetrics } from '../src/metrics/index.js';
import { ServiceCache, ServiceDiscovery } from '../src/discovery/index.js';

// From build/test/options.test.js up to the repository.
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Where an options type is documented: an exported type, one of its properties, or a method's parameter. */
type Source = { type: string } | { property: [type: string, key: string] } | { parameter: [cls: string, method: string, index: number] };

/** The property names of each documented options type, read from the source with the compiler. */
function documentedKeys(sources: readonly Source[]): Map<Source, string[]> {
  const entries = [join(REPO, 'src', 'index.ts'), join(REPO, 'src', 'testing', 'index.ts'), join(REPO, 'src', 'metrics', 'index.ts'), join(REPO, 'src', 'discovery', 'index.ts')];
  const program = ts.createProgram(entries, { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const exported = new Map<string, ts.Symbol>();
  for (const file of entries) {
    const sf = program.getSourceFile(file);
    assert.ok(sf, `compiled ${file}`);
    const mod = checker.getSymbolAtLocation(sf);
    assert.ok(mod, `module symbol of ${file}`);
    for (const sym of checker.getExportsOfModule(mod)) {
      const real = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
      exported.set(sym.name, real);
    }
  }
  const symbolOf = (name: string): ts.Symbol => {
    const sym = exported.get(name);
    assert.ok(sym, `${name} is exported`);
    return sym;
  };
  const namesOf = (type: ts.Type): string[] => checker.getPropertiesOfType(checker.getNonNullableType(type)).map((p) => p.name);
  const out = new Map<Source, string[]>();
  for (const source of sources) {
    let type: ts.Type;
    if ('type' in source) type = checker.getDeclaredTypeOfSymbol(symbolOf(source.type));
    else if ('property' in source) {
      const [name, key] = source.property;
      const prop = checker.getPropertyOfType(checker.getDeclaredTypeOfSymbol(symbolOf(name)), key);
      assert.ok(prop?.valueDeclaration, `${name}.${key}`);
      type = checker.getTypeOfSymbolAtLocation(prop, prop.valueDeclaration);
    } else {
      const [cls, method, index] = source.parameter;
      const sym = symbolOf(cls);
      const decl = sym.valueDeclaration;
      assert.ok(decl, `${cls} has a declaration`);
      const classType = checker.getTypeOfSymbolAtLocation(sym, decl);
      // A static method, else an instance one.
      const member = checker.getPropertyOfType(classType, method) ?? checker.getPropertyOfType(checker.getDeclaredTypeOfSymbol(sym), method);
      assert.ok(member?.valueDeclaration, `${cls}.${method}`);
      const signature = checker.getTypeOfSymbolAtLocation(member, member.valueDeclaration).getCallSignatures()[0];
      const param = signature?.getParameters()[index];
      assert.ok(param?.valueDeclaration, `${cls}.${method} parameter ${index}`);
      type = checker.getTypeOfSymbolAtLocation(param, param.valueDeclaration);
    }
    const names = namesOf(type);
    assert.ok(names.length > 0, `${JSON.stringify(source)} has documented keys`);
    out.set(source, names);
  }
  return out;
}

/** One entry point that takes options. */
interface Entry {
  readonly name: string;
  readonly source: Source;
  /** Calls the entry point with `options` (may throw, return a promise, or a value). */
  readonly call: (options: Record<string, unknown>) => unknown;
  /** Values that make the call fail (or end) right after its options are checked. */
  readonly poison?: () => Record<string, unknown>;
}

const aborted = (): Record<string, unknown> => ({ signal: AbortSignal.abort(new Error('poisoned')) });

let s: ZkSession; // never connects
let proxy: ChaosProxy; // nothing behind it
const opened: { close(): Promise<void> }[] = [];
const letter = { path: '/q/dead/x', data: Buffer.from('x'), priority: 1 } as never;
const fakeCluster = { members: [{ id: 1 }, { id: 2 }, { id: 3 }] } as unknown as Cluster;
const history: ChaosHistory = { version: 1, meta: { seed: 1, seconds: 1, startedAt: 0, endedAt: 1, sessionTimeoutMs: 4000, clients: [], workloads: [], members: [] }, events: [] };
const nemesis = (): Nemesis => new Nemesis({ cluster: fakeCluster, clients: [], random: new SeededRandom(1), recorder: new HistoryRecorder({ client: 'n' }), sessionTimeoutMs: 4000 });
const keep = <T extends { close(): Promise<void> }>(x: T): T => {
  opened.push(x);
  return x;
};
const started = (n: PersistentNode): PersistentNode => {
  keep(n).start();
  return n;
};
const o = <T>(options: Record<string, unknown>): T => options as T;

const entries: Entry[] = [
  // zk-recipes/metrics: the required objects are left out, so nothing subscribes.
  { name: 'prometheusMetrics', source: { type: 'PrometheusMetricsOptions' }, call: (x) => prometheusMetrics(o(x)) },
  { name: 'openTelemetryMetrics', source: { type: 'OpenTelemetryMetricsOptions' }, call: (x) => openTelemetryMetrics(o(x)) },
  { name: 'openTelemetryTracing', source: { type: 'OpenTelemetryTracingOptions' }, call: (x) => openTelemetryTracing(o(x)) },
  // The session.
  { name: 'new ZkSession', source: { type: 'SessionOptions' }, call: (x) => keep(new ZkSession(s.connectString, o({ ...x, connectTimeoutMs: 100 }))) },
  { name: 'new ZkSession aclProvider', source: { type: 'AclProvider' }, call: (x) => keep(new ZkSession(s.connectString, { aclProvider: o({ defaultAcl: Acls.OPEN, ...x }), connectTimeoutMs: 100 })) },
  { name: 'setAcl', source: { parameter: ['ZkSession', 'setAcl', 2] }, call: (x) => s.setAcl('/x', Acls.OPEN, o(x)), poison: aborted },
  { name: 'getAcl', source: { type: 'CallOptions' }, call: (x) => s.getAcl('/x', o(x)), poison: aborted },
  { name: 'new ZkSession retry', source: { type: 'RetryPolicy' }, call: (x) => keep(new ZkSession(s.connectString, { retry: x, connectTimeoutMs: 100 })) },
  { name: 'new ZkSession tls', source: { type: 'TlsOptions' }, call: (x) => keep(new ZkSession(s.connectString, { tls: o(x), connectTimeoutMs: 100 })) },
  { name: 'tlsFromFiles', source: { type: 'TlsFiles' }, call: (x) => tlsFromFiles(o(x)), poison: () => ({ ca: '' }) },
  // Fails right after its keys are checked: the mechanism is missing or poisoned.
  { name: 'new ZkSession sasl', source: { type: 'SaslOptions' }, call: (x) => keep(new ZkSession(s.connectString, { sasl: o(x), connectTimeoutMs: 100 })), poison: () => ({ mechanism: 'poison' }) },
  { name: 'ZkSession.connect', source: { parameter: ['ZkSession', 'connect', 1] }, call: (x) => ZkSession.connect(s.connectString, o(x)), poison: aborted },
  { name: 'waitConnected', source: { type: 'WaitOptions' }, call: (x) => s.waitConnected(o(x)), poison: aborted },
  { name: 'create', source: { type: 'CreateCallOptions' }, call: (x) => s.create('/x', o(x)), poison: aborted },
  { name: 'createWithStat', source: { type: 'CreateCallOptions' }, call: (x) => s.createWithStat('/x', o(x)), poison: aborted },
  { name: 'delete', source: { parameter: ['ZkSession', 'delete', 1] }, call: (x) => s.delete('/x', o(x)), poison: aborted },
  { name: 'setData', source: { parameter: ['ZkSession', 'setData', 2] }, call: (x) => s.setData('/x', 'd', o(x)), poison: aborted },
  { name: 'mkdirp', source: { parameter: ['ZkSession', 'mkdirp', 1] }, call: (x) => s.mkdirp('/x', o(x)), poison: aborted },
  ...(['sync', 'exists', 'getData', 'getChildren', 'deleteRecursive'] as const).map((m): Entry => ({ name: m, source: { type: 'CallOptions' }, call: (x) => s[m]('/x', o(x)), poison: aborted })),
  { name: 'multi', source: { type: 'CallOptions' }, call: (x) => s.multi([{ type: 'create', path: '/x' }], o(x)), poison: aborted },
  ...(['getDataWatch', 'getChildrenWatch', 'existsWatch'] as const).map((m): Entry => ({ name: m, source: { type: 'WatchOptions' }, call: (x) => s[m]('/x', o(x)), poison: aborted })),
  { name: 'addWatch', source: { type: 'AddWatchOptions' }, call: (x) => s.addWatch('/x', o(x)), poison: aborted },
  // Transaction ops: their keys are options too (a misspelled version changes what they do).
  ...(['CreateOp', 'DeleteOp', 'SetDataOp', 'CheckOp'] as const).map(
    (t): Entry => ({
      name: `multi ${t}`,
      source: { type: t },
      call: (x) => s.multi([o({ ...x, type: { CreateOp: 'create', DeleteOp: 'delete', SetDataOp: 'setData', CheckOp: 'check' }[t], path: '/x', ...(t === 'SetDataOp' && { data: 'd' }) })], { signal: AbortSignal.abort() }),
    }),
  ),
  // Lock recipes.
  { name: 'new Mutex', source: { type: 'MutexOptions' }, call: (x) => keep(new Mutex(s, '/m', o(x))) },
  { name: 'new Semaphore', source: { type: 'SemaphoreOptions' }, call: (x) => keep(new Semaphore(s, '/m', o(x))), poison: () => ({ maxLeases: 2 }) },
  { name: 'new ReadWriteLock', source: { type: 'ReadWriteLockOptions' }, call: (x) => keep(new ReadWriteLock(s, '/m', o(x))) },
  { name: 'mutex.participants', source: { parameter: ['Mutex', 'participants', 0] }, call: (x) => keep(new Mutex(s, '/m')).participants(o(x)), poison: aborted },
  { name: 'latch.participants', source: { parameter: ['LeaderLatch', 'participants', 0] }, call: (x) => keep(new LeaderLatch(s, '/l')).participants(o(x)), poison: aborted },
  { name: 'latch.leader', source: { parameter: ['LeaderLatch', 'leader', 0] }, call: (x) => keep(new LeaderLatch(s, '/l')).leader(o(x)), poison: aborted },
  { name: 'selector.participants', source: { parameter: ['LeaderSelector', 'participants', 0] }, call: (x) => keep(new LeaderSelector(s, '/l')).participants(o(x)), poison: aborted },
  { name: 'mutex.acquire', source: { type: 'AcquireOptions' }, call: (x) => keep(new Mutex(s, '/m')).acquire(o(x)), poison: aborted },
  { name: 'mutex.runExclusive', source: { type: 'AcquireOptions' }, call: (x) => keep(new Mutex(s, '/m')).runExclusive(() => 1, o(x)), poison: aborted },
  { name: 'semaphore.acquire(n)', source: { type: 'AcquireOptions' }, call: (x) => keep(new Semaphore(s, '/m', { maxLeases: 2 })).acquire(1, o(x)), poison: aborted },
  { name: 'readLock.acquire', source: { type: 'AcquireOptions' }, call: (x) => keep(new ReadWriteLock(s, '/m')).readLock().acquire(o(x)), poison: aborted },
  { name: 'writeLock.runExclusive', source: { type: 'AcquireOptions' }, call: (x) => keep(new ReadWriteLock(s, '/m')).writeLock().runExclusive(() => 1, o(x)), poison: aborted },
  // Barriers and multi-locks.
  { name: 'new Barrier', source: { type: 'BarrierOptions' }, call: (x) => keep(new Barrier(s, '/b', o(x))) },
  { name: 'barrier.wait', source: { type: 'BarrierWaitOptions' }, call: (x) => keep(new Barrier(s, '/b')).wait(o(x)), poison: aborted },
  { name: 'new DoubleBarrier', source: { type: 'DoubleBarrierOptions' }, call: (x) => keep(new DoubleBarrier(s, '/b', o(x))), poison: () => ({ memberCount: 2 }) },
  { name: 'doubleBarrier.enter', source: { type: 'BarrierWaitOptions' }, call: (x) => keep(new DoubleBarrier(s, '/b', { memberCount: 2 })).enter(o(x)), poison: aborted },
  { name: 'new MultiLock', source: { type: 'MultiLockOptions' }, call: (x) => keep(new MultiLock(s, ['/m1', '/m2'], o(x))) },
  { name: 'multiLock.acquire', source: { type: 'AcquireOptions' }, call: (x) => keep(new MultiLock(s, ['/m1', '/m2'])).acquire(o(x)), poison: aborted },
  // Shared values and counts (set and trySet check their options before the started check).
  { name: 'new SharedValue', source: { type: 'SharedValueOptions' }, call: (x) => keep(new SharedValue(s, '/v', 'seed', o(x))) },
  { name: 'new SharedCount', source: { type: 'SharedValueOptions' }, call: (x) => keep(new SharedCount(s, '/v', 0, o(x))) },
  { name: 'sharedValue.start', source: { type: 'SharedWaitOptions' }, call: (x) => keep(new SharedValue(s, '/v', 'seed')).start(o(x)), poison: aborted },
  { name: 'sharedCount.start', source: { parameter: ['SharedCount', 'start', 0] }, call: (x) => keep(new SharedCount(s, '/v', 0)).start(o(x)), poison: aborted },
  { name: 'sharedCount.refresh', source: { parameter: ['SharedCount', 'refresh', 0] }, call: (x) => keep(new SharedCount(s, '/v', 0)).refresh(o(x)) },
  { name: 'sharedCount.set', source: { parameter: ['SharedCount', 'set', 1] }, call: (x) => keep(new SharedCount(s, '/v', 0)).set(1, o(x)) },
  { name: 'sharedValue.set', source: { parameter: ['SharedValue', 'set', 1] }, call: (x) => keep(new SharedValue(s, '/v', 'seed')).set('x', o(x)) },
  { name: 'sharedCount.trySet', source: { parameter: ['SharedCount', 'trySet', 2] }, call: (x) => keep(new SharedCount(s, '/v', 0)).trySet(1, { value: 0, version: 0, zxid: 0n }, o(x)) },
  { name: 'sharedValue.trySet', source: { parameter: ['SharedValue', 'trySet', 2] }, call: (x) => keep(new SharedValue(s, '/v', 'seed')).trySet('x', { value: Buffer.from('seed'), version: 0, zxid: 0n }, o(x)) },
  { name: 'sharedValue.changes', source: { type: 'SharedIteratorOptions' }, call: (x) => keep(new SharedValue(s, '/v', 'seed')).changes(o(x)).return?.() },
  // Atomic numbers.
  { name: 'new AtomicNumber', source: { type: 'AtomicNumberOptions' }, call: (x) => keep(new AtomicNumber(s, '/a', o(x))) },
  { name: 'new AtomicNumber retry', source: { type: 'AtomicRetryOptions' }, call: (x) => keep(new AtomicNumber(s, '/a', { retry: x })) },
  { name: 'new AtomicNumber promoteToLock', source: { type: 'PromoteToLockOptions' }, call: (x) => keep(new AtomicNumber(s, '/a', { promoteToLock: o({ lockPath: '/a-lock', ...x }) })) },
  ...(['get', 'increment', 'decrement'] as const).map((m): Entry => ({ name: `atomic.${m}`, source: { type: 'AtomicCallOptions' }, call: (x) => keep(new AtomicNumber(s, '/a'))[m](o(x)), poison: aborted })),
  ...(['add', 'subtract', 'trySet'] as const).map((m): Entry => ({ name: `atomic.${m}`, source: { type: 'AtomicCallOptions' }, call: (x) => keep(new AtomicNumber(s, '/a'))[m](1, o(x)), poison: aborted })),
  { name: 'atomic.compareAndSet', source: { type: 'AtomicCallOptions' }, call: (x) => keep(new AtomicNumber(s, '/a')).compareAndSet(0, 1, o(x)), poison: aborted },
  { name: 'atomic.forceSet', source: { type: 'AtomicCallOptions' }, call: (x) => keep(new AtomicNumber(s, '/a')).forceSet(1, o(x)), poison: aborted },
  { name: 'atomic.initialize', source: { type: 'AtomicCallOptions' }, call: (x) => keep(new AtomicNumber(s, '/a')).initialize(1, o(x)), poison: aborted },
  // Group membership.
  { name: 'new GroupMember', source: { type: 'GroupMemberOptions' }, call: (x) => keep(new GroupMember(s, '/g', 'a', undefined, o(x))) },
  { name: 'groupMember.start', source: { type: 'GroupStartOptions' }, call: (x) => keep(new GroupMember(s, '/g', 'a')).start(o(x)), poison: aborted },
  { name: 'groupMember.setThisData', source: { parameter: ['GroupMember', 'setThisData', 1] }, call: (x) => keep(new GroupMember(s, '/g', 'a')).setThisData('x', o(x)), poison: aborted },
  { name: 'groupMember.views', source: { type: 'GroupViewsOptions' }, call: (x) => keep(new GroupMember(s, '/g', 'a')).views(o(x)) },
  // Leader election.
  { name: 'new LeaderLatch', source: { type: 'LeaderLatchOptions' }, call: (x) => keep(new LeaderLatch(s, '/l', o(x))) },
  { name: 'new LeaderLatch errorBackoff', source: { property: ['LeaderLatchOptions', 'errorBackoff'] }, call: (x) => keep(new LeaderLatch(s, '/l', { errorBackoff: x })) },
  { name: 'latch.start', source: { type: 'LeaderWaitOptions' }, call: (x) => keep(new LeaderLatch(s, '/l')).start(o(x)), poison: aborted },
  { name: 'latch.awaitLeadership', source: { type: 'LeaderWaitOptions' }, call: (x) => keep(new LeaderLatch(s, '/l')).awaitLeadership(o(x)), poison: aborted },
  { name: 'new LeaderSelector', source: { type: 'LeaderLatchOptions' }, call: (x) => keep(new LeaderSelector(s, '/l', o(x))) },
  { name: 'selector.run', source: { type: 'RunOptions' }, call: (x) => keep(new LeaderSelector(s, '/l')).run(() => 1, o(x)), poison: aborted },
  // The queue.
  { name: 'new DistributedQueue', source: { type: 'QueueOptions' }, call: (x) => keep(new DistributedQueue(s, '/q', o(x))) },
  { name: 'queue.put', source: { type: 'PutOptions' }, call: (x) => keep(new DistributedQueue(s, '/q')).put('a', o(x)), poison: aborted },
  { name: 'queue.putAll', source: { type: 'PutOptions' }, call: (x) => keep(new DistributedQueue(s, '/q')).putAll(['a'], o(x)), poison: aborted },
  ...(['poll', 'take', 'size', 'peek'] as const).map((m): Entry => ({ name: `queue.${m}`, source: { type: 'TakeOptions' }, call: (x) => keep(new DistributedQueue(s, '/q'))[m](o(x)), poison: aborted })),
  { name: 'queue.consume', source: { type: 'ConsumeOptions' }, call: (x) => keep(new DistributedQueue(s, '/q')).consume(() => 1, o(x)), poison: aborted },
  { name: 'queue.consume redeliveryBackoff', source: { type: 'BackoffOptions' }, call: (x) => keep(new DistributedQueue(s, '/q')).consume(() => 1, { redeliveryBackoff: x, signal: AbortSignal.abort() }) },
  { name: 'queue.consume errorBackoff', source: { type: 'BackoffOptions' }, call: (x) => keep(new DistributedQueue(s, '/q')).consume(() => 1, { errorBackoff: x, signal: AbortSignal.abort() }) },
  { name: 'queue.deadLetters', source: { type: 'DeadLetterOptions' }, call: (x) => keep(new DistributedQueue(s, '/q')).deadLetters(o(x)), poison: aborted },
  { name: 'queue.requeueDeadLetter', source: { type: 'PutOptions' }, call: (x) => keep(new DistributedQueue(s, '/q')).requeueDeadLetter(letter, o(x)), poison: aborted },
  { name: 'queue.discardDeadLetter', source: { type: 'QueueCallOptions' }, call: (x) => keep(new DistributedQueue(s, '/q')).discardDeadLetter(letter, o(x)), poison: aborted },
  // Discovery (zk-recipes/discovery).
  { name: 'new ServiceDiscovery', source: { type: 'ServiceDiscoveryOptions' }, call: (x) => new ServiceDiscovery(s, o<{ basePath: string }>({ basePath: '/d', ...x })) },
  // Caches.
  { name: 'new TreeCache', source: { type: 'TreeCacheOptions' }, call: (x) => keep(new TreeCache(s, '/c', o(x))) },
  { name: 'new ChildrenCache', source: { type: 'CacheOptions' }, call: (x) => keep(new ChildrenCache(s, '/c', o(x))) },
  { name: 'new NodeCache', source: { type: 'CacheOptions' }, call: (x) => keep(new NodeCache(s, '/c', o(x))) },
  { name: 'new TreeCache errorBackoff', source: { property: ['CacheOptions', 'errorBackoff'] }, call: (x) => keep(new TreeCache(s, '/c', { errorBackoff: x })) },
  { name: 'cache.start', source: { type: 'CacheWaitOptions' }, call: (x) => keep(new TreeCache(s, '/c')).start(o(x)), poison: aborted },
  { name: 'cache.ready', source: { type: 'CacheWaitOptions' }, call: (x) => keep(new NodeCache(s, '/c')).ready(o(x)), poison: aborted },
  { name: 'cache.events', source: { type: 'CacheIteratorOptions' }, call: (x) => keep(new ChildrenCache(s, '/c')).events(o(x)) },
  // Nodes.
  { name: 'new PersistentNode', source: { type: 'PersistentNodeOptions' }, call: (x) => keep(new PersistentNode(s, '/n', o(x))) },
  { name: 'new PersistentNode errorBackoff', source: { property: ['PersistentNodeOptions', 'errorBackoff'] }, call: (x) => keep(new PersistentNode(s, '/n', { errorBackoff: x })) },
  { name: 'persistentNode.waitForInitialCreate', source: { type: 'PersistentNodeWaitOptions' }, call: (x) => started(new PersistentNode(s, '/n')).waitForInitialCreate(o(x)), poison: aborted },
  { name: 'persistentNode.setData', source: { type: 'PersistentNodeWaitOptions' }, call: (x) => keep(new PersistentNode(s, '/n')).setData('d', o(x)), poison: aborted },
  { name: 'persistentNode.close', source: { type: 'PersistentNodeWaitOptions' }, call: (x) => new PersistentNode(s, '/n').close(o(x)), poison: aborted },
  // The test kit: poisoned so that nothing starts.
  { name: 'TestingServer.start', source: { type: 'TestingServerOptions' }, call: (x) => TestingServer.start(o(x)), poison: () => ({ tickTime: 0 }) },
  { name: 'TestingServer.start tls', source: { type: 'ServerTlsFiles' }, call: (x) => TestingServer.start({ tls: o(x) }), poison: () => ({ keyStore: '' }) },
  { name: 'generateTestCertificates', source: { type: 'GenerateCertificatesOptions' }, call: (x) => generateTestCertificates(o(x)), poison: () => ({ dir: '' }) },
  { name: 'TestingCluster.start', source: { type: 'TestingClusterOptions' }, call: (x) => TestingCluster.start(3, o(x)), poison: () => ({ tickTime: 0 }) },
  { name: 'TestingServer.start sasl', source: { type: 'SaslServerOptions' }, call: (x) => TestingServer.start({ sasl: o(x) }), poison: () => ({ users: 'poison' }) },
  { name: 'cluster.waitForQuorum', source: { type: 'WaitForQuorumOptions' }, call: (x) => TestingCluster.prototype.waitForQuorum.call(fakeCluster, o(x)), poison: () => ({ timeoutMs: 0 }) },
  { name: 'cluster.leaderId', source: { type: 'FourLetterWordOptions' }, call: (x) => TestingCluster.prototype.leaderId.call(fakeCluster, o(x)), poison: () => ({ timeoutMs: 0 }) },
  { name: 'server.restart', source: { type: 'RestartOptions' }, call: (x) => ZooKeeperProcess.prototype.restart.call({} as ZooKeeperProcess, o(x)), poison: () => ({ timeoutMs: 0 }) },
  { name: 'server.stop', source: { parameter: ['ZooKeeperProcess', 'stop', 0] }, call: (x) => ZooKeeperProcess.prototype.stop.call({} as ZooKeeperProcess, o(x)), poison: () => ({ timeoutMs: -1 }) },
  { name: 'ChaosProxy.start', source: { type: 'ChaosProxyOptions' }, call: (x) => ChaosProxy.start(o(x)), poison: () => ({ targetPort: 0 }) },
  { name: 'proxy.loseReply match', source: { type: 'LoseReplyMatch' }, call: (x) => proxy.loseReply(o(x), { timeoutMs: 0 }) },
  { name: 'proxy.loseReply', source: { type: 'LoseReplyOptions' }, call: (x) => proxy.loseReply({}, o(x)), poison: () => ({ timeoutMs: 0 }) },
  { name: 'connectAs', source: { parameter: ['ZkSession', 'connect', 1] }, call: (x) => connectAs(s.connectString, testIdentity('u'), o(x)), poison: aborted },
  { name: 'waitFor', source: { type: 'WaitForOptions' }, call: (x) => waitFor(() => true, o(x)) },
  { name: 'expireSession', source: { type: 'ExpireSessionOptions' }, call: (x) => expireSession(s, proxy, o(x)) },
  { name: 'fourLetterWord', source: { type: 'FourLetterWordOptions' }, call: (x) => fourLetterWord('127.0.0.1', 1, 'ruok', o(x)), poison: () => ({ timeoutMs: 0 }) },
  // zk-recipes/discovery: an unstarted discovery checks the options, then refuses (not started).
  { name: 'new ServiceDiscovery', source: { type: 'ServiceDiscoveryOptions' }, call: (x) => keep(new ServiceDiscovery(s, o<{ basePath: string }>({ basePath: '/d', ...x }))) },
  { name: 'discovery.start', source: { type: 'DiscoveryCallOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).start(o(x)), poison: aborted },
  { name: 'discovery.register', source: { type: 'DiscoveryCallOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).register({ name: 'a' }, o(x)) },
  { name: 'discovery.update', source: { type: 'DiscoveryCallOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).update({ name: 'a' }, o(x)) },
  { name: 'discovery.unregister', source: { type: 'DiscoveryCallOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).unregister('a', o(x)) },
  { name: 'discovery.close', source: { type: 'DiscoveryCallOptions' }, call: (x) => new ServiceDiscovery(s, { basePath: '/d' }).close(o(x)) },
  { name: 'discovery.queryForNames', source: { type: 'DiscoveryQueryOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).queryForNames(o(x)) },
  { name: 'discovery.queryForInstances', source: { type: 'DiscoveryQueryOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).queryForInstances('a', o(x)) },
  { name: 'discovery.queryForInstance', source: { type: 'DiscoveryQueryOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).queryForInstance('a', 'b', o(x)) },
  { name: 'discovery.serviceCache', source: { type: 'ServiceCacheOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).serviceCache('a', o(x)) },
  { name: 'discovery.serviceProvider', source: { type: 'ServiceProviderOptions' }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).serviceProvider('a', o(x)) },
  { name: 'serviceCache.changes', source: { type: 'ServiceCacheChangesOptions' }, call: (x) => keep(new ServiceCache(new ServiceDiscovery(s, { basePath: '/d' }), 'a')).changes(o(x)).return?.() },
  { name: 'serviceProvider downInstancePolicy', source: { property: ['ServiceProviderOptions', 'downInstancePolicy'] }, call: (x) => keep(new ServiceDiscovery(s, { basePath: '/d' })).serviceProvider('a', { downInstancePolicy: x }) },
  // The chaos suite.
  { name: 'runChaos', source: { type: 'RunChaosOptions' }, call: (x) => runChaos(o(x)), poison: () => ({ seconds: 0 }) },
  { name: 'new Nemesis', source: { type: 'NemesisOptions' }, call: (x) => new Nemesis(o(x)) },
  { name: 'Nemesis.run', source: { type: 'NemesisRunOptions' }, call: (x) => nemesis().run(o(x)), poison: () => ({ durationMs: -1 }) },
  { name: 'new HistoryRecorder', source: { type: 'HistoryRecorderOptions' }, call: (x) => new HistoryRecorder(o(x)) },
  { name: 'checkHistory', source: { type: 'CheckOptions' }, call: (x) => checkHistory(history, o(x)) },
  {
    name: 'expireSessionByTicket',
    source: { type: 'ExpireByTicketOptions' },
    call: (x) => expireSessionByTicket({ sessionId: 1n, password: Buffer.alloc(16), timeoutMs: 1000 }, [proxy], 'h:1', o(x)),
    poison: () => ({ timeoutMs: 0 }),
  },
];

/** How a call ended: its error, or undefined. */
async function outcome(call: () => unknown): Promise<unknown> {
  try {
    await call();
    return undefined;
  } catch (err) {
    return err;
  }
}

const unknownKey = (err: unknown): boolean => err instanceof InvalidArgumentError && /^unknown (option|key) /.test(err.message);

describe('options: every documented key is accepted, any other refused', () => {
  let keys: Map<Source, string[]>;
  before(async () => {
    s = new ZkSession(`127.0.0.1:${await freePort()}`, { connectTimeoutMs: 100, spinDelayMs: 20 });
    proxy = await ChaosProxy.start({ targetPort: await freePort() });
    keys = documentedKeys(entries.map((e) => e.source));
  });
  after(async () => {
    await Promise.all(opened.map((x) => x.close().catch(() => undefined)));
    await s.close();
    await proxy.close();
  });

  for (const entry of entries) {
    test(entry.name, async () => {
      const documented = keys.get(entry.source) as string[];
      const all = Object.fromEntries(documented.map((k) => [k, undefined]));
      const accepted = await outcome(() => entry.call({ ...all, ...entry.poison?.() }));
      assert.ok(!unknownKey(accepted), `${entry.name} refused a documented key (${documented.join(', ')}): ${String(accepted)}`);
      // One at a time too, so that no key is accepted only beside another.
      for (const k of documented) {
        const one = await outcome(() => entry.call({ [k]: undefined, ...entry.poison?.() }));
        assert.ok(!unknownKey(one), `${entry.name} refused its documented key ${k}: ${String(one)}`);
      }
      const refused = await outcome(() => entry.call({ ...entry.poison?.(), notAnOption: 1 }));
      assert.ok(unknownKey(refused) && (refused as Error).message.includes("'notAnOption'"), `${entry.name} accepted an unknown key: ${String(refused)}`);
    });
  }
});
