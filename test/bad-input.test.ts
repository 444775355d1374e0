// A table of bad input for every public function and option of zk-recipes and
// zk-recipes/testing (issue 10, "Done when"): invalid paths, numbers at and past their limits,
// wrong types, aborted signals, use after close, a refusing server and an unreachable one.
// Each row must end with a typed error (a ZkRecipesError with a stable code, the abort reason,
// or the kit's own typed errors) within a deadline, send nothing it should not, leave nothing in
// ZooKeeper, and raise no uncaught exception.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ClosedError,
  ConnectionLossError,
  DistributedQueue,
  IllegalStateError,
  InvalidArgumentError,
  LeaderLatch,
  LeaderSelector,
  LockTimeoutError,
  Mutex,
  NotHeldError,
  OperationTimeoutError,
  ReadWriteLock,
  Semaphore,
  ZkRecipesError,
  ZkSession,
  MultiLock,
  type AcquireOptions,
  type LockHandle,
  type TryAcquireOptions,
  type SessionCounters,
} from '../src/index.js';
// Internal helpers (not exported from the package root), still checked for bad input.
import { backoffDelay } from '../src/client/retry.js';
import { joinPath, parentOf, validatePath } from '../src/client/validate.js';
import { compareSeq, parseNode, protectedPrefix, sortChildren } from '../src/driver/names.js';
import { readPredicate, windowPredicate } from '../src/driver/predicates.js';
import {
  ChaosProxy,
  cons,
  dump,
  expireSession,
  fourLetterWord,
  freePort,
  freePorts,
  jaasServerConfig,
  locateZooKeeper,
  mntr,
  parseCons,
  parseDump,
  parseMntr,
  parseSrvr,
  parseWatches,
  ruok,
  srvr,
  TestingCluster,
  TestingServer,
  waitFor,
  watchesByPath,
  watchesBySession,
  withTimeout,
  ZooKeeperNotInstalledError,
} from '../src/testing/index.js';
import { nextState, ServerFixture, uniquePath } from './helpers.js';

const fx = new ServerFixture();

// No row may crash the process: anything uncaught fails the file.
const uncaught: unknown[] = [];
const onUncaught = (err: unknown): void => {
  uncaught.push(err);
};
process.on('uncaughtException', onUncaught);
process.on('unhandledRejection', onUncaught);

/** What a row's call must end with. */
type Expect =
  | (abstract new (...args: never[]) => Error)
  | 'reason' // the row's abort reason
  | 'timeout-reason' // an AbortSignal.timeout()'s reason
  | 'resolves';

/** One case: a call and the error it must end with. */
interface Row {
  readonly name: string;
  readonly call: (c: Ctx) => unknown;
  readonly expect: Expect;
  /** Requests the healthy session may send for this row (default none). */
  readonly sends?: boolean;
  /** What the error's message must say (e.g. the option it names). */
  readonly message?: RegExp;
}

/** What rows are given. */
interface Ctx {
  /** A healthy session. */
  readonly s: ZkSession;
  /** A unique path of this row, which must not exist afterwards. */
  readonly path: string;
  /** An abort reason and a signal already aborted with it. */
  readonly reason: Error;
  readonly aborted: AbortSignal;
  /** Connected through a proxy that now refuses connections (SUSPENDED). */
  readonly refusing: ZkSession;
  /** Pointed at a free port nobody listens on (never connected). */
  readonly unreachable: ZkSession;
  /** Closed. */
  readonly closed: ZkSession;
  /** A handle already released. */
  readonly released: LockHandle;
  /** A started latch that leads (at its own path). */
  readonly leader: LeaderLatch;
  /** The proxy in front of the server, passing traffic. */
  readonly proxy: ChaosProxy;
}

const DEADLINE_MS = 5000;
const REQUESTS: (keyof SessionCounters)[] = ['create', 'delete', 'exists', 'getData', 'setData', 'getChildren', 'multi', 'sync', 'removeWatches'];

let ctx: Omit<Ctx, 'path'>;
let leaderPath: string;
let extra: ZkSession[] = [];

// Inside the file's one suite: Node 20 does not wait for one root hook before the next.
function setUp(): void {
before(async () => {
  const s = await fx.pool.connect(fx.server.connectString);
  const reason = new Error('the row gave up');
  // Refusing: connected, then every connection attempt is reset.
  const refusingProxy = await fx.proxy();
  const refusing = await fx.pool.connect(refusingProxy.connectString, { sessionTimeoutMs: 60_000, connectTimeoutMs: 300 });
  const suspended = nextState(refusing, 'SUSPENDED', 5000);
  refusingProxy.reject(true);
  refusingProxy.dropAll();
  await suspended;
  const unreachable = new ZkSession(`127.0.0.1:${await freePort()}`, { connectTimeoutMs: 300, spinDelayMs: 20 });
  const closed = await fx.pool.connect(fx.server.connectString);
  await closed.close();
  const releasedPath = uniquePath('released');
  const m = new Mutex(s, releasedPath, { reapParentAfterMs: 0 });
  const released = await m.acquire();
  await released.release();
  await m.close();
  leaderPath = uniquePath('leader');
  const leader = new LeaderLatch(s, leaderPath);
  leader.start();
  await leader.awaitLeadership({ timeoutMs: 5000 });
  const proxy = await fx.proxy();
  extra = [unreachable];
  ctx = { s, reason, aborted: AbortSignal.abort(reason), refusing, unreachable, closed, released, leader, proxy };
});

after(async () => {
  await ctx?.leader.close();
  await Promise.all(extra.map((x) => x.close()));
  if (leaderPath) {
    await fx.observer.deleteRecursive(leaderPath);
    // The released mutex's directory was reaped on close.
  }
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});
}

function requests(s: ZkSession): number {
  const c = s.counters;
  return REQUESTS.reduce((n, k) => n + c[k], 0);
}

