// The session layer against a real standalone ZooKeeper: operations, error mapping,
// transactions, watches (and their removal on the server), chroot, digest auth, bad input.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  BadVersionError,
  ClosedError,
  InvalidArgumentError,
  NoAuthError,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  ZooKeeperError,
} from '../../src/errors.js';
import { Acls, ZkSession } from '../../src/client/index.js';
import { createRawClient, removeWatches } from '../../src/client/nzc.js';
import { TestingServer, waitFor } from '../../src/testing/index.js';
import { SessionPool, uniquePath } from '../helpers.js';

let server: TestingServer;
const pool = new SessionPool();
let s: ZkSession;

before(async () => {
  server = await TestingServer.start();
  s = await pool.connect(server.connectString);
});
after(async () => {
  await pool.closeAll();
  await server?.close();
});

describe('operations', () => {
  test('create, getData, setData, exists, getChildren, delete', async () => {
    const base = uniquePath('ops');
    await s.mkdirp(base);
    assert.equal(await s.create(`${base}/a`, { data: 'hello' }), `${base}/a`);
    const { data, stat } = await s.getData(`${base}/a`);
    assert.equal(data.toString(), 'hello');
    assert.equal(stat.version, 0);
    assert.equal(stat.ephemeralOwner, 0n);
    assert.equal(typeof stat.czxid, 'bigint');
    const st2 = await s.setData(`${base}/a`, new Uint8Array([1, 2, 3]), { version: 0 });
    assert.equal(st2.version, 1);
    assert.deepEqual([...(await s.getData(`${base}/a`)).data], [1, 2, 3]);
    assert.equal((await s.exists(`${base}/a`))?.version, 1);
    assert.equal(await s.exists(`${base}/missing`), null);
    const seq = await s.create(`${base}/e-`, { mode: 'EPHEMERAL_SEQUENTIAL' });
    assert.match(seq, /\/e-\d{10}$/);
    assert.equal((await s.exists(seq))?.ephemeralOwner, s.sessionId);
    const kids = await s.getChildren(base);
    assert.deepEqual(kids.children.sort(), ['a', seq.slice(base.length + 1)].sort());
    assert.equal(kids.stat.numChildren, 2);
    await s.delete(`${base}/a`, { version: 1 });
    await s.deleteRecursive(base);
    assert.equal(await s.exists(base), null);
  });

  test('server error codes map to typed errors with code, path and op', async () => {
    const base = uniquePath('errors');
    await s.mkdirp(`${base}/child`);
    const noNode = await s.getData(`${base}/nope`).catch((e: unknown) => e);
    assert.ok(noNode instanceof NoNodeError);
    assert.equal(noNode.code, 'NO_NODE');
    assert.equal(noNode.zkCode, -101);
    assert.equal(noNode.path, `${base}/nope`);
    assert.equal(noNode.op, 'getData');
    // Built in the reply handler, whose frames name no caller: no stack is captured (a cost on
    // paths where such replies are routine). The client's own exception stays its cause.
    assert.equal(noNode.stack, `NoNodeError: ${noNode.message}`);
    assert.equal((noNode.cause as { code?: unknown } | undefined)?.code, -101);
    assert.match(String((noNode.cause as Error | undefined)?.message), /NO_NODE\[-101\]/);
    const failedMulti = await s.multi([{ type: 'check', path: `${base}/nope` }]).catch((e: unknown) => e);
    assert.ok(failedMulti instanceof NoNodeError && failedMulti.opIndex === 0, String(failedMulti));
    assert.equal(failedMulti.stack, `NoNodeError: ${failedMulti.message}`);
    await assert.rejects(s.create(`${base}/child`), (e: unknown) => e instanceof NodeExistsError && e.code === 'NODE_EXISTS');
    await assert.rejects(s.setData(`${base}/child`, 'x', { version: 7 }), (e: unknown) => e instanceof BadVersionError && e.code === 'BAD_VERSION');
    await assert.rejects(s.delete(base), (e: unknown) => e instanceof NotEmptyError && e.code === 'NOT_EMPTY');
    await assert.rejects(s.create(`${base}/x/y`), NoNodeError);
    await s.deleteRecursive(base);
  });

  test('mkdirp creates missing levels and tolerates existing ones; deleteRecursive clears deep trees', async () => {
    const base = uniquePath('mkdirp');
    await s.mkdirp(`${base}/a/b/c`);
    await s.mkdirp(`${base}/a/b/c`);
    await s.mkdirp(`${base}/a/b2`);
    await s.create(`${base}/a/b/c/leaf`, { data: 'x' });
    assert.ok(await s.exists(`${base}/a/b/c/leaf`));
    await s.deleteRecursive(base);
    assert.equal(await s.exists(base), null);
    await s.deleteRecursive(base); // already gone: fine
  });
});

