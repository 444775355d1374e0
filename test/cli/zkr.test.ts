// `zkr` as a user runs it (the built bin, spawned), against a real ZooKeeper: one test per row of
// the exit-code table in docs/cli.md, the child's environment, signals forwarded to its process
// group while it runs, a wait ended by a signal leaving no node, the status file, credentials
// from a file never echoed, and nothing left in ZooKeeper after any of it.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Perms } from '../../src/client/types.js';
import { freePort, waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';
import { alive, endHold, holdUntilStdin, zkr, ZkrRun } from './run-zkr.js';

const fx = new ServerFixture();
const tmp = mkdtempSync(join(tmpdir(), 'zkr-test-'));
const runs = new Set<ZkrRun>();
after(async () => {
  await Promise.all([...runs].map((r) => r.stop()));
  rmSync(tmp, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({ ZK_CONNECT: fx.server.connectString });
/** Runs zkr to its end against the test server. */
const run = (args: readonly string[], stdin?: string) => zkr(args, env(), stdin === undefined ? {} : { stdin });
/** Starts zkr against the test server (killed at the end of the file if a test left it). */
function start(args: readonly string[]): ZkrRun {
  const r = new ZkrRun(args, env(), { keepStdin: true });
  runs.add(r);
  void r.exit.then(() => runs.delete(r));
  return r;
}

/** A holder whose child prints "held" and its environment, then runs until its stdin closes. */
function holder(mode: string, path: string, extra: readonly string[] = []): ZkrRun {
  return holdUntilStdin([mode, path, ...extra], env(), runs);
}
/** Ends a holder started by {@link holder} and waits for its exit code. */
const endHolder = endHold;

/** The test's path and everything zkr created for it are gone (parents created by zkr too). */
async function nothingLeft(path: string): Promise<void> {
  await waitFor(async () => (await fx.observer.exists(path)) === null, { timeoutMs: 10_000, message: `${path} removed` });
}

/**
 * No node is left under `path`. The directory itself stays when the zkr that created it ended
 * while another still used it (a zkr removes only what it created, once empty; the server reaps
 * such an empty container later).
 */
async function noNodeLeft(path: string): Promise<void> {
  await waitFor(async () => (await fx.children(path)).length === 0, { timeoutMs: 10_000, message: `no node left under ${path}` });
}

describe('zkr: exit codes (one test per row of the table)', () => {
  it("the command's own exit code, 0 and not", async () => {
    const path = uniquePath('cli-code');
    const ok = await run(['lock', path, '--', 'sh', '-c', 'exit 0']);
    assert.equal(ok.code, 0, ok.stderr);
    const three = await run(['lock', path, '--', 'sh', '-c', 'exit 3']);
    assert.equal(three.code, 3, three.stderr);
    assert.equal(three.stderr, '', 'nothing said when all went well');
    await nothingLeft(path);
  });

  it('128 + N when a signal ended the command', async () => {
    const path = uniquePath('cli-signal-code');
    const r = await run(['lock', path, '--', 'sh', '-c', 'kill -USR1 $$']);
    assert.equal(r.code, 128 + 10, r.stderr);
    const k = await run(['lock', path, '--', 'sh', '-c', 'kill -KILL $$']);
    assert.equal(k.code, 128 + 9, k.stderr);
    await nothingLeft(path);
  });

  it('-E (default 1) when busy with -n, and the command does not run', async () => {
    const path = uniquePath('cli-busy');
    const h = holder('lock', path);
    await h.waitFor(/^held /m);
    const busy = await run(['lock', path, '-n', '--', 'echo', 'ran']);
    assert.equal(busy.code, 1, busy.stderr);
    assert.equal(busy.stdout, '');
    const busy7 = await run(['lock', path, '-n', '-E', '7', '--', 'echo', 'ran']);
    assert.equal(busy7.code, 7, busy7.stderr);
    const zero = await run(['lock', path, '-w', '0', '--', 'echo', 'ran']);
    assert.equal(zero.code, 1, '-w 0 is -n');
    assert.deepEqual((await fx.children(path)).length, 1, 'only the holder is queued');
    assert.equal(await endHolder(h), 0);
    await nothingLeft(path);
  });

  it('-E (default 1) when timed out with -w, within the wait and its node removed', async () => {
    const path = uniquePath('cli-timeout');
    const h = holder('lock', path);
    await h.waitFor(/^held /m);
    const started = performance.now();
    const late = await run(['lock', path, '-w', '0.5', '--', 'echo', 'ran']);
    const ms = performance.now() - started;
    assert.equal(late.code, 1, late.stderr);
    assert.equal(late.stdout, '');
    assert.ok(ms >= 500, `waited the 0.5 s (${ms} ms)`);
    const late9 = await run(['lock', path, '--timeout=0.2', '--conflict-exit-code=9', '--', 'echo', 'ran']);
    assert.equal(late9.code, 9, late9.stderr);
    assert.equal((await fx.children(path)).length, 1, 'the waiters removed their nodes');
    assert.equal(await endHolder(h), 0);
    await nothingLeft(path);
  });

  it('75 when the lock is lost while the command runs (our node deleted): TERM, then SIGKILL after the grace', async () => {
    const path = uniquePath('cli-lost');
    const status = join(tmp, 'lost.status');
    // The command ignores TERM: only the SIGKILL a grace later ends it.
    const r = start(['lock', path, '--kill-grace', '0.3', '--status-file', status, '--', 'sh', '-c', 'trap "" TERM; echo "held $ZKR_NODE_PATH $$"; while :; do sleep 0.05; done']);
    const [, node, pid] = await r.waitFor(/^held (\S+) (\d+)$/m);
    assert.equal(readFileSync(status, 'utf8'), 'held\n');
    const deleted = performance.now();
    await fx.observer.delete(node as string);
    const end = await r.exit;
    const ms = performance.now() - deleted;
    assert.equal(end.code, 75, end.stderr);
    assert.match(end.stderr, /lost.*sending SIGTERM to process group \d+, SIGKILL after 0\.3s/);
    assert.ok(ms >= 300, `SIGKILL came after the 0.3 s grace (${ms} ms)`);
    assert.equal(alive(Number(pid)), false);
    assert.equal(readFileSync(status, 'utf8'), 'lost\n');
    await nothingLeft(path);
  });

  it('64 for a usage error, with a pointer to --help and nothing sent', async () => {
    for (const args of [['lock'], ['lock', '/x'], ['lock', 'relative', '--', 'true'], ['lock', '/x', '--bogus', '--', 'true'], ['semaphore', '/x', '--', 'true'], ['frob', '/x'], ['lock', '/x', '-w', 'soon', '--', 'true']]) {
      const r = await zkr(args, { ZK_CONNECT: `127.0.0.1:${await freePort()}` });
      assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^zkr: .+\nTry 'zkr (\w+ )?--help'\.\n$/, args.join(' '));
    }
  });

  it('64 for a kill grace that cannot fit the negotiated session timeout, before anything is queued', async () => {
    const path = uniquePath('cli-misfit');
    const r = await run(['lock', path, '--session-timeout', '2', '--kill-grace', '1', '--', 'echo', 'ran']);
    assert.equal(r.code, 64, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /--kill-grace 1s cannot fit the negotiated session timeout of 2s: .* at most 0\.2s .*--session-timeout of \d/);
    assert.equal(await fx.observer.exists(path), null, 'nothing created');
    // The same grace fits a longer session.
    const fits = await run(['lock', path, '--session-timeout', '10', '--kill-grace', '1', '--', 'true']);
    assert.equal(fits.code, 0, fits.stderr);
  });

  it('65 when the path holds another recipe', async () => {
    const path = uniquePath('cli-layout');
    const h = holder('lock', path);
    await h.waitFor(/^held /m);
    const r = await run(['read', path, '--', 'echo', 'ran']);
    assert.equal(r.code, 65, r.stderr);
    assert.match(r.stderr, /a node of a Mutex/);
    assert.equal(r.stdout, '');
    assert.equal((await fx.children(path)).length, 1, 'the refused node is gone');
    assert.equal(await endHolder(h), 0);
    await nothingLeft(path);
  });

  it('69 when ZooKeeper cannot be reached within --connect-timeout', async () => {
    const started = performance.now();
    const r = await zkr(['lock', '/x', '--connect', `127.0.0.1:${await freePort()}`, '--connect-timeout', '1', '--', 'echo', 'ran']);
    assert.equal(r.code, 69, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^zkr: could not connect to ZooKeeper at 127\.0\.0\.1:\d+ within 1s/);
    assert.ok(performance.now() - started < 20_000);
  });

  it('77 without permission on the path; --auth-file grants it, and the password is never printed', async () => {
    const base = uniquePath('cli-acl');
    const password = 'pw-9f3a-secret';
    const digest = createHash('sha1').update(`ops:${password}`).digest('base64');
    await fx.observer.mkdirp(base.slice(0, base.lastIndexOf('/')));
    await fx.observer.create(base, { acl: [{ scheme: 'digest', id: `ops:${digest}`, perms: Perms.ALL }, { scheme: 'world', id: 'anyone', perms: Perms.READ }] });
    const denied = await run(['lock', `${base}/job`, '--', 'echo', 'ran']);
    assert.equal(denied.code, 77, denied.stderr);
    assert.match(denied.stderr, /no permission/);
    const file = join(tmp, 'auth');
    writeFileSync(file, `# ops\ndigest:ops:${password}\n`, { mode: 0o600 });
    const allowed = await run(['lock', `${base}/job`, '--auth-file', file, '-v', '--', 'echo', 'ran']);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.stdout, 'ran\n');
    assert.match(allowed.stderr, /with digest:\*\*\*/);
    const wrong = await run(['lock', `${base}/job`, '--auth', 'digest:ops:wrong', '-v', '--', 'echo', 'ran']);
    assert.equal(wrong.code, 77, wrong.stderr);
    for (const out of [denied, allowed, wrong]) assert.ok(!`${out.stdout}${out.stderr}`.includes(password) && !`${out.stdout}${out.stderr}`.includes('wrong'), 'credentials never echoed');
    assert.deepEqual(await fx.children(base), [], 'job directory removed');
  });

  it('127 when the command is not found, 126 when it cannot be run; the lock is released', async () => {
    const path = uniquePath('cli-notfound');
    const missing = await run(['lock', path, '--', '/nonexistent/command']);
    assert.equal(missing.code, 127, missing.stderr);
    assert.match(missing.stderr, /cannot run \/nonexistent\/command/);
    const file = join(tmp, 'not-executable');
    writeFileSync(file, 'echo hi\n', { mode: 0o644 });
    const noexec = await run(['lock', path, '--', file]);
    assert.equal(noexec.code, 126, noexec.stderr);
    await nothingLeft(path);
  });

  it('128 + N when a signal ends the wait; the queued node is removed at once', async () => {
    const path = uniquePath('cli-wait-signal');
    const h = holder('lock', path);
    await h.waitFor(/^held /m);
    for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130], ['SIGHUP', 129]] as const) {
      const status = join(tmp, `wait-${signal}.status`);
      const w = start(['lock', path, '-v', '--status-file', status, '--', 'echo', 'ran']);
      await w.waitFor(/waiting for lock/);
      await waitFor(async () => (await fx.children(path)).length === 2, { timeoutMs: 10_000, message: 'the waiter queued' });
      assert.equal(readFileSync(status, 'utf8'), 'waiting\n');
      w.kill(signal);
      const end = await w.exit;
      assert.equal(end.code, code, end.stderr);
      assert.equal(end.stdout, '', 'the command never ran');
      assert.equal((await fx.children(path)).length, 1, `the waiter's node was gone when it exited (${signal})`);
    }
    assert.equal(await endHolder(h), 0);
    await nothingLeft(path);
  });

  it('128 + N when a signal ends the wait of a semaphore, a read lock or an election; no node left', async () => {
    for (const [holderArgs, waiterArgs, what] of [
      [['semaphore', '--max', '1'], ['semaphore', '--max', '1'], 'semaphore'],
      [['write'], ['read'], 'read'],
      [['elect', '--id', 'first'], ['elect', '--id', 'second'], 'elect'],
    ] as const) {
      const path = uniquePath(`cli-wait-${what}`);
      const h = holder(holderArgs[0], path, holderArgs.slice(1));
      await h.waitFor(/^held /m);
      const w = start([waiterArgs[0], path, ...waiterArgs.slice(1), '-v', '--', 'echo', 'ran']);
      await w.waitFor(new RegExp(`waiting for ${what}`));
      await waitFor(async () => (await fx.children(path)).length === 2, { timeoutMs: 10_000, message: `the ${what} waiter queued` });
      w.kill('SIGUSR1');
      const end = await w.exit;
      assert.equal(end.code, 128 + 10, `${what}: ${end.stderr}`);
      assert.equal(end.stdout, '');
      assert.equal((await fx.children(path)).length, 1, `the ${what} waiter's node was gone when it exited`);
      assert.equal(await endHolder(h), 0);
      await nothingLeft(path);
    }
  });
});

