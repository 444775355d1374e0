/**
 * The `zkr` workload: each client runs the `zkr lock` command line tool, one process after
 * another, through the client's own proxies, each holding the lock while its command (`sleep`)
 * runs. What is checked is the tool's timing rule: a hold lasts, in the history, from the
 * instant `zkr` learnt of the grant (its "holding" line, before the command starts) to the
 * instant it saw the command's whole process group dead (its "process group ... is gone" line,
 * before it releases), both read from its `--verbose` stamps. So the exclusion check proves
 * that no command of one holder was alive while another's ran, under the nemesis: when a
 * partition outlasts the session, the first command must be dead before the server can expire
 * the session and grant the next. (Freezing a client freezes this harness, not its `zkr`
 * process; forced expiries aim at the client's own session, not `zkr`'s.)
 *
 * @internal
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chaosNow } from '../clock.js';
import { pause, type WorkloadContext } from './common.js';

/**
 * The bin beside this build: dist/cli/zkr.js from dist/testing/chaos/workloads/ and from
 * dist/cjs/testing/chaos/workloads/ (the bin is ESM only), build/src/cli/zkr.js in the tests'
 * build. Located from this file's own path in the stack (the CommonJS build has no
 * `import.meta`), as fleet.ts finds the client script.
 */
function zkrBin(): string {
  const original = Error.prepareStackTrace;
  let file: string | undefined;
  try {
    Error.prepareStackTrace = (_error, stack) => stack;
    file = (new Error().stack as unknown as NodeJS.CallSite[])[0]?.getFileName() ?? undefined;
  } finally {
    Error.prepareStackTrace = original;
  }
  if (file === undefined) throw new Error('chaos: cannot locate the zkr bin (no file name in the stack)');
  const here = dirname(file.startsWith('file:') ? fileURLToPath(file) : file);
  const candidates = [join(here, '..', '..', '..', 'cli', 'zkr.js'), join(here, '..', '..', '..', '..', 'cli', 'zkr.js')];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`chaos: the zkr bin is not built (looked for ${candidates.join(', ')})`);
  return found;
}

/**
 * How long a command holds, ms: mostly short, one in four long enough (3 to 10 s, past T) for
 * a partition to catch it, so the kill of the timing rule is exercised.
 */
function holdMs(ctx: WorkloadContext): number {
  return ctx.random.chance(0.25) ? ctx.random.int(3000, 10_000) : ctx.random.int(100, 800);
}

/** The chaos clock's reading of a `zkr --verbose` stamp (an ISO wall-clock time). */
function chaosTime(iso: string, wallMinusChaos: number): number {
  return Date.parse(iso) - wallMinusChaos;
}

/** Over TLS, zkr's options for the client's CA and certificate (its proxies forward to the TLS ports). */
function tlsArgs(ctx: WorkloadContext): string[] {
  const f = ctx.tlsFiles;
  return f ? ['--tls-ca', f.ca, '--tls-cert', f.cert, '--tls-key', f.key] : [];
}

/** One `zkr lock` run: its grant and end recorded from its own stamps. */
async function once(ctx: WorkloadContext, attempt: string): Promise<void> {
  const workload = ctx.spec.name;
  // The offset between the wall clock zkr stamps with and the chaos clock, sampled now.
  const wallMinusChaos = Date.now() - chaosNow();
  const T = ctx.session.timeoutMs;
  ctx.recorder.record({ type: 'wait', workload, attempt, leases: 1, mode: 'exclusive' });
  const child = spawn(
    process.execPath,
    [zkrBin(), 'lock', ctx.spec.path, '-v', '--id', attempt, '--connect', ctx.session.connectString, '--session-timeout', String(T / 1000), '--kill-grace', String(Math.min(0.3, T / 20000)), '-w', '10', ...tlsArgs(ctx), '--', 'sleep', String(holdMs(ctx) / 1000)],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let granted = false;
  let lost = false;
  let ended = false;
  let text = '';
  const stop = (): void => void child.kill('SIGTERM');
  ctx.stop.addEventListener('abort', stop, { once: true });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    text += d;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
      const line = text.slice(0, nl);
      text = text.slice(nl + 1);
      if (/sending SIG\w+ to process group/.test(line)) lost = true;
      const held = /^zkr (\S+) holding lock \S+: node \S+, fencing token (\d+), session (0x[0-9a-f]+)$/.exec(line);
      if (held && !granted) {
        granted = true;
        ctx.recorder.record({ type: 'grant', workload, attempt, token: held[2] as string, leases: 1, mode: 'exclusive', sessionId: held[3] as string, lostAtGrant: false }, chaosTime(held[1] as string, wallMinusChaos));
      }
      const gone = /^zkr (\S+) process group \d+ is gone$/.exec(line);
      if (gone && granted && !ended) {
        ended = true;
        ctx.recorder.record({ type: 'end', workload, attempt, why: lost ? 'lost' : 'release' }, chaosTime(gone[1] as string, wallMinusChaos));
      }
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  ctx.stop.removeEventListener('abort', stop);
  if (granted && !ended) {
    // zkr died without saying the group was gone: the hold lasts until now, as far as anyone knows.
    ctx.recorder.record({ type: 'end', workload, attempt, why: 'lost', error: `zkr exited ${code} without its "gone" line` });
  } else if (!granted && !ctx.stop.aborted) {
    ctx.recorder.record({ type: 'wait-fail', workload, attempt, error: `zkr exited ${code}` });
  }
}

/** The zkr workload: `zkr lock` runs one after another until stopped. */
export async function zkrWorkload(ctx: WorkloadContext): Promise<void> {
  for (let n = 0; !ctx.stop.aborted; n++) {
    await once(ctx, `${ctx.name}-${n}`);
    await pause(ctx.random.int(0, 200), ctx.stop);
  }
}