describe('reply order', () => {
  test('answers reach their callers in the order the server sent them, refusals and successes alike', async () => {
    const base = uniquePath('order');
    await s.mkdirp(`${base}/there`);
    // Pairs sent back to back: each pair's replies come in order; so must their callers' turns.
    const order: string[] = [];
    const pairs = Array.from({ length: 20 }, (_, i) => {
      const first = i % 2 === 0 ? 'missing' : 'there';
      const second = first === 'missing' ? 'there' : 'missing';
      const read = (name: string): Promise<void> =>
        s.getData(`${base}/${name}`).then(
          () => void order.push(`${i}:${name}`),
          (err: unknown) => {
            assert.ok(err instanceof NoNodeError);
            order.push(`${i}:${name}`);
          },
        );
      return Promise.all([read(first), read(second)]).then(() => [`${i}:${first}`, `${i}:${second}`]);
    });
    const expected = (await Promise.all(pairs)).flat();
    assert.deepEqual(order, expected);
  });
});

describe('transactions', () => {
  test('all ops commit together and report per-op results', async () => {
    const base = uniquePath('multi');
    await s.mkdirp(base);
    const results = await s.multi([
      { type: 'create', path: `${base}/a`, data: 'a' },
      { type: 'create', path: `${base}/s-`, mode: 'PERSISTENT_SEQUENTIAL' },
      { type: 'setData', path: `${base}/a`, data: 'b', version: 0 },
      { type: 'check', path: `${base}/a`, version: 1 },
      { type: 'delete', path: `${base}/a`, version: 1 },
    ]);
    assert.equal(results.length, 5);
    assert.deepEqual(results[0], { type: 'create', path: `${base}/a` });
    assert.match((results[1] as { path: string }).path, /\/s-\d{10}$/);
    assert.equal(results[2]?.type === 'setData' && results[2].stat.version, 1);
    assert.deepEqual(results[3], { type: 'check' });
    assert.deepEqual(results[4], { type: 'delete' });
    assert.equal(await s.exists(`${base}/a`), null);
    await s.deleteRecursive(base);
  });

  test('a failing op aborts everything and is named by opIndex', async () => {
    const base = uniquePath('multi-fail');
    await s.mkdirp(base);
    const err = await s
      .multi([
        { type: 'create', path: `${base}/a` },
        { type: 'delete', path: `${base}/missing` },
        { type: 'create', path: `${base}/b` },
      ])
      .catch((e: unknown) => e);
    assert.ok(err instanceof NoNodeError, String(err));
    assert.equal(err.opIndex, 1);
    assert.equal(err.path, `${base}/missing`);
    assert.equal(await s.exists(`${base}/a`), null, 'nothing of a failed transaction is applied');
    await s.deleteRecursive(base);
  });

  test('expected version 0 is honoured (node-zookeeper-client turns it into "any")', async () => {
    const base = uniquePath('multi-v0');
    await s.mkdirp(`${base}/n`);
    await s.setData(`${base}/n`, 'v1');
    for (const op of [
      { type: 'check', path: `${base}/n`, version: 0 },
      { type: 'setData', path: `${base}/n`, data: 'x', version: 0 },
      { type: 'delete', path: `${base}/n`, version: 0 },
    ] as const) {
      await assert.rejects(s.multi([op]), (e: unknown) => e instanceof BadVersionError && e.opIndex === 0, `${op.type} at version 0`);
    }
    assert.equal((await s.getData(`${base}/n`)).data.toString(), 'v1');
    await s.deleteRecursive(base);
  });
});