/** Runs one row: its outcome within the deadline, what it sent, and what it left. */
async function runRow(row: Row): Promise<void> {
  const c: Ctx = { ...ctx, path: uniquePath(row.name.slice(0, 40)) };
  const before = requests(c.s);
  const outcome = await withTimeout(
    Promise.resolve()
      .then(() => row.call(c))
      .then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    DEADLINE_MS,
    row.name,
  );
  if (row.expect === 'resolves') {
    assert.ok(outcome.ok, `expected to resolve, got ${outcome.ok ? '' : String(outcome.error)}`);
  } else {
    assert.ok(!outcome.ok, `expected a rejection, resolved with ${outcome.ok ? String(outcome.value) : ''}`);
    const error = outcome.error;
    if (row.expect === 'reason') assert.equal(error, c.reason, `expected the abort reason, got ${String(error)}`);
    else if (row.expect === 'timeout-reason') assert.ok(error instanceof DOMException && error.name === 'TimeoutError', `expected a TimeoutError reason, got ${String(error)}`);
    else {
      assert.ok(error instanceof row.expect, `expected ${row.expect.name}, got ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      if (error instanceof ZkRecipesError) assert.equal(typeof error.code, 'string');
      else assert.equal(typeof (error as { code?: unknown }).code, 'string', 'a typed error has a stable code');
    }
    if (row.expect === InvalidArgumentError) assert.match((error as Error).message, /\w+/, 'the message names the argument');
    if (row.message) assert.match((error as Error).message, row.message);
  }
  if (!row.sends) assert.equal(requests(c.s) - before, 0, 'nothing was sent');
  assert.equal(await fx.observer.exists(c.path), null, `nothing left at ${c.path}`);
}

/** Rows that wait for a deadline (an outage) run side by side; the others one by one. */
const slow = (row: Row): boolean => /refusing|unreachable|timeout\(/.test(row.name);

function table(name: string, rows: readonly Row[]): void {
  describe(name, () => {
    for (const row of rows.filter((r) => !slow(r))) test(row.name, () => runRow(row));
    const waits = rows.filter(slow);
    if (waits.length > 0) {
      describe('in an outage', { concurrency: true }, () => {
        for (const row of waits) test(row.name, () => runRow(row));
      });
    }
  });
}

const IA = InvalidArgumentError;
const BAD_PATHS: readonly unknown[] = ['', 'relative', '/trailing/', '/a//b', '/a/./b', '/a/../b', 42, null, undefined, '/nul\u0000'];
const BAD_TIMEOUTS: readonly unknown[] = [-1, Number.NaN, Infinity, 2 ** 31, 1e12, '100', null];
const BAD_OPTIONS: readonly unknown[] = [null, 'x', 42, true];
const BAD_BOOLEANS: readonly unknown[] = ['false', 'true', 0, 1, null];
const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));
/**
 * A misspelled option: `call` passes `{ [key]: ... }` where `meant` was meant. It must be refused
 * (not ignored: `{ timeout: 5 }` would wait forever) with a message naming both.
 */
const typo = (name: string, key: string, meant: string, call: Row['call']): Row => ({
  name: `${name}: misspelled option ${key}`,
  call,
  expect: InvalidArgumentError,
  message: new RegExp(`unknown (option|key) '${key}' of .*: did you mean '${meant}'\\?`),
});

// ---- the session ----------------------------------------------------------------------------

const sessionRows: Row[] = [
  ...['', '127.0.0.1:abc', '127.0.0.1:-1', '127.0.0.1:0', '127.0.0.1:70000', '127.0.0.1:2181:9', '[::1]:2181', 'a,,b', 'a b:1', 'h:1/', 'h:1/bad/', 42, null].map(
    (cs): Row => ({ name: `new ZkSession(${show(cs)})`, call: () => new ZkSession(cs as string), expect: IA }),
  ),
  ...BAD_OPTIONS.map((o): Row => ({ name: `new ZkSession(options ${show(o)})`, call: () => new ZkSession(fx.server.connectString, o as never), expect: IA })),
  ...(
    [
      ['sessionTimeoutMs', [0, -1, Number.NaN, 1.5, 2 ** 31, '1000']],
      ['connectTimeoutMs', BAD_TIMEOUTS],
      ['spinDelayMs', [-1, Number.NaN, 1.5, 2 ** 31, '5']],
      ['maxDataBytes', [-1, Number.NaN, 1.5, 2 ** 40, '5']],
      ['maxPacketBytes', [0, 10, Number.NaN, 2 ** 40, '5']],
      ['renewOnLoss', BAD_BOOLEANS],
      ['auth', ['digest:x', [{ scheme: 'digest' }], [null], [{ scheme: '', credentials: 'a:b' }], null]],
      ['sasl', ['DIGEST-MD5', null, 42, {}, { mechanism: 'GSSAPI', username: 'u', password: 'p' }, { mechanism: 'PLAIN', username: 'u', password: 'p' }, { mechanism: 'DIGEST-MD5', username: 'u' }, { mechanism: 'DIGEST-MD5', username: '', password: 'p' }, { mechanism: 'DIGEST-MD5', username: 'u', password: 'p', serverHost: '' }, { mechanism: 'DIGEST-MD5', username: 'u', password: 'p', realm: 'x' }]],
      ['retry', ['x', 42, null, { maxRetries: -1 }, { maxRetries: 1.5 }, { baseDelayMs: -1 }, { maxDelayMs: 2 ** 31 }, { deadlineMs: Number.NaN }, { baseDelayMs: 500, maxDelayMs: 100 }]],
    ] as const
  ).flatMap(([key, values]) =>
    values.map((v): Row => ({ name: `new ZkSession({ ${key}: ${show(v)} })`, call: () => new ZkSession(fx.server.connectString, { [key]: v } as never), expect: IA })),
  ),
  { name: 'ZkSession.connect with an aborted signal', call: (c) => ZkSession.connect(fx.server.connectString, { signal: c.aborted }), expect: 'reason' },
  ...BAD_OPTIONS.map((o): Row => ({ name: `ZkSession.connect(cs, ${show(o)})`, call: () => ZkSession.connect(fx.server.connectString, o as never), expect: IA })),
  { name: 'ZkSession.connect("127.0.0.1:abc")', call: () => ZkSession.connect('127.0.0.1:abc'), expect: IA },
  { name: 'ZkSession.connect({ signal: {} })', call: () => ZkSession.connect(fx.server.connectString, { signal: {} as AbortSignal }), expect: IA },
  ...BAD_TIMEOUTS.map((t): Row => ({ name: `waitConnected({ timeoutMs: ${show(t)} })`, call: (c) => c.s.waitConnected({ timeoutMs: t as number }), expect: IA })),
  ...BAD_OPTIONS.map((o): Row => ({ name: `waitConnected(${show(o)})`, call: (c) => c.s.waitConnected(o as never), expect: IA })),
  { name: 'waitConnected({ signal: {} })', call: (c) => c.s.waitConnected({ signal: {} as AbortSignal }), expect: IA },
  { name: 'waitConnected with an aborted signal', call: (c) => c.s.waitConnected({ signal: c.aborted }), expect: 'reason' },
  ...BAD_PATHS.flatMap((p): Row[] => [
    { name: `create(${show(p)})`, call: (c) => c.s.create(p as string), expect: IA },
    { name: `createWithStat(${show(p)})`, call: (c) => c.s.createWithStat(p as string), expect: IA },
    { name: `delete(${show(p)})`, call: (c) => c.s.delete(p as string), expect: IA },
    { name: `exists(${show(p)})`, call: (c) => c.s.exists(p as string), expect: IA },
    { name: `getData(${show(p)})`, call: (c) => c.s.getData(p as string), expect: IA },
    { name: `setData(${show(p)})`, call: (c) => c.s.setData(p as string, 'x'), expect: IA },
    { name: `getChildren(${show(p)})`, call: (c) => c.s.getChildren(p as string), expect: IA },
    { name: `getDataWatch(${show(p)})`, call: (c) => c.s.getDataWatch(p as string), expect: IA },
    { name: `getChildrenWatch(${show(p)})`, call: (c) => c.s.getChildrenWatch(p as string), expect: IA },
    { name: `existsWatch(${show(p)})`, call: (c) => c.s.existsWatch(p as string), expect: IA },
    { name: `addWatch(${show(p)})`, call: (c) => c.s.addWatch(p as string), expect: IA },
    { name: `sync(${show(p)})`, call: (c) => c.s.sync(p as string), expect: IA },
    { name: `mkdirp(${show(p)})`, call: (c) => c.s.mkdirp(p as string), expect: IA },
    { name: `deleteRecursive(${show(p)})`, call: (c) => c.s.deleteRecursive(p as string), expect: IA },
  ]),
  { name: 'deleteRecursive("/")', call: (c) => c.s.deleteRecursive('/'), expect: IA },
  ...BAD_OPTIONS.flatMap((o): Row[] => [
    { name: `create(path, ${show(o)})`, call: (c) => c.s.create(c.path, o as never), expect: IA },
    { name: `delete(path, ${show(o)})`, call: (c) => c.s.delete(c.path, o as never), expect: IA },
    { name: `exists(path, ${show(o)})`, call: (c) => c.s.exists(c.path, o as never), expect: IA },
    { name: `getData(path, ${show(o)})`, call: (c) => c.s.getData(c.path, o as never), expect: IA },
    { name: `setData(path, x, ${show(o)})`, call: (c) => c.s.setData(c.path, 'x', o as never), expect: IA },
    { name: `getChildren(path, ${show(o)})`, call: (c) => c.s.getChildren(c.path, o as never), expect: IA },
    { name: `getDataWatch(path, ${show(o)})`, call: (c) => c.s.getDataWatch(c.path, o as never), expect: IA },
    { name: `getChildrenWatch(path, ${show(o)})`, call: (c) => c.s.getChildrenWatch(c.path, o as never), expect: IA },
    { name: `existsWatch(path, ${show(o)})`, call: (c) => c.s.existsWatch(c.path, o as never), expect: IA },
    { name: `addWatch(path, ${show(o)})`, call: (c) => c.s.addWatch(c.path, o as never), expect: IA },
    { name: `sync(path, ${show(o)})`, call: (c) => c.s.sync(c.path, o as never), expect: IA },
    { name: `multi(ops, ${show(o)})`, call: (c) => c.s.multi([{ type: 'create', path: c.path }], o as never), expect: IA },
    { name: `mkdirp(path, ${show(o)})`, call: (c) => c.s.mkdirp(c.path, o as never), expect: IA },
    { name: `deleteRecursive(path, ${show(o)})`, call: (c) => c.s.deleteRecursive(c.path, o as never), expect: IA },
  ]),
  ...['yes', 1, null].map((r): Row => ({ name: `addWatch(path, { recursive: ${show(r)} })`, call: (c) => c.s.addWatch(c.path, { recursive: r as never }), expect: IA })),
  { name: 'addWatch on a closed session', call: (c) => c.closed.addWatch('/x'), expect: ClosedError },
  ...[42, null, true, {}, [1]].map((d): Row => ({ name: `create data ${show(d)}`, call: (c) => c.s.create(c.path, { data: d as never }), expect: IA })),
  { name: 'create data over maxDataBytes', call: (c) => c.s.create(c.path, { data: Buffer.alloc(1_000_001) }), expect: IA },
  { name: 'setData over maxDataBytes', call: (c) => c.s.setData(c.path, Buffer.alloc(1_000_001)), expect: IA },
  { name: 'setData(path, undefined)', call: (c) => c.s.setData(c.path, undefined as never), expect: IA },
  { name: 'setData(path, 42)', call: (c) => c.s.setData(c.path, 42 as never), expect: IA },
  { name: 'create PERSISTENT_WITH_TTL without ttlMs', call: (c) => c.s.create(c.path, { mode: 'PERSISTENT_WITH_TTL' }), expect: IA },
  { name: 'create PERSISTENT with ttlMs', call: (c) => c.s.create(c.path, { ttlMs: 1000 }), expect: IA },
  ...[0, -1, 1.5, 2 ** 40, '5', null].map((t): Row => ({ name: `create ttlMs ${show(t)}`, call: (c) => c.s.createWithStat(c.path, { mode: 'PERSISTENT_SEQUENTIAL_WITH_TTL', ttlMs: t as number }), expect: IA })),
  ...(['CONTAINER', 'PERSISTENT_WITH_TTL'] as const).map((mode): Row => ({ name: `multi create ${mode}`, call: (c) => c.s.multi([{ type: 'create', path: c.path, mode }]), expect: IA })),
  ...['yes', 1, null].map((v): Row => ({ name: `mkdirp(path, { container: ${show(v)} })`, call: (c) => c.s.mkdirp(c.path, { container: v as never }), expect: IA })),
  ...['BOGUS', 'persistent', 1, null].map((m): Row => ({ name: `create mode ${show(m)}`, call: (c) => c.s.create(c.path, { mode: m as never }), expect: IA })),
  ...[[], 'open', [{ perms: 32, scheme: 'world', id: 'anyone' }], [{ perms: -1, scheme: 'world', id: 'anyone' }], [{ perms: 1.5, scheme: 'world', id: 'anyone' }], [{ scheme: 'world', id: 'anyone' }], [null], null].map(
    (a): Row => ({ name: `create acl ${JSON.stringify(a)}`, call: (c) => c.s.create(c.path, { acl: a as never }), expect: IA }),
  ),
  ...[-(2 ** 31) - 1, 1.5, Number.NaN, 2 ** 31, '1', null].flatMap((v): Row[] => [
    { name: `delete version ${show(v)}`, call: (c) => c.s.delete(c.path, { version: v as number }), expect: IA },
    { name: `setData version ${show(v)}`, call: (c) => c.s.setData(c.path, 'x', { version: v as number }), expect: IA },
  ]),
  ...[[], 'ops', null, [null], [{ type: 'nope', path: '/x' }], [{ type: 'create', path: 'x' }], [{ type: 'check', path: '/x', version: 2 ** 31 }], [{ type: 'create', path: '/x', mode: 'BAD' }], [{ type: 'setData', path: '/x', data: 5 }]].map(
    (ops): Row => ({ name: `multi(${JSON.stringify(ops)})`, call: (c) => c.s.multi(ops as never), expect: IA }),
  ),
  { name: 'multi over the packet limit', call: (c) => c.s.multi(Array.from({ length: 2000 }, (_, i) => ({ type: 'create' as const, path: `${c.path}/n${i}`, data: Buffer.alloc(600) }))), expect: IA },
  ...(['create', 'getData', 'exists', 'getChildren', 'sync', 'delete', 'setData', 'multi', 'getDataWatch', 'getChildrenWatch', 'existsWatch', 'addWatch', 'mkdirp', 'deleteRecursive'] as const).map(
    (op): Row => ({
      name: `${op} with an aborted signal`,
      call: (c) => {
        const o = { signal: c.aborted };
        switch (op) {
          case 'setData':
            return c.s.setData(c.path, 'x', o);
          case 'multi':
            return c.s.multi([{ type: 'create', path: c.path }], o);
          default:
            return c.s[op](c.path, o);
        }
      },
      expect: 'reason',
    }),
  ),
  ...(['create', 'getData', 'getChildren', 'delete', 'getDataWatch', 'addWatch', 'sync'] as const).map(
    (op): Row => ({ name: `${op} with signal {}`, call: (c) => c.s[op](c.path, { signal: {} as AbortSignal }), expect: IA }),
  ),
  // Misspelled options: refused before anything is sent, naming the option meant.
  typo('new ZkSession', 'sesionTimeoutMs', 'sessionTimeoutMs', () => new ZkSession(fx.server.connectString, { sesionTimeoutMs: 5000 } as never)),
  typo('new ZkSession', 'connectTimeout', 'connectTimeoutMs', () => new ZkSession(fx.server.connectString, { connectTimeout: 5000 } as never)),
  typo('new ZkSession retry', 'maxRetry', 'maxRetries', () => new ZkSession(fx.server.connectString, { retry: { maxRetry: 1 } } as never)),
  typo('ZkSession.connect', 'singal', 'signal', (c) => ZkSession.connect(fx.server.connectString, { singal: c.aborted } as never)),
  typo('ZkSession.connect', 'sessionTimeout', 'sessionTimeoutMs', () => ZkSession.connect(fx.server.connectString, { sessionTimeout: 5000 } as never)),
  typo('waitConnected', 'timeout', 'timeoutMs', (c) => c.s.waitConnected({ timeout: 5 } as never)),
  typo('create', 'mod', 'mode', (c) => c.s.create(c.path, { mod: 'EPHEMERAL' } as never)),
  typo('createWithStat', 'dat', 'data', (c) => c.s.createWithStat(c.path, { dat: 'x' } as never)),
  typo('delete', 'verison', 'version', (c) => c.s.delete(c.path, { verison: 3 } as never)),
  typo('setData', 'verison', 'version', (c) => c.s.setData(c.path, 'x', { verison: 3 } as never)),
  typo('mkdirp', 'acls', 'acl', (c) => c.s.mkdirp(c.path, { acls: [] } as never)),
  ...(['exists', 'getData', 'getChildren', 'sync', 'deleteRecursive', 'getDataWatch', 'getChildrenWatch', 'existsWatch'] as const).map((op) =>
    typo(op, 'Signal', 'signal', (c) => c.s[op](c.path, { Signal: c.aborted } as never)),
  ),
  typo('multi', 'sigal', 'signal', (c) => c.s.multi([{ type: 'create', path: c.path }], { sigal: c.aborted } as never)),
  // A misspelled key of an op would change its meaning: a check or setData of any version.
  typo('multi check op', 'verison', 'version', (c) => c.s.multi([{ type: 'check', path: c.path, verison: 3 } as never])),
  typo('multi setData op', 'versoin', 'version', (c) => c.s.multi([{ type: 'setData', path: c.path, data: 'x', versoin: 3 } as never])),
  typo('multi create op', 'mdoe', 'mode', (c) => c.s.multi([{ type: 'create', path: c.path, mdoe: 'EPHEMERAL' } as never])),
  { name: 'new ZkSession: an unknown option with no near key', call: () => new ZkSession(fx.server.connectString, { colour: 'red' } as never), expect: IA, message: /unknown option 'colour' of new ZkSession \(its options are 'sessionTimeoutMs'/ },
];

// ---- lock recipes ---------------------------------------------------------------------------

type LockKind = 'mutex' | 'semaphore' | 'read' | 'write';
const LOCKS: readonly LockKind[] = ['mutex', 'semaphore', 'read', 'write'];
/** What every lock recipe offers. */
interface LockLike {
  acquire(options?: AcquireOptions): Promise<LockHandle>;
  tryAcquire(options?: TryAcquireOptions): Promise<LockHandle | null>;
  runExclusive(fn: () => unknown, options?: AcquireOptions): Promise<unknown>;
  participants(): Promise<unknown>;
  close(): Promise<void>;
}
function lock(kind: LockKind, s: ZkSession, path: string, options: object = {}): LockLike {
  switch (kind) {
    case 'mutex':
      return new Mutex(s, path, options);
    case 'semaphore':
      return new Semaphore(s, path, { maxLeases: 2, ...options });
    case 'read':
      return new ReadWriteLock(s, path, options).readLock();
    case 'write':
      return new ReadWriteLock(s, path, options).writeLock();
  }
}
const lockRows: Row[] = LOCKS.flatMap((kind): Row[] => [
  ...BAD_PATHS.concat(['/']).map((p): Row => ({ name: `${kind}: path ${show(p)}`, call: (c) => lock(kind, c.s, p as string), expect: IA })),
  ...[{}, null, 'session', undefined].map((s): Row => ({ name: `${kind}: session ${show(s)}`, call: (c) => lock(kind, s as never, c.path), expect: IA })),
  ...(kind === 'semaphore' ? [] : BAD_OPTIONS.map((o): Row => ({ name: `${kind}: options ${show(o)}`, call: (c) => lock(kind, c.s, c.path, o as never), expect: IA }))),
  ...[5, null, {}].map((v): Row => ({ name: `${kind}: participantId ${show(v)}`, call: (c) => lock(kind, c.s, c.path, { participantId: v }), expect: IA })),
  { name: `${kind}: participantId over maxDataBytes`, call: (c) => lock(kind, c.s, c.path, { participantId: 'x'.repeat(1_000_001) }), expect: IA },
  ...[-1, Number.NaN, 2 ** 31, 1e12, '10', null, -Infinity].map((v): Row => ({ name: `${kind}: reapParentAfterMs ${show(v)}`, call: (c) => lock(kind, c.s, c.path, { reapParentAfterMs: v }), expect: IA })),
  ...BAD_BOOLEANS.map((v): Row => ({ name: `${kind}: watchOwnNode ${show(v)}`, call: (c) => lock(kind, c.s, c.path, { watchOwnNode: v }), expect: IA })),
  ...['LOST', 'bogus', 1, null].map((v): Row => ({ name: `${kind}: lossPolicy ${show(v)}`, call: (c) => lock(kind, c.s, c.path, { lossPolicy: v }), expect: IA })),
  ...BAD_TIMEOUTS.map((t): Row => ({ name: `${kind}: acquire({ timeoutMs: ${show(t)} })`, call: (c) => lock(kind, c.s, c.path).acquire({ timeoutMs: t as number }), expect: IA })),
  ...BAD_OPTIONS.map((o): Row => ({ name: `${kind}: acquire(${show(o)})`, call: (c) => lock(kind, c.s, c.path).acquire(o as never), expect: IA })),
  { name: `${kind}: acquire({ signal: {} })`, call: (c) => lock(kind, c.s, c.path).acquire({ signal: {} as AbortSignal }), expect: IA },
  { name: `${kind}: acquire with an aborted signal`, call: (c) => lock(kind, c.s, c.path).acquire({ signal: c.aborted }), expect: 'reason' },
  ...BAD_OPTIONS.map((o): Row => ({ name: `${kind}: tryAcquire(${show(o)})`, call: (c) => lock(kind, c.s, c.path).tryAcquire(o as never), expect: IA })),
  { name: `${kind}: tryAcquire({ signal: {} })`, call: (c) => lock(kind, c.s, c.path).tryAcquire({ signal: {} as AbortSignal }), expect: IA },
  { name: `${kind}: tryAcquire with an aborted signal`, call: (c) => lock(kind, c.s, c.path).tryAcquire({ signal: c.aborted }), expect: 'reason' },
  // A try never waits for the lock: a timeout is not one of its options.
  { name: `${kind}: tryAcquire({ timeoutMs: 5 })`, call: (c) => lock(kind, c.s, c.path).tryAcquire({ timeoutMs: 5 } as never), expect: IA, message: /unknown option 'timeoutMs' of tryAcquire/ },
  ...['x', null, 42, {}].map((fn): Row => ({ name: `${kind}: runExclusive(${show(fn)})`, call: (c) => lock(kind, c.s, c.path).runExclusive(fn as never), expect: IA })),
  { name: `${kind}: runExclusive(fn, { timeoutMs: -1 })`, call: (c) => lock(kind, c.s, c.path).runExclusive(() => 1, { timeoutMs: -1 }), expect: IA },
  { name: `${kind}: runExclusive(fn, null)`, call: (c) => lock(kind, c.s, c.path).runExclusive(() => 1, null as never), expect: IA },
  { name: `${kind}: runExclusive with an aborted signal`, call: (c) => lock(kind, c.s, c.path).runExclusive(() => 1, { signal: c.aborted }), expect: 'reason' },
  // Use after close: of the recipe, and of its session.
  ...(['acquire', 'tryAcquire', 'participants', 'runExclusive'] as const).flatMap((op): Row[] => [
    {
      name: `${kind}: ${op} after close`,
      call: async (c) => {
        const l = lock(kind, c.s, c.path);
        await l.close();
        return op === 'runExclusive' ? l.runExclusive(() => 1) : l[op]();
      },
      expect: ClosedError,
    },
    {
      name: `${kind}: ${op} after its session closed`,
      call: (c) => {
        const l = lock(kind, c.closed, c.path);
        return op === 'runExclusive' ? l.runExclusive(() => 1) : l[op]();
      },
      expect: ClosedError,
    },
  ]),
  // A refusing server and an unreachable one: every wait ends with its own deadline.
  { name: `${kind}: acquire({ timeoutMs: 500 }) on a refusing server`, call: (c) => lock(kind, c.refusing, c.path).acquire({ timeoutMs: 500 }), expect: LockTimeoutError },
  { name: `${kind}: acquire({ timeoutMs: 500 }) on an unreachable server`, call: (c) => lock(kind, c.unreachable, c.path).acquire({ timeoutMs: 500 }), expect: LockTimeoutError },
  { name: `${kind}: acquire({ signal: timeout(500) }) on a refusing server`, call: (c) => lock(kind, c.refusing, c.path).acquire({ signal: AbortSignal.timeout(500) }), expect: 'timeout-reason' },
  { name: `${kind}: tryAcquire() on a refusing server`, call: (c) => lock(kind, c.refusing, c.path).tryAcquire(), expect: ConnectionLossError },
  { name: `${kind}: tryAcquire() on an unreachable server`, call: (c) => lock(kind, c.unreachable, c.path).tryAcquire(), expect: ConnectionLossError },
  { name: `${kind}: participants() on a refusing server`, call: (c) => lock(kind, c.refusing, c.path).participants(), expect: ConnectionLossError },
  { name: `${kind}: close() on a refusing server`, call: (c) => lock(kind, c.refusing, c.path).close(), expect: 'resolves' },
  typo(`${kind}: constructor`, 'lossPolicies', 'lossPolicy', (c) => lock(kind, c.s, c.path, { lossPolicies: 'lost' })),
  typo(`${kind}: constructor`, 'participantID', 'participantId', (c) => lock(kind, c.s, c.path, { participantID: 'x' })),
  // `{ timeout: 5 }` was ignored, so the call waited without limit.
  typo(`${kind}: acquire`, 'timeout', 'timeoutMs', (c) => lock(kind, c.s, c.path).acquire({ timeout: 5 } as never)),
  typo(`${kind}: runExclusive`, 'timeout', 'timeoutMs', (c) => lock(kind, c.s, c.path).runExclusive(() => 1, { timeout: 5 } as never)),
  typo(`${kind}: tryAcquire`, 'singal', 'signal', (c) => lock(kind, c.s, c.path).tryAcquire({ singal: c.aborted } as never)),
]);

const semaphoreRows: Row[] = [
  ...[undefined, null, 'x', {}, { maxLeases: 0 }, { maxLeases: -1 }, { maxLeases: 1.5 }, { maxLeases: Number.NaN }, { maxLeases: Infinity }, { maxLeases: 2 ** 31 }, { maxLeases: '2' }].map(
    (o): Row => ({ name: `semaphore: options ${JSON.stringify(o) ?? 'undefined'}`, call: (c) => new Semaphore(c.s, c.path, o as never), expect: IA }),
  ),
  ...['V2', 'curator', null, 1].map((layout): Row => ({ name: `semaphore: layout ${show(layout)}`, call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2, layout: layout as never }), expect: IA })),
  ...[0, -1, 3, 1.5, Number.NaN, Infinity, 2 ** 31, '1', null].flatMap((n): Row[] => [
    { name: `semaphore: acquire(${show(n)}) (maxLeases 2)`, call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).acquire(n as number), expect: IA },
    { name: `semaphore: tryAcquire(${show(n)}) (maxLeases 2)`, call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).tryAcquire(n as number), expect: IA },
    { name: `semaphore: tryAcquire(${show(n)}, {}) (maxLeases 2)`, call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).tryAcquire(n as number, {}), expect: IA },
  ]),
  { name: 'semaphore: acquire(1, null)', call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).acquire(1, null as never), expect: IA },
  { name: 'semaphore: acquire(1, { timeoutMs: 2^31 })', call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).acquire(1, { timeoutMs: 2 ** 31 }), expect: IA },
  { name: 'semaphore: acquire(1, aborted)', call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).acquire(1, { signal: c.aborted }), expect: 'reason' },
  { name: 'semaphore: acquire(n) whose transaction is over the packet limit', call: (c) => new Semaphore(c.s, c.path, { maxLeases: 100_000 }).acquire(100_000), expect: IA },
  { name: "semaphore curator-v2: acquire with an aborted signal", call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2, layout: 'curator-v2' }).acquire({ signal: c.aborted }), expect: 'reason' },
  { name: 'semaphore curator-v2: acquire({ timeoutMs: 500 }) on a refusing server', call: (c) => new Semaphore(c.refusing, c.path, { maxLeases: 2, layout: 'curator-v2' }).acquire({ timeoutMs: 500 }), expect: LockTimeoutError },
  { name: 'semaphore curator-v2: tryAcquire() on an unreachable server', call: (c) => new Semaphore(c.unreachable, c.path, { maxLeases: 2, layout: 'curator-v2' }).tryAcquire(), expect: ConnectionLossError },
  typo('semaphore: constructor', 'maxLease', 'maxLeases', (c) => new Semaphore(c.s, c.path, { maxLease: 2 } as never)),
  typo('semaphore: constructor', 'layuot', 'layout', (c) => new Semaphore(c.s, c.path, { maxLeases: 2, layuot: 'curator-v2' } as never)),
  typo('semaphore: acquire(n, options)', 'timeout', 'timeoutMs', (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).acquire(1, { timeout: 5 } as never)),
  { name: 'rwlock: options null', call: (c) => new ReadWriteLock(c.s, c.path, null as never), expect: IA },
  { name: 'rwlock: path "/"', call: (c) => new ReadWriteLock(c.s, '/'), expect: IA },
  { name: 'handle: release() twice', call: (c) => c.released.release(), expect: NotHeldError },
  { name: 'handle: multi() after release', call: (c) => c.released.multi([{ type: 'create', path: c.path }]), expect: NotHeldError },
  { name: 'semaphore: tryAcquire(1, aborted)', call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).tryAcquire(1, { signal: c.aborted }), expect: 'reason' },
  ...BAD_OPTIONS.map((o): Row => ({ name: `multilock: tryAcquire(${show(o)})`, call: (c) => new MultiLock(c.s, [`${c.path}/a`, `${c.path}/b`]).tryAcquire(o as never), expect: IA })),
  { name: 'multilock: tryAcquire with an aborted signal', call: (c) => new MultiLock(c.s, [`${c.path}/a`, `${c.path}/b`]).tryAcquire({ signal: c.aborted }), expect: 'reason' },
  { name: 'semaphore: tryAcquire(1, null)', call: (c) => new Semaphore(c.s, c.path, { maxLeases: 2 }).tryAcquire(1, null as never), expect: IA },
];

// ---- leader election ------------------------------------------------------------------------

const leaderRows: Row[] = [
  ...BAD_PATHS.concat(['/']).flatMap((p): Row[] => [
    { name: `latch: path ${show(p)}`, call: (c) => new LeaderLatch(c.s, p as string), expect: IA },
    { name: `selector: path ${show(p)}`, call: (c) => new LeaderSelector(c.s, p as string), expect: IA },
  ]),
  ...[{}, null, 'session'].flatMap((s): Row[] => [
    { name: `latch: session ${show(s)}`, call: (c) => new LeaderLatch(s as never, c.path), expect: IA },
    { name: `selector: session ${show(s)}`, call: (c) => new LeaderSelector(s as never, c.path), expect: IA },
  ]),
  ...BAD_OPTIONS.flatMap((o): Row[] => [
    { name: `latch: options ${show(o)}`, call: (c) => new LeaderLatch(c.s, c.path, o as never), expect: IA },
    { name: `selector: options ${show(o)}`, call: (c) => new LeaderSelector(c.s, c.path, o as never), expect: IA },
  ]),
  ...(
    [
      ['policy', ['LOST', 'bogus', 1, null]],
      ['participantId', [5, null, {}, 'x'.repeat(1_000_001)]],
      ['lockName', ['', 'a/b', 5, null, 'nul\u0000']],
      ['watchOwnNode', ['yes', 1, null]],
      ['errorBackoff', ['x', null, { baseDelayMs: -1 }, { baseDelayMs: Number.NaN }, { maxDelayMs: 2 ** 31 }, { baseDelayMs: 500, maxDelayMs: 100 }, { baseDelayMs: '5' }]],
    ] as const
  ).flatMap(([key, values]) =>
    values.flatMap((v): Row[] => [
      { name: `latch: ${key} ${show(v)}`, call: (c) => new LeaderLatch(c.s, c.path, { [key]: v } as never), expect: IA },
      { name: `selector: ${key} ${show(v)}`, call: (c) => new LeaderSelector(c.s, c.path, { [key]: v } as never), expect: IA },
    ]),
  ),
  ...BAD_TIMEOUTS.map((t): Row => ({ name: `latch: awaitLeadership({ timeoutMs: ${show(t)} })`, call: (c) => c.leader.awaitLeadership({ timeoutMs: t as number }), expect: IA })),
  ...BAD_OPTIONS.map((o): Row => ({ name: `latch: awaitLeadership(${show(o)})`, call: (c) => c.leader.awaitLeadership(o as never), expect: IA })),
  { name: 'latch: awaitLeadership({ signal: {} })', call: (c) => c.leader.awaitLeadership({ signal: {} as AbortSignal }), expect: IA },
  { name: 'latch: awaitLeadership with an aborted signal while leader', call: (c) => c.leader.awaitLeadership({ signal: c.aborted }), expect: 'reason' },
  {
    name: 'latch: awaitLeadership with an aborted signal while not started',
    call: (c) => new LeaderLatch(c.s, c.path).awaitLeadership({ signal: c.aborted }),
    expect: 'reason',
  },
  {
    name: 'latch: start() after close',
    call: async (c) => {
      const l = new LeaderLatch(c.s, c.path);
      await l.close();
      l.start();
    },
    expect: ClosedError,
  },
  { name: 'latch: start() on a closed session', call: (c) => new LeaderLatch(c.closed, c.path).start(), expect: ClosedError },
  {
    name: 'latch: participants() after close',
    call: async (c) => {
      const l = new LeaderLatch(c.s, c.path);
      await l.close();
      return l.participants();
    },
    expect: ClosedError,
  },
  { name: 'latch: participants() on a closed session', call: (c) => new LeaderLatch(c.closed, c.path).participants(), expect: ClosedError },
  { name: 'latch: leader() on a refusing server', call: (c) => new LeaderLatch(c.refusing, c.path).leader(), expect: ConnectionLossError },
  ...(['refusing', 'unreachable'] as const).map(
    (server): Row => ({
      name: `latch: awaitLeadership({ timeoutMs: 500 }) on ${server === 'refusing' ? 'a refusing' : 'an unreachable'} server`,
      call: async (c) => {
        const l = new LeaderLatch(c[server], c.path);
        l.start();
        try {
          await l.awaitLeadership({ timeoutMs: 500 });
        } finally {
          await l.close();
        }
      },
      expect: LockTimeoutError,
    }),
  ),
  ...['x', null, 42].map((fn): Row => ({ name: `selector: run(${show(fn)})`, call: (c) => new LeaderSelector(c.s, c.path).run(fn as never), expect: IA })),
  ...BAD_OPTIONS.map((o): Row => ({ name: `selector: run(fn, ${show(o)})`, call: (c) => new LeaderSelector(c.s, c.path).run(() => 1, o as never), expect: IA })),
  ...BAD_BOOLEANS.map((v): Row => ({ name: `selector: run(fn, { requeue: ${show(v)} })`, call: (c) => new LeaderSelector(c.s, c.path).run(() => 1, { requeue: v as boolean }), expect: IA })),
  ...['x', 42, null].map((v): Row => ({ name: `selector: run(fn, { onError: ${show(v)} })`, call: (c) => new LeaderSelector(c.s, c.path).run(() => 1, { onError: v } as never), expect: IA })),
  { name: 'selector: run(fn, { signal: {} })', call: (c) => new LeaderSelector(c.s, c.path).run(() => 1, { signal: {} as AbortSignal }), expect: IA },
  { name: 'selector: run with an aborted signal', call: (c) => new LeaderSelector(c.s, c.path).run(() => 1, { signal: c.aborted }), expect: 'reason' },
  { name: 'selector: run with an aborted signal and requeue', call: (c) => new LeaderSelector(c.s, c.path).run(() => 1, { signal: c.aborted, requeue: true }), expect: 'reason' },
  {
    name: 'selector: run after close',
    call: async (c) => {
      const sel = new LeaderSelector(c.s, c.path);
      await sel.close();
      return sel.run(() => 1);
    },
    expect: ClosedError,
  },
  { name: 'selector: run on a closed session', call: (c) => new LeaderSelector(c.closed, c.path).run(() => 1), expect: ClosedError },
  {
    name: 'selector: participants() after close',
    call: async (c) => {
      const sel = new LeaderSelector(c.s, c.path);
      await sel.close();
      return sel.participants();
    },
    expect: ClosedError,
  },
  typo('latch: constructor', 'polcy', 'policy', (c) => new LeaderLatch(c.s, c.path, { polcy: 'lost' } as never)),
  typo('latch: constructor errorBackoff', 'baseDelay', 'baseDelayMs', (c) => new LeaderLatch(c.s, c.path, { errorBackoff: { baseDelay: 5 } } as never)),
  typo('latch: start', 'timeout', 'timeoutMs', (c) => new LeaderLatch(c.s, c.path).start({ timeout: 5 } as never)),
  typo('latch: awaitLeadership', 'timeout', 'timeoutMs', (c) => c.leader.awaitLeadership({ timeout: 5 } as never)),
  typo('selector: constructor', 'watchOwnNodes', 'watchOwnNode', (c) => new LeaderSelector(c.s, c.path, { watchOwnNodes: true } as never)),
  typo('selector: run', 'reqeue', 'requeue', (c) => new LeaderSelector(c.s, c.path).run(() => 1, { reqeue: true } as never)),
  ...BAD_TIMEOUTS.map((t): Row => ({ name: `latch: start({ timeoutMs: ${show(t)} })`, call: (c) => new LeaderLatch(c.s, c.path).start({ timeoutMs: t as number }), expect: IA })),
  ...BAD_OPTIONS.map((o): Row => ({ name: `latch: start(${show(o)})`, call: (c) => new LeaderLatch(c.s, c.path).start(o as never), expect: IA })),
  { name: 'latch: start({ signal: {} })', call: (c) => new LeaderLatch(c.s, c.path).start({ signal: {} as AbortSignal }), expect: IA },
  { name: 'latch: start with an aborted signal', call: (c) => new LeaderLatch(c.s, c.path).start({ signal: c.aborted }), expect: 'reason' },
  { name: 'latch: start() twice', call: (c) => c.leader.start(), expect: IllegalStateError },
  {
    name: 'latch: start({ timeoutMs: 500 }) on a refusing server',
    call: async (c) => {
      const l = new LeaderLatch(c.refusing, c.path);
      try {
        await l.start({ timeoutMs: 500 });
      } finally {
        await l.close();
      }
    },
    expect: LockTimeoutError,
  },
  { name: 'selector: run with signal timeout(500) on a refusing server', call: (c) => new LeaderSelector(c.refusing, c.path).run(() => 1, { signal: AbortSignal.timeout(500) }), expect: 'timeout-reason' },
];

// ---- the queue ------------------------------------------------------------------------------

const q = (c: Ctx, s: ZkSession = c.s): DistributedQueue => new DistributedQueue(s, c.path);
const poll = (x: DistributedQueue, options?: unknown): Promise<unknown> => (x.poll as (o?: unknown) => Promise<unknown>).call(x, options);
const queueRows: Row[] = [
  ...BAD_PATHS.concat(['/']).map((p): Row => ({ name: `queue: path ${show(p)}`, call: (c) => new DistributedQueue(c.s, p as string), expect: IA })),
  ...[{}, null].map((s): Row => ({ name: `queue: session ${show(s)}`, call: (c) => new DistributedQueue(s as never, c.path), expect: IA })),
  ...BAD_OPTIONS.map((o): Row => ({ name: `queue: options ${show(o)}`, call: (c) => new DistributedQueue(c.s, c.path, o as never), expect: IA })),
  ...[5, null, 'x'.repeat(1_000_001)].map((v): Row => ({ name: `queue: participantId ${show(v).slice(0, 20)}`, call: (c) => new DistributedQueue(c.s, c.path, { participantId: v as string }), expect: IA })),
  ...[undefined, null, 42, {}, [1], true].map((d): Row => ({ name: `queue: put(${show(d)})`, call: (c) => q(c).put(d as never), expect: IA })),
  { name: 'queue: put over maxDataBytes', call: (c) => q(c).put(Buffer.alloc(1_000_001)), expect: IA },
  ...[[], 'ab', null, [undefined], [null], [42], ['ok', Buffer.alloc(1_000_001)], [Buffer.alloc(600_000), Buffer.alloc(600_000)]].map(
    (items): Row => ({ name: `queue: putAll(${Array.isArray(items) ? `${items.length} items` : show(items)}) #${String(Math.random()).slice(2, 6)}`, call: (c) => q(c).putAll(items as never), expect: IA }),
  ),
  ...[-1, 1000, 1.5, Number.NaN, 'x', null].map((p): Row => ({ name: `queue: put priority ${show(p)}`, call: (c) => q(c).put('a', { priority: p as number }), expect: IA })),
  ...BAD_TIMEOUTS.flatMap((t): Row[] => [
    { name: `queue: put({ timeoutMs: ${show(t)} })`, call: (c) => q(c).put('a', { timeoutMs: t as number }), expect: IA },
    { name: `queue: take({ timeoutMs: ${show(t)} })`, call: (c) => q(c).take({ timeoutMs: t as number }), expect: IA },
    { name: `queue: poll({ timeoutMs: ${show(t)} })`, call: (c) => poll(q(c), { timeoutMs: t }), expect: IA },
  ]),
  ...BAD_OPTIONS.flatMap((o): Row[] => [
    { name: `queue: put(x, ${show(o)})`, call: (c) => q(c).put('a', o as never), expect: IA },
    { name: `queue: take(${show(o)})`, call: (c) => q(c).take(o as never), expect: IA },
    { name: `queue: poll(${show(o)})`, call: (c) => poll(q(c), o), expect: IA },
    { name: `queue: consume(fn, ${show(o)})`, call: (c) => q(c).consume(() => 1, o as never), expect: IA },
  ]),
  ...(['put', 'take', 'poll', 'consume'] as const).flatMap((op): Row[] => [
    { name: `queue: ${op} with signal {}`, call: (c) => (op === 'put' ? q(c).put('a', { signal: {} as AbortSignal }) : op === 'consume' ? q(c).consume(() => 1, { signal: {} as AbortSignal }) : op === 'poll' ? poll(q(c), { signal: {} }) : q(c).take({ signal: {} as AbortSignal })), expect: IA },
    { name: `queue: ${op} with an aborted signal`, call: (c) => (op === 'put' ? q(c).put('a', { signal: c.aborted }) : op === 'consume' ? q(c).consume(() => 1, { signal: c.aborted }) : op === 'poll' ? poll(q(c), { signal: c.aborted }) : q(c).take({ signal: c.aborted })), expect: 'reason' },
  ]),
  ...['x', null, 42, {}].map((fn): Row => ({ name: `queue: consume(${show(fn)})`, call: (c) => q(c).consume(fn as never), expect: IA })),
  ...[0, -1, 1.5, Number.NaN, 1001, '2', null].map((n): Row => ({ name: `queue: consume concurrency ${show(n)}`, call: (c) => q(c).consume(() => 1, { concurrency: n as number }), expect: IA })),
  ...['x', 42, null].map((v): Row => ({ name: `queue: consume onError ${show(v)}`, call: (c) => q(c).consume(() => 1, { onError: v as never }), expect: IA })),
  ...['x', null, { baseDelayMs: -1 }, { maxDelayMs: 2 ** 31 }, { baseDelayMs: 500, maxDelayMs: 100 }, { baseDelayMs: Number.NaN }].map(
    (v): Row => ({ name: `queue: consume errorBackoff ${JSON.stringify(v)}`, call: (c) => q(c).consume(() => 1, { errorBackoff: v } as never), expect: IA }),
  ),
  ...(['put', 'take', 'poll', 'consume', 'size', 'peek'] as const).flatMap((op): Row[] => {
    const call = (x: DistributedQueue): Promise<unknown> => (op === 'put' ? x.put('a') : op === 'consume' ? x.consume(() => 1) : x[op]());
    return [
      {
        name: `queue: ${op} after close`,
        call: async (c) => {
          const x = q(c);
          await x.close();
          return call(x);
        },
        expect: ClosedError,
      },
      { name: `queue: ${op} after its session closed`, call: (c) => call(q(c, c.closed)), expect: ClosedError },
    ];
  }),
  typo('queue: constructor', 'participant', 'participantId', (c) => new DistributedQueue(c.s, c.path, { participant: 'x' } as never)),
  typo('queue: put', 'prority', 'priority', (c) => q(c).put('a', { prority: 1 } as never)),
  typo('queue: putAll', 'timeout', 'timeoutMs', (c) => q(c).putAll(['a'], { timeout: 5 } as never)),
  typo('queue: take', 'timeout', 'timeoutMs', (c) => q(c).take({ timeout: 5 } as never)),
  typo('queue: poll', 'timeout', 'timeoutMs', (c) => poll(q(c), { timeout: 5 })),
  typo('queue: size', 'singal', 'signal', (c) => q(c).size({ singal: c.aborted } as never)),
  typo('queue: peek', 'timeout', 'timeoutMs', (c) => q(c).peek({ timeout: 5 } as never)),
  typo('queue: consume', 'maxDelivery', 'maxDeliveries', (c) => q(c).consume(() => 1, { maxDelivery: 3 } as never)),
  typo('queue: consume redeliveryBackoff', 'maxDelay', 'maxDelayMs', (c) => q(c).consume(() => 1, { redeliveryBackoff: { maxDelay: 5 } } as never)),
  typo('queue: deadLetters', 'limt', 'limit', (c) => q(c).deadLetters({ limt: 5 } as never)),
  typo('queue: requeueDeadLetter', 'prio', 'priority', (c) => q(c).requeueDeadLetter({} as never, { prio: 5 } as never)),
  typo('queue: discardDeadLetter', 'timeout', 'timeoutMs', (c) => q(c).discardDeadLetter({} as never, { timeout: 5 } as never)),
  { name: 'queue: put({ timeoutMs: 500 }) on a refusing server', call: (c) => q(c, c.refusing).put('a', { timeoutMs: 500 }), expect: OperationTimeoutError },
  // Shorter than the connect timeout (300 ms): the call's own deadline comes first.
  { name: 'queue: take({ timeoutMs: 200 }) on a refusing server', call: (c) => q(c, c.refusing).take({ timeoutMs: 200 }), expect: OperationTimeoutError },
  { name: 'queue: take({ timeoutMs: 200 }) on an unreachable server', call: (c) => q(c, c.unreachable).take({ timeoutMs: 200 }), expect: OperationTimeoutError },
  { name: 'queue: poll({ timeoutMs: 200 }) on a refusing server', call: (c) => poll(q(c, c.refusing), { timeoutMs: 200 }), expect: OperationTimeoutError },
  // Longer: a request that cannot be sent within the connect timeout is a ConnectionLossError.
  { name: 'queue: take({ timeoutMs: 3000 }) on an unreachable server', call: (c) => q(c, c.unreachable).take({ timeoutMs: 3000 }), expect: ConnectionLossError },
  { name: 'queue: poll() on a refusing server', call: (c) => q(c, c.refusing).poll(), expect: ConnectionLossError },
  { name: 'queue: poll() on an unreachable server', call: (c) => q(c, c.unreachable).poll(), expect: ConnectionLossError },
  { name: 'queue: size() on a refusing server', call: (c) => q(c, c.refusing).size(), expect: ConnectionLossError },
  { name: 'queue: peek() on an unreachable server', call: (c) => q(c, c.unreachable).peek(), expect: ConnectionLossError },
  // A signal that aborts later stops consuming: consume resolves.
  { name: 'queue: consume(fn, { signal: timeout(500) }) on a refusing server', call: (c) => q(c, c.refusing).consume(() => 1, { signal: AbortSignal.timeout(500) }), expect: 'resolves' },
  { name: 'queue: close() on a refusing server', call: (c) => q(c, c.refusing).close(), expect: 'resolves' },
];

// ---- sessions on a refusing or unreachable server -------------------------------------------

const outageRows: Row[] = [
  ...(['refusing', 'unreachable'] as const).flatMap((which): Row[] => [
    { name: `${which}: create`, call: (c) => c[which].create(c.path), expect: ConnectionLossError },
    { name: `${which}: getData`, call: (c) => c[which].getData(c.path), expect: ConnectionLossError },
    { name: `${which}: getChildrenWatch`, call: (c) => c[which].getChildrenWatch(c.path), expect: ConnectionLossError },
    { name: `${which}: multi`, call: (c) => c[which].multi([{ type: 'create', path: c.path }]), expect: ConnectionLossError },
    { name: `${which}: mkdirp`, call: (c) => c[which].mkdirp(c.path), expect: ConnectionLossError },
    { name: `${which}: waitConnected({ timeoutMs: 300 })`, call: (c) => c[which].waitConnected({ timeoutMs: 300 }), expect: OperationTimeoutError },
    { name: `${which}: getData with signal timeout(200)`, call: (c) => c[which].getData(c.path, { signal: AbortSignal.timeout(200) }), expect: 'timeout-reason' },
  ]),
  {
    name: 'ZkSession.connect to an unreachable server',
    call: async () => ZkSession.connect(`127.0.0.1:${await freePort()}`, { connectTimeoutMs: 300 }),
    expect: OperationTimeoutError,
  },
  { name: 'ZkSession.connect to a refusing server', call: (c) => ZkSession.connect(c.refusing.connectString, { connectTimeoutMs: 300 }), expect: OperationTimeoutError },
];

// ---- helpers exported by the library --------------------------------------------------------

const helperRows: Row[] = [
  ...BAD_PATHS.map((p): Row => ({ name: `validatePath(${show(p)})`, call: () => validatePath(p), expect: IA })),
  ...BAD_PATHS.map((p): Row => ({ name: `parentOf(${show(p)})`, call: () => parentOf(p as string), expect: IA })),
  { name: 'joinPath(42, "a")', call: () => joinPath(42 as never, 'a'), expect: IA },
  { name: 'joinPath("/a", "b/c")', call: () => joinPath('/a', 'b/c'), expect: IA },
  { name: 'joinPath("/a", "")', call: () => joinPath('/a', ''), expect: IA },
  { name: 'joinPath("/a", null)', call: () => joinPath('/a', null as never), expect: IA },
  ...[0, -1, 1.5, Number.NaN, '1'].map((n): Row => ({ name: `windowPredicate(${show(n)})`, call: () => windowPredicate(n as number), expect: IA })),
  ...['', 5, null].map((k): Row => ({ name: `readPredicate(${show(k)})`, call: () => readPredicate(k as string), expect: IA })),
  { name: 'parseNode(5, kinds)', call: () => parseNode(5 as never, ['lock-']), expect: IA },
  { name: 'parseNode(name, "lock-")', call: () => parseNode('x', 'lock-' as never), expect: IA },
  { name: 'sortChildren("a", kinds)', call: () => sortChildren('a' as never, ['lock-']), expect: IA },
  { name: 'sortChildren([5], kinds)', call: () => sortChildren([5] as never, ['lock-']), expect: IA },
  { name: 'backoffDelay(policy, -1)', call: () => backoffDelay({ baseDelayMs: 1, maxDelayMs: 2 }, -1), expect: IA },
  { name: 'backoffDelay(policy, 1.5)', call: () => backoffDelay({ baseDelayMs: 1, maxDelayMs: 2 }, 1.5), expect: IA },
  { name: 'backoffDelay({}, 0)', call: () => backoffDelay({} as never, 0), expect: IA },
  // Near misses of 8-4-4-4-12 hex digits: a non-hex digit, a dash out of place, one too many or too few.
  ...['x', 5, '_c_123-', '0b1f6a52-6f0e-4a43-9d1c-5b0e7f3c2a1g', '0b1f6a526-f0e-4a43-9d1c-5b0e7f3c2a11', '0b1f6a52-6f0e-4a43-9d1c-5b0e7f3c2a111', '0b1f6a52-6f0e-4a43-9d1c-5b0e7f3c2a1'].map((u): Row => ({ name: `protectedPrefix(${show(u)})`, call: () => protectedPrefix(u as string), expect: IA })),
  { name: 'compareSeq(NaN, 1)', call: () => compareSeq(Number.NaN, 1), expect: IA },
  { name: 'compareSeq("1", 2)', call: () => compareSeq('1' as never, 2), expect: IA },
];

// ---- zk-recipes/testing ---------------------------------------------------------------------

const kitRows: Row[] = [
  ...[0, -1, 1.5, Number.NaN, 2 ** 31, '200'].flatMap((v): Row[] => [
    { name: `TestingServer.start({ tickTime: ${show(v)} })`, call: () => TestingServer.start({ tickTime: v as number }), expect: IA },
    { name: `TestingServer.start({ minSessionTimeout: ${show(v)} })`, call: () => TestingServer.start({ minSessionTimeout: v as number }), expect: IA },
    { name: `TestingServer.start({ maxSessionTimeout: ${show(v)} })`, call: () => TestingServer.start({ maxSessionTimeout: v as number }), expect: IA },
  ]),
  ...BAD_TIMEOUTS.concat([0]).map((t): Row => ({ name: `TestingServer.start({ startTimeoutMs: ${show(t)} })`, call: () => TestingServer.start({ startTimeoutMs: t as number }), expect: IA })),
  ...[0, -1, 65536, 1.5, Number.NaN, '2181', null].map((p): Row => ({ name: `TestingServer.start({ port: ${show(p)} })`, call: () => TestingServer.start({ port: p as number }), expect: IA })),
  ...['', 42, null].map((d): Row => ({ name: `TestingServer.start({ dataDir: ${show(d)} })`, call: () => TestingServer.start({ dataDir: d as string }), expect: IA })),
  { name: 'TestingServer.start({ minSessionTimeout: 5000, maxSessionTimeout: 4000 })', call: () => TestingServer.start({ minSessionTimeout: 5000, maxSessionTimeout: 4000 }), expect: IA },
  ...['tickTime=1', [42], ['a\nb=c'], null].map((x): Row => ({ name: `TestingServer.start({ extraConfig: ${JSON.stringify(x)} })`, call: () => TestingServer.start({ extraConfig: x as never }), expect: IA })),
  ...['-Xmx1g', [42], null].map((x): Row => ({ name: `TestingServer.start({ jvmArgs: ${JSON.stringify(x)} })`, call: () => TestingServer.start({ jvmArgs: x as never }), expect: IA })),
  ...['PATH=/bin', 42, null].map((x): Row => ({ name: `TestingServer.start({ env: ${show(x)} })`, call: () => TestingServer.start({ env: x as never }), expect: IA })),
  ...['alice', null, {}, { users: {} }, { users: { 'a b': 'pw' } }, { users: { alice: '' } }, { users: { alice: 'a\nb' } }, { users: { alice: 42 } }, { users: { alice: 'pw' }, requireAuth: 'yes' }, { users: { alice: 'pw' }, require: true }].map(
    (x): Row => ({ name: `TestingServer.start({ sasl: ${JSON.stringify(x)} })`, call: () => TestingServer.start({ sasl: x as never }), expect: IA }),
  ),
  { name: 'TestingCluster.start(3, { sasl: { users: {} } })', call: () => TestingCluster.start(3, { sasl: { users: {} } }), expect: IA },
  { name: 'jaasServerConfig({})', call: () => jaasServerConfig({}), expect: IA },
  ...BAD_OPTIONS.map((o): Row => ({ name: `TestingServer.start(${show(o)})`, call: () => TestingServer.start(o as never), expect: IA })),
  { name: 'TestingServer.start({ env: no jars })', call: () => TestingServer.start({ env: { ZK_JARS_DIR: '/nonexistent', PATH: '' } }), expect: ZooKeeperNotInstalledError },
  ...[0, -1, 1.5, Number.NaN, '3', null, 1000].map((n): Row => ({ name: `TestingCluster.start(${show(n)})`, call: () => TestingCluster.start(n as number), expect: IA })),
  ...[0, -1, 1.5, Number.NaN, '5'].flatMap((v): Row[] => [
    { name: `TestingCluster.start(3, { initLimit: ${show(v)} })`, call: () => TestingCluster.start(3, { initLimit: v as number }), expect: IA },
    { name: `TestingCluster.start(3, { syncLimit: ${show(v)} })`, call: () => TestingCluster.start(3, { syncLimit: v as number }), expect: IA },
  ]),
  { name: 'TestingCluster.start(3, { tickTime: -1 })', call: () => TestingCluster.start(3, { tickTime: -1 }), expect: IA },
  { name: 'TestingCluster.start(3, null)', call: () => TestingCluster.start(3, null as never), expect: IA },
  ...BAD_BOOLEANS.map((v): Row => ({ name: `TestingCluster.start(3, { memberLinks: ${show(v)} })`, call: () => TestingCluster.start(3, { memberLinks: v as boolean }), expect: IA })),
  { name: "TestingCluster.start(3, { memberLinks: true, extraConfig: ['reconfigEnabled=true'] })", call: () => TestingCluster.start(3, { memberLinks: true, extraConfig: ['reconfigEnabled=true'] }), expect: IA },
  ...[undefined, null, {}, { targetPort: 0 }, { targetPort: 70000 }, { targetPort: '2181' }, { targetPort: 2181, port: -1 }, { targetPort: 2181, targetHost: '' }, { targetPort: 2181, targetHost: 5 }].map(
    (o): Row => ({ name: `ChaosProxy.start(${JSON.stringify(o) ?? 'undefined'})`, call: () => ChaosProxy.start(o as never), expect: IA }),
  ),
  ...[-1, Number.NaN, Infinity, 2 ** 31, '10', null].flatMap((ms): Row[] => [
    { name: `proxy.latency(${show(ms)})`, call: (c) => c.proxy.latency(ms as number), expect: IA },
    { name: `proxy.blackholeFor(${show(ms)})`, call: (c) => c.proxy.blackholeFor(ms as number), expect: IA },
  ]),
  ...BAD_BOOLEANS.concat([undefined]).map((v): Row => ({ name: `proxy.reject(${show(v)})`, call: (c) => c.proxy.reject(v as boolean), expect: IA })),
  ...[null, 'x', { op: 'nope' }, { op: 5 }, { path: '' }, { path: 5 }].map((m): Row => ({ name: `proxy.loseReply(${JSON.stringify(m)})`, call: (c) => c.proxy.loseReply(m as never), expect: IA })),
  ...[0, -1, Number.NaN, 2 ** 31, '10'].map((t): Row => ({ name: `proxy.loseReply({}, { timeoutMs: ${show(t)} })`, call: (c) => c.proxy.loseReply({}, { timeoutMs: t as number }), expect: IA })),
  ...[null, [0], [1.5], ['106'], 106].map((codes): Row => ({ name: `proxy.unknownOps(${show(codes)})`, call: (c) => Promise.resolve().then(() => c.proxy.unknownOps(codes as never)), expect: IA })),
  { name: 'proxy.loseReply({}, null)', call: (c) => c.proxy.loseReply({}, null as never), expect: IA },
  ...[['', 2181, 'ruok'], [5, 2181, 'ruok'], ['127.0.0.1', 0, 'ruok'], ['127.0.0.1', 65536, 'ruok'], ['127.0.0.1', '2181', 'ruok'], ['127.0.0.1', 2181, 'ruokay'], ['127.0.0.1', 2181, ''], ['127.0.0.1', 2181, 5]].map(
    ([h, p, w]): Row => ({ name: `fourLetterWord(${show(h)}, ${show(p)}, ${show(w)})`, call: () => fourLetterWord(h as string, p as number, w as string), expect: IA }),
  ),
  ...BAD_TIMEOUTS.concat([0]).map((t): Row => ({ name: `fourLetterWord(.., { timeoutMs: ${show(t)} })`, call: () => fourLetterWord('127.0.0.1', fx.server.port, 'ruok', { timeoutMs: t as number }), expect: IA })),
  { name: 'fourLetterWord(.., null)', call: () => fourLetterWord('127.0.0.1', fx.server.port, 'ruok', null as never), expect: IA },
  ...(
    [
      ['ruok', ruok],
      ['srvr', srvr],
      ['mntr', mntr],
      ['cons', cons],
      ['dump', dump],
      ['watchesByPath', watchesByPath],
      ['watchesBySession', watchesBySession],
    ] as const
  ).flatMap(([name, fn]): Row[] => [
    { name: `${name}(host, 0)`, call: () => fn('127.0.0.1', 0), expect: IA },
    { name: `${name}(5, port)`, call: () => fn(5 as never, fx.server.port), expect: IA },
    { name: `${name}(host, port, { timeoutMs: -1 })`, call: () => fn('127.0.0.1', fx.server.port, { timeoutMs: -1 }), expect: IA },
  ]),
  ...(
    [
      ['parseMntr', parseMntr],
      ['parseSrvr', parseSrvr],
      ['parseWatches', parseWatches],
      ['parseCons', parseCons],
      ['parseDump', parseDump],
    ] as const
  ).flatMap(([name, fn]): Row[] => [42, null, undefined].map((t): Row => ({ name: `${name}(${show(t)})`, call: () => fn(t as never), expect: IA }))),
  ...[0, -1, 1.5, Number.NaN, '2', 100_000].map((n): Row => ({ name: `freePorts(${show(n)})`, call: () => freePorts(n as number), expect: IA })),
  ...[42, 'env', null].map((e): Row => ({ name: `locateZooKeeper(${show(e)})`, call: () => locateZooKeeper(e as never), expect: IA })),
  { name: 'locateZooKeeper(no jars)', call: () => locateZooKeeper({ ZK_JARS_DIR: '/nonexistent', PATH: '' }), expect: ZooKeeperNotInstalledError },
  ...['x', null, 42].map((p): Row => ({ name: `waitFor(${show(p)})`, call: () => waitFor(p as never, { timeoutMs: 1000 }), expect: IA })),
  ...BAD_TIMEOUTS.map((t): Row => ({ name: `waitFor(fn, { timeoutMs: ${show(t)} })`, call: () => waitFor(() => false, { timeoutMs: t as number }), expect: IA })),
  ...[-1, Number.NaN, 2 ** 31, '5'].map((t): Row => ({ name: `waitFor(fn, { intervalMs: ${show(t)} })`, call: () => waitFor(() => false, { intervalMs: t as number, timeoutMs: 1000 }), expect: IA })),
  { name: 'waitFor(fn, { message: 5 })', call: () => waitFor(() => false, { message: 5 as never, timeoutMs: 1000 }), expect: IA },
  { name: 'waitFor(fn, { signal: {} })', call: () => waitFor(() => false, { signal: {} as AbortSignal, timeoutMs: 1000 }), expect: IA },
  { name: 'waitFor(fn, null)', call: () => waitFor(() => false, null as never), expect: IA },
  { name: 'waitFor with an aborted signal', call: (c) => waitFor(() => true, { signal: c.aborted }), expect: 'reason' },
  ...BAD_TIMEOUTS.map((t): Row => ({ name: `withTimeout(p, ${show(t)})`, call: () => withTimeout(Promise.resolve(1), t as number), expect: IA })),
  { name: 'withTimeout("x", 100)', call: () => withTimeout('x' as never, 100), expect: IA },
  { name: 'withTimeout(p, 100, 5)', call: () => withTimeout(Promise.resolve(1), 100, 5 as never), expect: IA },
  { name: 'expireSession("x", proxy)', call: (c) => expireSession('x' as never, c.proxy), expect: IA },
  { name: 'expireSession(session, "proxy")', call: (c) => expireSession(c.s, 'proxy' as never), expect: IA },
  { name: 'expireSession(never connected, proxy)', call: (c) => expireSession(c.unreachable, c.proxy), expect: IA },
  { name: 'expireSession(closed, proxy)', call: (c) => expireSession(c.closed, c.proxy), expect: ClosedError },
  ...[-1, Number.NaN, 2 ** 31, '5'].map((t): Row => ({ name: `expireSession(s, proxy, { timeoutMs: ${show(t)} })`, call: (c) => expireSession(c.s, c.proxy, { timeoutMs: t as number }), expect: IA })),
  { name: 'expireSession(s, proxy, { connectString: 5 })', call: (c) => expireSession(c.s, c.proxy, { connectString: 5 as never }), expect: IA },
  { name: 'expireSession(s, proxy, null)', call: (c) => expireSession(c.s, c.proxy, null as never), expect: IA },
  // The shared server: bad options are refused before anything is stopped or sent.
  ...['ruok!', 'RUOK', '', 5].map((w): Row => ({ name: `server.fourLetterWord(${show(w)})`, call: () => fx.server.fourLetterWord(w as string), expect: IA })),
  ...(['ruok', 'srvr', 'mntr', 'watchesByPath', 'watchesBySession', 'connections'] as const).map(
    (m): Row => ({ name: `server.${m}({ timeoutMs: 2^31 })`, call: () => fx.server[m]({ timeoutMs: 2 ** 31 }), expect: IA }),
  ),
  ...[-1, Number.NaN, 2 ** 31, '5', null].flatMap((t): Row[] => [
    { name: `server.stop({ timeoutMs: ${show(t)} })`, call: () => fx.server.stop({ timeoutMs: t as number }), expect: IA },
    { name: `server.restart({ timeoutMs: ${show(t)} })`, call: () => fx.server.restart({ timeoutMs: t as number }), expect: IA },
  ]),
  ...BAD_BOOLEANS.map((v): Row => ({ name: `server.restart({ waitUntilServing: ${show(v)} })`, call: () => fx.server.restart({ waitUntilServing: v as boolean }), expect: IA })),
  typo('TestingServer.start', 'tickTme', 'tickTime', () => TestingServer.start({ tickTme: 100 } as never)),
  typo('TestingServer.start', 'dataDirectory', 'dataDir', () => TestingServer.start({ dataDirectory: '/tmp/x' } as never)),
  typo('TestingCluster.start', 'syncLimt', 'syncLimit', () => TestingCluster.start(3, { syncLimt: 5 } as never)),
  typo('ChaosProxy.start', 'targetport', 'targetPort', () => ChaosProxy.start({ targetport: 2181 } as never)),
  typo('proxy.loseReply match', 'ops', 'op', (c) => c.proxy.loseReply({ ops: 'create' } as never)),
  typo('proxy.loseReply', 'timeout', 'timeoutMs', (c) => c.proxy.loseReply({}, { timeout: 5 } as never)),
  typo('waitFor', 'interval', 'intervalMs', () => waitFor(() => true, { interval: 5 } as never)),
  typo('expireSession', 'timeout', 'timeoutMs', (c) => expireSession(c.s, c.proxy, { timeout: 5 } as never)),
  typo('fourLetterWord', 'timeout', 'timeoutMs', () => fourLetterWord('127.0.0.1', fx.server.port, 'ruok', { timeout: 5 } as never)),
  typo('ruok', 'timeout', 'timeoutMs', () => ruok('127.0.0.1', fx.server.port, { timeout: 5 } as never)),
  typo('server.stop', 'timeout', 'timeoutMs', () => fx.server.stop({ timeout: 5 } as never)),
  typo('server.restart', 'waitUntilServes', 'waitUntilServing', () => fx.server.restart({ waitUntilServes: false } as never)),
  // An environment takes any variable names.
  { name: 'TestingServer.start({ env: no jars, any names })', call: () => TestingServer.start({ env: { ZK_JARS_DIR: '/nonexistent', PATH: '', ANY_NAME_AT_ALL: 'x' } }), expect: ZooKeeperNotInstalledError },
  ...BAD_OPTIONS.flatMap((o): Row[] => [
    { name: `server.stop(${show(o)})`, call: () => fx.server.stop(o as never), expect: IA },
    { name: `server.restart(${show(o)})`, call: () => fx.server.restart(o as never), expect: IA },
  ]),
];

describe('bad input', () => {
setUp();
table('the session', sessionRows);
table('lock recipes', [...lockRows, ...semaphoreRows]);
table('leader election', leaderRows);
table('the queue', queueRows);
table('sessions on a refusing or unreachable server', outageRows);
table('helpers', helperRows);
table('zk-recipes/testing', kitRows);

test('no uncaught exception, and the shared server still serves', async () => {
  assert.deepEqual(uncaught, []);
  assert.ok(await fx.server.ruok());
});
});
