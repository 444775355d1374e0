// The subcommands of `zkr` that run no command, and elect's own modes, spawned as a user runs
// them: inspect (text and JSON) on each recipe, queue put / take / size / dead-letters, watch,
// elect --observe, and elect --requeue standing again after each term.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DistributedQueue } from '../../src/queue/queue.js';
import { Semaphore } from '../../src/semaphore/semaphore.js';
import { waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import { zkr, ZkrRun } from './run-zkr.js';

const fx = new ServerFixture();
const runs = new Set<ZkrRun>();
after(async () => {
  await Promise.all([...runs].map((r) => r.stop()));
});

const env = (): NodeJS.ProcessEnv => ({ ZK_CONNECT: fx.server.connectString });
const run = (args: readonly string[], stdin?: string) => zkr(args, env(), stdin === undefined ? {} : { stdin });
function start(args: readonly string[]): ZkrRun {
  const r = new ZkrRun(args, env(), { keepStdin: true });
  runs.add(r);
  void r.exit.then(() => runs.delete(r));
  return r;
}
/** A holder whose command prints "held" and runs until its stdin closes. */
function holder(args: readonly string[]): ZkrRun {
  return start([...args, '--pass-stdin', '--', 'sh', '-c', 'echo held; read x']);
}

interface Inspected {
  recipe: string;
  maxLeases?: number;
  items?: number;
  nodes: { role: string; kind: string; participant: string; fencingToken: string; ageMs: number; sessionId: string; path: string }[];
}

describe('zkr inspect', () => {
  it('shows the holder and the waiters of a mutex with their ids, tokens, ages and sessions', async () => {
    const path = uniquePath('cli-inspect-mutex');
    const a = holder(['lock', path, '--id', 'alpha']);
    await a.waitFor(/^held$/m);
    const b = holder(['lock', path, '--id', 'beta', '-v']);
    await b.waitFor(/waiting for lock/);
    await waitFor(async () => (await fx.children(path)).length === 2, { timeoutMs: 10_000, message: 'beta queued' });
    const json = await run(['inspect', path, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const found = JSON.parse(json.stdout) as Inspected;
    assert.equal(found.recipe, 'mutex');
    assert.deepEqual(
      found.nodes.map((n) => [n.role, n.participant]),
      [
        ['holder', 'alpha'],
        ['waiter', 'beta'],
      ],
    );
    const [first, second] = found.nodes;
    const stat = await fx.observer.exists(first?.path as string);
    assert.equal(first?.fencingToken, stat?.czxid.toString());
    assert.equal(first?.sessionId, `0x${stat?.ephemeralOwner.toString(16)}`);
    assert.ok(BigInt(first?.fencingToken as string) < BigInt(second?.fencingToken as string));
    assert.ok((first?.ageMs as number) >= 0);
    const text = await run(['inspect', path]);
    assert.match(text.stdout, new RegExp(`^${path}: mutex, 1 holder, 1 waiting\\n  holder  lock  alpha  token \\d+  age [\\d.]+s  session 0x[0-9a-f]+  ${path}/_c_`));
    a.child.stdin?.end('\n');
    await b.waitFor(/^held$/m);
    b.child.stdin?.end('\n');
    assert.equal((await a.exit).code, 0);
    assert.equal((await b.exit).code, 0);
    // The directory stays (alpha created it, beta used it last): empty, or reaped already.
    const gone = JSON.parse((await run(['inspect', path, '--json'])).stdout) as Inspected;
    assert.ok(gone.recipe === 'empty' || gone.recipe === 'absent', gone.recipe);
    assert.deepEqual(gone.nodes, []);
  });

  it('tells a semaphore (and its limit), a read-write lock and an election apart', async () => {
    const base = uniquePath('cli-inspect-kinds');
    const holders = [holder(['semaphore', `${base}/sem`, '--max', '3', '--id', 's1']), holder(['read', `${base}/rw`, '--id', 'r1']), holder(['elect', `${base}/el`, '--id', 'l1'])];
    await Promise.all(holders.map((h) => h.waitFor(/^held$/m)));
    const writer = holder(['write', `${base}/rw`, '--id', 'w1', '-v']);
    await writer.waitFor(/waiting for write/);
    await waitFor(async () => (await fx.children(`${base}/rw`)).length === 2, { timeoutMs: 10_000, message: 'the writer queued' });
    const look = async (p: string): Promise<Inspected> => JSON.parse((await run(['inspect', p, '--json'])).stdout) as Inspected;
    const sem = await look(`${base}/sem`);
    assert.equal(sem.recipe, 'semaphore');
    assert.equal(sem.maxLeases, 3);
    assert.deepEqual(sem.nodes.map((n) => [n.role, n.participant]), [['holder', 's1']]);
    const rw = await look(`${base}/rw`);
    assert.equal(rw.recipe, 'rwlock');
    assert.deepEqual(
      rw.nodes.map((n) => [n.role, n.kind, n.participant]),
      [
        ['holder', 'read', 'r1'],
        ['waiter', 'write', 'w1'],
      ],
    );
    const el = await look(`${base}/el`);
    assert.equal(el.recipe, 'leader');
    assert.deepEqual(el.nodes.map((n) => [n.role, n.participant]), [['holder', 'l1']]);
    for (const h of holders) h.child.stdin?.end('\n');
    await writer.waitFor(/^held$/m);
    writer.child.stdin?.end('\n');
    for (const h of [...holders, writer]) assert.equal((await h.exit).code, 0);
  });
});

describe('zkr inspect, other layouts', () => {
  it("tells Curator's V2 semaphore layout (leases/ and locks/) and a queue (its item count)", async () => {
    const base = uniquePath('cli-inspect-v2');
    const session = await fx.pool.connect(fx.server.connectString);
    const sem = new Semaphore(session, `${base}/v2`, { maxLeases: 2, layout: 'curator-v2', participantId: 'v2-holder' });
    const lease = await sem.acquire();
    const v2 = JSON.parse((await run(['inspect', `${base}/v2`, '--json'])).stdout) as Inspected;
    assert.equal(v2.recipe, 'semaphore-v2');
    assert.equal(v2.maxLeases, 2);
    assert.deepEqual(v2.nodes.map((n) => [n.role, n.kind, n.participant]), [['holder', 'lease', 'v2-holder']]);
    assert.equal(v2.nodes[0]?.fencingToken, lease.fencingToken.toString());
    await lease.release();
    await sem.close();
    assert.equal((await run(['queue', 'put', `${base}/q`, 'one'])).code, 0);
    const q = await run(['inspect', `${base}/q`]);
    assert.equal(q.stdout, `${base}/q: queue, 1 item\n`);
  });
});

describe('zkr queue', () => {
  it('put (argument or stdin), size, take (-n and -w give -E when empty), dead-letters', async () => {
    const path = uniquePath('cli-queue');
    const put = await run(['queue', 'put', path, 'first']);
    assert.equal(put.code, 0, put.stderr);
    assert.match(put.stdout, new RegExp(`^${path}/items/`));
    assert.equal((await run(['queue', 'put', path], 'second\nline')).code, 0);
    assert.equal((await run(['queue', 'size', path])).stdout, '2\n');
    assert.equal((await run(['queue', 'size', path, '--json'])).stdout, '{"size":2}\n');
    assert.equal((await run(['queue', 'take', path])).stdout, 'first');
    assert.equal((await run(['queue', 'take', path, '--json'])).stdout, '{"data":"second\\nline"}\n');
    const empty = await run(['queue', 'take', path, '-n']);
    assert.equal(empty.code, 1, empty.stderr);
    assert.equal(empty.stdout, '');
    const late = await run(['queue', 'take', path, '-w', '0.3', '-E', '4']);
    assert.equal(late.code, 4, late.stderr);
    // A waiting take gets what is put meanwhile.
    const waiting = start(['queue', 'take', path, '-w', '30']);
    await waitFor(async () => (await fx.children(`${path}/consumers`)).length > 0, { timeoutMs: 10_000, message: 'the take waits' });
    assert.equal((await run(['queue', 'put', path, 'third'])).code, 0);
    assert.equal((await waiting.exit).stdout, 'third');
    // A dead letter, made by a consumer whose handler fails its one delivery.
    const session = await fx.pool.connect(fx.server.connectString);
    const q = new DistributedQueue(session, path);
    await q.put('poison');
    const stop = new AbortController();
    const consuming = q.consume(
      () => {
        throw new Error('cannot parse');
      },
      { signal: stop.signal, onError: () => undefined, maxDeliveries: 1 },
    );
    await waitFor(async () => (await q.deadLetters()).length === 1, { timeoutMs: 20_000, message: 'the item is a dead letter' });
    stop.abort();
    await consuming.catch(() => undefined);
    await q.close();
    const letters = await run(['queue', 'dead-letters', path, '--json']);
    assert.equal(letters.code, 0, letters.stderr);
    const [letter] = JSON.parse(letters.stdout) as { data: string; deliveries: number; lastError: string }[];
    assert.equal(letter?.data, 'poison');
    assert.equal(letter?.deliveries, 1);
    assert.match(letter?.lastError ?? '', /cannot parse/);
    assert.match((await run(['queue', 'dead-letters', path])).stdout, /\t1 deliveries\t.*cannot parse\n$/);
  });
});

describe('zkr watch', () => {
  it('prints the tree as it changes until a signal stops it (exit 0)', async () => {
    const path = uniquePath('cli-watch');
    await fx.observer.mkdirp(path);
    await fx.observer.create(`${path}/a`, { data: 'one' });
    const w = start(['watch', path]);
    await w.waitFor(/ initialized nodes 2\n/);
    assert.match(w.stdout, new RegExp(` added ${path}/a version 0 "one"\\n`));
    await fx.observer.setData(`${path}/a`, 'two');
    await w.waitFor(new RegExp(` changed ${path}/a version 1 "two"\\n`));
    await fx.observer.create(`${path}/b`);
    await w.waitFor(new RegExp(` added ${path}/b version 0 ""\\n`));
    await fx.observer.delete(`${path}/b`);
    await w.waitFor(new RegExp(` removed ${path}/b `));
    w.kill('SIGINT');
    const end = await w.exit;
    assert.equal(end.code, 0, end.stderr);
    const json = start(['watch', path, '--json']);
    const [line] = await json.waitFor(/^\{.*"event":"added".*\}$/m);
    assert.deepEqual(Object.keys(JSON.parse(line)).sort(), ['at', 'data', 'event', 'path', 'version']);
    json.kill('SIGTERM');
    assert.equal((await json.exit).code, 0);
  });
});

describe('zkr elect --observe and --requeue', () => {
  it('--observe prints the leader and each change; --requeue stands again after each term', async () => {
    const path = uniquePath('cli-elect-modes');
    const observer = start(['elect', path, '--observe']);
    await observer.waitFor(/ no leader\n/);
    // Each term runs until a line comes on stdin; the token grows from term to term.
    const leader = start(['elect', path, '--id', 'cyclist', '--requeue', '-v', '--pass-stdin', '--', 'sh', '-c', 'read x; echo "term $ZKR_FENCING_TOKEN"']);
    await observer.waitFor(/ leader cyclist token (\d+) session 0x[0-9a-f]+ /);
    leader.child.stdin?.write('\n');
    await leader.waitFor(/^term \d+\n/);
    leader.child.stdin?.write('\n');
    const [, t1, t2] = await leader.waitFor(/^term (\d+)\nterm (\d+)\n/);
    assert.ok(BigInt(t1 as string) < BigInt(t2 as string), 'a new term, a new token');
    await waitFor(() => (observer.stdout.match(/ leader cyclist /g) ?? []).length >= 3, { timeoutMs: 20_000, message: 'the observer saw three terms' });
    // A signal ends it: forwarded to the running term's command, and no term after it.
    leader.kill('SIGTERM');
    const end = await leader.exit;
    assert.equal(end.code, 143, end.stderr);
    await observer.waitFor(/ leader cyclist [^\n]*\n[^\n]* no leader\n$/, 30_000, 'stdout');
    observer.kill('SIGTERM');
    assert.equal((await observer.exit).code, 0);
  });
});