describe('watches', () => {
  test('getDataWatch fires once on change; getChildrenWatch on a new child', async () => {
    const base = uniquePath('watch');
    await s.mkdirp(base);
    const other = await pool.connect(server.connectString);
    const data = await s.getDataWatch(base);
    const kids = await s.getChildrenWatch(base);
    assert.deepEqual(kids.result.children, []);
    await other.setData(base, 'changed');
    assert.deepEqual(await data.changed, { type: 'NODE_DATA_CHANGED', path: base });
    await other.create(`${base}/c`);
    assert.deepEqual(await kids.changed, { type: 'NODE_CHILDREN_CHANGED', path: base });
    const gone = await s.getDataWatch(`${base}/c`);
    await other.delete(`${base}/c`);
    assert.equal((await gone.changed).type, 'NODE_DELETED');
    await s.deleteRecursive(base);
  });

  test('existsWatch fires on creation of a missing node and on deletion of an existing one', async () => {
    const path = uniquePath('exists-watch');
    const other = await pool.connect(server.connectString);
    await s.mkdirp(path.slice(0, path.lastIndexOf('/')));
    const missing = await s.existsWatch(path);
    assert.equal(missing.result, null);
    await other.create(path);
    assert.equal((await missing.changed).type, 'NODE_CREATED');
    const present = await s.existsWatch(path);
    assert.ok(present.result);
    await other.delete(path);
    assert.equal((await present.changed).type, 'NODE_DELETED');
  });

  test('getDataWatch on a missing node throws NoNode and leaves no watch on the server', async () => {
    const path = uniquePath('nowatch');
    await assert.rejects(s.getDataWatch(path), NoNodeError);
    assert.equal(s.activeWatchCount, 0);
    const byPath = await server.watchesByPath();
    assert.equal(byPath.has(path), false);
  });

  test('aborting a watch removes it from the server (no lingering watch)', async () => {
    const base = uniquePath('abort-watch');
    await s.mkdirp(base);
    const ac = new AbortController();
    const w = await s.getDataWatch(base, { signal: ac.signal });
    const c = await s.getChildrenWatch(base, { signal: ac.signal });
    assert.ok((await server.watchesByPath()).has(base), 'the watch is on the server');
    const reason = new Error('no longer interested');
    ac.abort(reason);
    await assert.rejects(w.changed, (e) => e === reason);
    await assert.rejects(c.changed, (e) => e === reason);
    assert.equal(s.activeWatchCount, 0);
    await waitFor(async () => !(await server.watchesByPath()).has(base), { timeoutMs: 5000, message: 'server-side watch removal' });
    await s.deleteRecursive(base);
  });

  test('two waiters on one path share one server watch; one aborting keeps the other', async () => {
    const base = uniquePath('shared-watch');
    await s.mkdirp(base);
    const ac = new AbortController();
    const a = await s.getDataWatch(base, { signal: ac.signal });
    const b = await s.getDataWatch(base);
    ac.abort(new Error('a leaves'));
    await assert.rejects(a.changed);
    await s.setData(base, 'x');
    assert.equal((await b.changed).type, 'NODE_DATA_CHANGED');
    await s.deleteRecursive(base);
  });

  test('close rejects pending watches with ClosedError and leaves no watch on the server', async () => {
    const base = uniquePath('close-watch');
    await s.mkdirp(base);
    const temp = await ZkSession.connect(server.connectString, { sessionTimeoutMs: 4000 });
    const w = await temp.getDataWatch(base);
    await temp.close();
    await assert.rejects(w.changed, ClosedError);
    await waitFor(async () => !(await server.watchesByPath()).has(base), { timeoutMs: 5000, message: 'watch gone after close' });
    await s.deleteRecursive(base);
  });
});

