// zkr's pure parts, without a server: the timing rule's numbers and the command line's parsing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseArgs, UsageError, type RunCommand } from '../../src/cli/args.js';
import { graceMisfit, killMarginMs, suspensionBudgetMs, suspensionDeadline } from '../../src/cli/guard.js';

describe('zkr timing rule', () => {
  it('leaves 0.2 T less the watchdog period after a suspension, and a margin of T/20 (at least 100 ms)', () => {
    assert.equal(suspensionBudgetMs(10_000), 2000 - 250);
    assert.equal(suspensionBudgetMs(4000), 800 - 200);
    assert.equal(suspensionBudgetMs(2000), 400 - 100);
    assert.equal(killMarginMs(10_000), 500);
    assert.equal(killMarginMs(1000), 100);
  });

  it('fits the default 1 s grace in the default 10 s session, not in a 4 s one, and says what would fit', () => {
    assert.equal(graceMisfit(1000, 10_000), undefined);
    assert.equal(graceMisfit(1250, 10_000), undefined);
    assert.match(graceMisfit(1300, 10_000) ?? '', /at most 1\.25s/);
    const m = graceMisfit(1000, 4000) ?? '';
    assert.match(m, /--kill-grace 1s cannot fit the negotiated session timeout of 4s: .* at most 0\.4s .*--session-timeout of (\d+(\.\d)?) or more/);
    // What it proposes does fit.
    const proposed = Number(/--session-timeout of ([\d.]+)/.exec(m)?.[1]) * 1000;
    assert.equal(graceMisfit(1000, proposed), undefined);
    assert.notEqual(graceMisfit(1000, proposed - 100), undefined);
  });

  it('kills at the loss clock + T - grace - margin, never before now', () => {
    // SIGKILL (a grace after the kill signal) lands a margin before the earliest expiry.
    assert.equal(suspensionDeadline(1000, 10_000, 1000, 1500), 1000 + 10_000 - 1000 - 500);
    assert.equal(suspensionDeadline(1000, 4000, 400, 9999), 9999);
  });
});