describe('zkr: the command and its process group', () => {
  it('gets ZKR_HELD, ZKR_MODE, ZKR_PATH, ZKR_NODE_PATH, ZKR_SESSION_ID and ZKR_FENCING_TOKEN of the grant it runs under', async () => {
    const path = uniquePath('cli-env');
    const r = start(['lock', path, '--pass-stdin', '--', 'sh', '-c', 'echo "$ZKR_HELD|$ZKR_MODE|$ZKR_PATH|$ZKR_NODE_PATH|$ZKR_SESSION_ID|$ZKR_FENCING_TOKEN"; read x']);
    const [, held, mode, p, node, session, token] = await r.waitFor(/^(.*)\|(.*)\|(.*)\|(.*)\|(.*)\|(.*)$/m);
    assert.equal(held, '1');
    assert.equal(mode, 'lock');
    assert.equal(p, path);
    assert.match(node as string, new RegExp(`^${path}/_c_[0-9a-f-]{36}-lock-\\d{10}$`));
    const stat = await fx.observer.exists(node as string);
    assert.ok(stat, 'the node exists while the command runs');
    assert.equal(token, stat.czxid.toString(), 'the fencing token is the node czxid, in decimal');
    assert.equal(session, `0x${stat.ephemeralOwner.toString(16)}`, 'the session that owns the node');
    r.child.stdin?.end('\n');
    assert.equal((await r.exit).code, 0);
    await nothingLeft(path);
  });

  it('runs through /bin/sh only with --shell', async () => {
    const path = uniquePath('cli-shell');
    const direct = await run(['lock', path, '--', 'echo', '$((1+2))', '|', 'tr', '3', 'x']);
    assert.equal(direct.stdout, '$((1+2)) | tr 3 x\n');
    const shell = await run(['lock', path, '--shell', '--', 'echo $((1+2)) | tr 3 x']);
    assert.equal(shell.stdout, 'x\n', shell.stderr);
    await nothingLeft(path);
  });

  it('forwards TERM, INT, HUP, QUIT, USR1 and USR2 to the whole group while it runs', async () => {
    const path = uniquePath('cli-forward');
    // The command and a grandchild it forked each report what they get; TERM ends the command with 42.
    const script = [
      // (A background job of sh ignores INT and QUIT, which it cannot trap.)
      'sh -c \'for s in HUP USR1 USR2; do trap "echo grandchild-$s" $s; done; trap "exit 0" TERM; echo grandchild-ready; while :; do sleep 0.05; done\' &',
      'for s in INT HUP QUIT USR1 USR2; do trap "echo child-$s" $s; done',
      'trap "exit 42" TERM',
      'echo child-ready',
      'while :; do sleep 0.05; done',
    ].join('\n');
    const r = start(['lock', path, '--kill-grace', '0.2', '--', 'sh', '-c', script]);
    await r.waitFor(/^child-ready$/m);
    await r.waitFor(/^grandchild-ready$/m);
    for (const s of ['INT', 'HUP', 'QUIT', 'USR1', 'USR2'] as const) {
      r.kill(`SIG${s}`);
      await r.waitFor(new RegExp(`^child-${s}$`, 'm'));
    }
    for (const s of ['HUP', 'USR1', 'USR2']) await r.waitFor(new RegExp(`^grandchild-${s}$`, 'm'));
    assert.equal(r.child.exitCode, null, 'zkr still runs');
    r.kill('SIGTERM');
    const end = await r.exit;
    assert.equal(end.code, 42, end.stderr);
    await nothingLeft(path);
  });

  it('kills what the command left running in its group before releasing', async () => {
    const path = uniquePath('cli-leftover');
    const r = await run(['lock', path, '--kill-grace', '0.2', '--', 'sh', '-c', '(trap "" TERM; exec sleep 60) & echo "left $!"']);
    assert.equal(r.code, 0, r.stderr);
    const pid = Number(/^left (\d+)$/m.exec(r.stdout)?.[1]);
    assert.ok(pid > 0, r.stdout);
    assert.equal(alive(pid), false, 'the grandchild is dead once zkr has exited');
    await nothingLeft(path);
  });

  it('keeps the state in --status-file: waiting, held, released', async () => {
    const path = uniquePath('cli-status');
    const status = join(tmp, 'states.status');
    const h = holder('lock', path);
    await h.waitFor(/^held /m);
    const w = start(['lock', path, '-v', '--status-file', status, '--pass-stdin', '--', 'sh', '-c', 'echo in; cat "$0"; read x', status]);
    await w.waitFor(/waiting for lock/);
    assert.equal(readFileSync(status, 'utf8'), 'waiting\n');
    await endHolder(h);
    await w.waitFor(/^in\nheld$/m, 30_000, 'stdout');
    w.child.stdin?.end('\n');
    assert.equal((await w.exit).code, 0);
    assert.equal(readFileSync(status, 'utf8'), 'released\n');
    await noNodeLeft(path);
  });
});