describe('session features', () => {
  test('close deletes ephemeral nodes at once and later calls fail with ClosedError', async () => {
    const base = uniquePath('close');
    await s.mkdirp(base);
    const temp = await ZkSession.connect(server.connectString, { sessionTimeoutMs: 20000 });
    const eph = await temp.create(`${base}/e`, { mode: 'EPHEMERAL' });
    await temp.close();
    await temp.close(); // idempotent
    assert.equal(temp.state, 'CLOSED');
    assert.equal(await s.exists(eph), null, 'ephemeral gone without waiting for the 20 s timeout');
    await assert.rejects(temp.getData('/'), ClosedError);
    await assert.rejects(temp.create('/x'), ClosedError);
    await assert.rejects(temp.waitConnected(), ClosedError);
    await s.deleteRecursive(base);
  });

  test('session.signal aborts with ClosedError on close', async () => {
    const temp = await ZkSession.connect(server.connectString, { sessionTimeoutMs: 4000 });
    const signal = temp.signal;
    assert.equal(signal.aborted, false);
    await temp.close();
    assert.ok(signal.reason instanceof ClosedError);
  });

  test('a chroot in the connect string confines paths', async () => {
    const root = uniquePath('chroot');
    await s.mkdirp(root);
    const chrooted = await pool.connect(`${server.connectString}${root}`);
    assert.equal(await chrooted.create('/inside', { data: 'x' }), '/inside');
    assert.equal((await s.getData(`${root}/inside`)).data.toString(), 'x');
    const seq = await chrooted.create('/q-', { mode: 'PERSISTENT_SEQUENTIAL' });
    assert.match(seq, /^\/q-\d{10}$/);
    const w = await chrooted.getDataWatch('/inside');
    await s.setData(`${root}/inside`, 'y');
    assert.deepEqual(await w.changed, { type: 'NODE_DATA_CHANGED', path: '/inside' });
    const [r] = await chrooted.multi([{ type: 'create', path: '/m' }]);
    assert.deepEqual(r, { type: 'create', path: '/m' });
    // Every request kind the session encodes itself, with the chroot in front.
    const created = await chrooted.createWithStat('/s', { data: 'z' });
    assert.equal(created.path, '/s');
    assert.equal(created.stat.czxid, (await s.exists(`${root}/s`))?.czxid);
    assert.equal((await chrooted.exists('/inside'))?.version, 1);
    assert.equal(await chrooted.exists('/nope'), null);
    assert.deepEqual((await chrooted.getChildren('/')).children.sort(), ['inside', 'm', 's', seq.slice(1)].sort());
    assert.equal((await chrooted.getData('/s')).data.toString(), 'z');
    assert.equal((await chrooted.setData('/s', 'w')).version, 1);
    assert.equal((await s.getData(`${root}/s`)).data.toString(), 'w');
    await chrooted.sync('/');
    const appear = await chrooted.existsWatch('/nope');
    const kids = await chrooted.getChildrenWatch('/');
    await s.create(`${root}/nope`);
    assert.deepEqual(await appear.changed, { type: 'NODE_CREATED', path: '/nope' });
    assert.deepEqual(await kids.changed, { type: 'NODE_CHILDREN_CHANGED', path: '/' });
    // An abandoned watch is removed on the server at the chrooted path.
    const ac = new AbortController();
    const dropped = await chrooted.getDataWatch('/s', { signal: ac.signal });
    ac.abort();
    await assert.rejects(dropped.changed);
    await waitFor(async () => !((await server.watchesBySession()).get(`0x${chrooted.sessionId.toString(16)}`) ?? []).includes(`${root}/s`), { timeoutMs: 5000, message: 'the chrooted watch removed on the server' });
    await chrooted.delete('/s');
    assert.equal(await s.exists(`${root}/s`), null);
    await s.deleteRecursive(root);
  });

  test('digest auth: a CREATOR_ALL node is readable with the credentials only', async () => {
    const base = uniquePath('auth');
    await s.mkdirp(base);
    const alice = await pool.connect(server.connectString, { auth: [{ scheme: 'digest', credentials: 'alice:secret' }] });
    await alice.create(`${base}/private`, { data: 'x', acl: Acls.CREATOR_ALL });
    assert.equal((await alice.getData(`${base}/private`)).data.toString(), 'x');
    await assert.rejects(s.getData(`${base}/private`), (e: unknown) => e instanceof NoAuthError && e.code === 'NO_AUTH');
    const alice2 = await pool.connect(server.connectString, { auth: [{ scheme: 'digest', credentials: 'alice:secret' }] });
    assert.equal((await alice2.getData(`${base}/private`)).data.toString(), 'x');
    await alice.delete(`${base}/private`);
    await s.deleteRecursive(base);
  });

  test('counters count requests and watch events', async () => {
    const base = uniquePath('counters');
    const before = s.counters;
    await s.mkdirp(base);
    const w = await s.getDataWatch(base);
    await s.setData(base, 'x');
    await w.changed;
    const after = s.counters;
    assert.equal(after.getData - before.getData, 1);
    assert.equal(after.setData - before.setData, 1);
    assert.equal(after.watchEvents - before.watchEvents, 1);
    await s.deleteRecursive(base);
  });

  test('an unknown server error code becomes an error object, not a process crash', async () => {
    // removeWatches on a path without watches answers NO_WATCHER (-121), a code
    // node-zookeeper-client does not know: unpatched, it throws inside its socket handler.
    const raw = createRawClient(server.connectString, { sessionTimeoutMs: 4000, spinDelayMs: 50 });
    const connected = new Promise<void>((resolve) => raw.on('connected', resolve));
    raw.connect();
    await connected;
    const err = await new Promise<unknown>((resolve) => removeWatches(raw, '/', 'data', resolve));
    assert.equal((err as { code?: number }).code, -121);
    assert.equal((err as { name?: string }).name, 'NO_WATCHER');
    raw.close();
  });
});