describe('zkr command line', () => {
  const run = (args: string[], env: NodeJS.ProcessEnv = {}): RunCommand => {
    const c = parseArgs(args, env);
    assert.equal(c.kind, 'run');
    return c as RunCommand;
  };

  it('reads options before and after the path; the command starts at -- or at the first word after the path', () => {
    const a = run(['lock', '/p', '-w', '2.5', '--', 'make', '-j4']);
    assert.deepEqual([a.mode, a.path, a.timeoutMs, a.command], ['lock', '/p', 2500, ['make', '-j4']]);
    const b = run(['-v', 'lock', '--kill-grace=0.5', '/p', 'make', '-j4']);
    assert.deepEqual([b.verbose, b.killGraceMs, b.command], [true, 500, ['make', '-j4']]);
    const c = run(['semaphore', '/p', '--max', '3', '-n', '-E3', '--kill-signal', 'int', '--on-suspended', 'kill', '--', 'x']);
    assert.deepEqual([c.maxLeases, c.timeoutMs, c.conflictExitCode, c.killSignal, c.onSuspended], [3, 0, 3, 'SIGINT', 'kill']);
    assert.equal(run(['lock', '/p', '--kill-signal', '9', '--', 'x']).killSignal, 'SIGKILL');
  });

  it('takes --connect, else ZK_CONNECT, else 127.0.0.1:2181; credentials never appear in an error', () => {
    assert.equal(run(['lock', '/p', '--', 'x']).connect, '127.0.0.1:2181');
    assert.equal(run(['lock', '/p', '--', 'x'], { ZK_CONNECT: 'zk:1' }).connect, 'zk:1');
    assert.equal(run(['lock', '/p', '--connect', 'a:1,b:2/app', '--', 'x'], { ZK_CONNECT: 'zk:1' }).connect, 'a:1,b:2/app');
    assert.deepEqual(run(['lock', '/p', '--auth', 'digest:u:p:w', '--', 'x']).auth, [{ scheme: 'digest', credentials: 'u:p:w' }]);
    assert.throws(
      () => parseArgs(['lock', '/p', '--auth', 'digest-secret-no-colon', '--', 'x']),
      (err: unknown) => err instanceof UsageError && !err.message.includes('secret'),
    );
  });

  it('turns TLS on with any --tls-* option (else ZK_TLS_*), SASL with --sasl-user and a password from a file or ZK_SASL_PASSWORD, and takes --acl', () => {
    assert.equal(run(['lock', '/p', '--', 'x']).tls, undefined);
    assert.deepEqual(run(['lock', '/p', '--tls-ca', 'ca.pem', '--', 'x']).tls, { ca: 'ca.pem' });
    assert.deepEqual(run(['lock', '/p', '--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--tls-servername', 'zk.example', '--', 'x'], { ZK_TLS_CA: 'env-ca.pem' }).tls, {
      ca: 'env-ca.pem',
      cert: 'c.pem',
      key: 'k.pem',
      servername: 'zk.example',
    });
    assert.deepEqual(run(['lock', '/p', '--tls-ca', 'ca.pem', '--', 'x'], { ZK_TLS_CA: 'env-ca.pem' }).tls, { ca: 'ca.pem' });
    assert.equal(run(['lock', '/p', '--', 'x'], { ZK_SASL_PASSWORD: 'pw' }).sasl, undefined);
    assert.deepEqual(run(['lock', '/p', '--sasl-user', 'alice', '--', 'x'], { ZK_SASL_PASSWORD: 'pw' }).sasl, { mechanism: 'DIGEST-MD5', username: 'alice', password: 'pw' });
    const dir = mkdtempSync(join(tmpdir(), 'zkr-units-'));
    try {
      const file = join(dir, 'pw');
      writeFileSync(file, 'from file \r\nsecond\n');
      assert.equal(run(['lock', '/p', '--sasl-user', 'alice', '--sasl-password-file', file, '--', 'x'], { ZK_SASL_PASSWORD: 'env' }).sasl?.password, 'from file ');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(run(['lock', '/p', '--', 'x']).acl, 'open');
    assert.equal(run(['lock', '/p', '--acl', 'creator', '--auth', 'digest:u:p', '--', 'x']).acl, 'creator');
    assert.equal(run(['lock', '/p', '--acl', 'creator', '--sasl-user', 'alice', '--', 'x'], { ZK_SASL_PASSWORD: 'pw' }).acl, 'creator');
  });

  it('refuses what is wrong, naming it', () => {
    for (const [args, pattern] of [
      [['lock', '/p', '-n', '-w', '3', '--', 'x'], /exclude each other/],
      [['lock', '/p', '--max', '2', '--', 'x'], /--max is not an option of zkr lock/],
      [['lock', '/p', '--kill-signal', 'NOPE', '--', 'x'], /--kill-signal takes a signal name/],
      [['lock', '/p', '-E', '256', '--', 'x'], /from 0 to 255/],
      [['lock', '/p/', '--', 'x'], /absolute ZooKeeper path/],
      [['queue', 'pop', '/q'], /put, take, size, dead-letters/],
      [['inspect', '/p', '--', 'x'], /runs no command/],
      [['elect', '/p', '--observe', '--requeue'], /runs no command|needs/],
      [['lock', '/p', '--tls-cert', 'c.pem', '--', 'x'], /--tls-cert and --tls-key go together/],
      [['lock', '/p', '--tls-servername', '127.0.0.1', '--', 'x'], /--tls-servername takes a host name/],
      [['lock', '/p', '--sasl-user', 'alice', '--', 'x'], /needs a password: --sasl-password-file FILE .* or ZK_SASL_PASSWORD/],
      [['lock', '/p', '--sasl-password-file', '/nonexistent', '--', 'x'], /goes with --sasl-user/],
      [['lock', '/p', '--sasl-user', 'alice', '--sasl-password-file', '/nonexistent/pw', '--', 'x'], /cannot read it \(ENOENT\)/],
      [['lock', '/p', '--acl', 'creator', '--', 'x'], /--acl creator needs an identity/],
      [['lock', '/p', '--acl', 'world', '--', 'x'], /--acl takes open or creator/],
      [['inspect', '/p', '--acl', 'open'], /--acl is not an option of zkr inspect/],
      [['elect', '/p', '--observe', '--acl', 'open'], /--acl is not an option of zkr elect --observe/],
    ] as const) {
      assert.throws(() => parseArgs([...args], {}), (err: unknown) => err instanceof UsageError && pattern.test(err.message), args.join(' '));
    }
  });
});