describe('zkr: every recipe', () => {
  it('semaphore --max 2: two hold at once, a third is busy', async () => {
    const path = uniquePath('cli-sem');
    const [a, b] = [holder('semaphore', path, ['--max', '2']), holder('semaphore', path, ['--max', '2'])];
    await Promise.all([a.waitFor(/^held /m), b.waitFor(/^held /m)]);
    const c = await run(['semaphore', path, '--max', '2', '-n', '--', 'echo', 'ran']);
    assert.equal(c.code, 1, c.stderr);
    assert.deepEqual(await Promise.all([endHolder(a), endHolder(b)]), [0, 0]);
    await noNodeLeft(path); // the directory stays if its creator ended first
  });

  it('read and write: readers share, a writer excludes them', async () => {
    const path = uniquePath('cli-rw');
    const [a, b] = [holder('read', path), holder('read', path)];
    await Promise.all([a.waitFor(/^held /m), b.waitFor(/^held /m)]);
    const w = await run(['write', path, '-n', '--', 'echo', 'ran']);
    assert.equal(w.code, 1, w.stderr);
    await Promise.all([endHolder(a), endHolder(b)]);
    const w2 = await run(['write', path, '-n', '--', 'sh', '-c', 'echo $ZKR_MODE']);
    assert.equal(w2.code, 0, w2.stderr);
    assert.equal(w2.stdout, 'write\n');
    await noNodeLeft(path); // the directory stays if its creator ended first
  });

  it('elect: the leader runs its command, another candidate is busy with -n and waits without', async () => {
    const path = uniquePath('cli-elect');
    const leader = holder('elect', path, ['--id', 'first']);
    await leader.waitFor(/^held /m);
    const busy = await run(['elect', path, '--id', 'second', '-n', '--', 'echo', 'ran']);
    assert.equal(busy.code, 1, busy.stderr);
    const next = start(['elect', path, '--id', 'second', '-v', '--', 'sh', '-c', 'echo "$ZKR_MODE $ZKR_FENCING_TOKEN"']);
    await next.waitFor(/waiting for elect/);
    await waitFor(async () => (await fx.children(path)).length === 2, { timeoutMs: 10_000, message: 'the second candidate stands' });
    assert.equal(await endHolder(leader), 0);
    const end = await next.exit;
    assert.equal(end.code, 0, end.stderr);
    assert.match(end.stdout, /^elect \d+\n$/);
    await noNodeLeft(path);
  });
});

describe('zkr --help', () => {
  it('prints the usage of zkr and of each subcommand, exit 0', async () => {
    const top = await zkr(['--help']);
    assert.equal(top.code, 0);
    assert.match(top.stdout, /^usage: zkr SUBCOMMAND/);
    for (const sub of ['lock', 'semaphore', 'read', 'write', 'elect', 'inspect', 'queue', 'watch']) {
      const r = await zkr([sub, '--help']);
      assert.equal(r.code, 0, sub);
      assert.match(r.stdout, new RegExp(`^usage: zkr ${sub}`), sub);
    }
  });
});