describe('bad input is rejected before anything is sent', () => {
  const badPaths: unknown[] = ['', 'a', 'a/b', '/a/', '//', '/a//b', '/a/./b', '/a/../b', '/a\u0000b', '/\u0019', undefined, 42, null];
  for (const p of badPaths) {
    test(`path ${JSON.stringify(p)}`, async () => {
      const before = s.counters;
      for (const call of [() => s.create(p as string), () => s.getData(p as string), () => s.delete(p as string), () => s.getDataWatch(p as string), () => s.mkdirp(p as string)]) {
        await assert.rejects(call(), InvalidArgumentError);
      }
      assert.deepEqual(s.counters, before, 'nothing was sent');
    });
  }

  test('data over the limit, bad versions, modes, ACLs and ops', async () => {
    await assert.rejects(s.create('/x', { data: Buffer.alloc(1_000_001) }), /over the 1000000-byte limit/);
    await assert.rejects(s.setData('/x', Buffer.alloc(2_000_000)), InvalidArgumentError);
    await assert.rejects(s.setData('/x', 'a', { version: -(2 ** 31) - 1 }), InvalidArgumentError);
    await assert.rejects(s.setData('/x', 'a', { version: 1.5 }), InvalidArgumentError);
    await assert.rejects(s.create('/x', { mode: 'BOGUS' as never }), InvalidArgumentError);
    await assert.rejects(s.create('/x', { acl: [] }), InvalidArgumentError);
    await assert.rejects(s.create('/x', { data: 42 as never }), InvalidArgumentError);
    await assert.rejects(s.multi([]), InvalidArgumentError);
    await assert.rejects(s.multi([{ type: 'rename', path: '/x' } as never]), InvalidArgumentError);
    await assert.rejects(s.multi([{ type: 'create', path: 'x' }]), InvalidArgumentError);
    await assert.rejects(s.deleteRecursive('/'), InvalidArgumentError);
    await assert.rejects(s.getDataWatch('/', { signal: 'nope' as never }), InvalidArgumentError);
  });

  test('bad options and connect strings', () => {
    assert.throws(() => new ZkSession(''), InvalidArgumentError);
    assert.throws(() => new ZkSession('127.0.0.1:99999'), InvalidArgumentError);
    assert.throws(() => new ZkSession('127.0.0.1:2181/bad/'), InvalidArgumentError);
    assert.throws(() => new ZkSession(server.connectString, { sessionTimeoutMs: -1 }), InvalidArgumentError);
    assert.throws(() => new ZkSession(server.connectString, { sessionTimeoutMs: Number.NaN }), InvalidArgumentError);
    assert.throws(() => new ZkSession(server.connectString, { maxDataBytes: 1.5 }), InvalidArgumentError);
    assert.throws(() => new ZkSession(server.connectString, { retry: { maxRetries: -1 } }), InvalidArgumentError);
    assert.throws(() => new ZkSession(server.connectString, { auth: [{ scheme: '', credentials: 'x' }] }), InvalidArgumentError);
    assert.throws(() => new ZkSession(server.connectString, { connectTimeoutMs: -5 }), InvalidArgumentError);
  });

  test('connect to nothing times out with a typed error and leaves nothing running', async () => {
    const err = await ZkSession.connect('127.0.0.1:1', { connectTimeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(err instanceof Error && (err as ZooKeeperError).code === 'TIMEOUT', String(err));
    assert.match((err as Error).message, /could not connect to 127\.0\.0\.1:1 within 300 ms/);
  });
});

describe('createWithStat (create2)', () => {
  test('returns the path and the new node Stat in one request, chroot stripped', async () => {
    const base = uniquePath('create2');
    await s.mkdirp(base);
    const before = s.counters;
    const { path, stat } = await s.createWithStat(`${base}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL', data: 'abc' });
    assert.equal(s.counters.create - before.create, 1);
    assert.match(path, /\/n-\d{10}$/);
    assert.equal(stat.ephemeralOwner, s.sessionId);
    assert.equal(stat.dataLength, 3);
    assert.equal(stat.czxid, (await s.exists(path))?.czxid);
    const chrooted = await pool.connect(`${server.connectString}${base}`);
    const inside = await chrooted.createWithStat('/c', { data: 'x' });
    assert.equal(inside.path, '/c');
    assert.equal(inside.stat.czxid, (await s.exists(`${base}/c`))?.czxid);
    await assert.rejects(s.createWithStat(`${base}/n-`.replace('/n-', '/missing/n-')), NoNodeError);
    await s.deleteRecursive(base);
  });
});
