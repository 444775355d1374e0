/**
 * Runs the built `zkr` as a user runs it: dist/cli/zkr.js, executed through its
 * `#!/usr/bin/env node` line (so the bin's mode and shebang are tested too), with its output
 * collected and waited on by pattern, with deadlines (never by sleeping).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// From build/test/cli/run-zkr.js up to the repository.
export const REPO = fileURLToPath(new URL('../../..', import.meta.url));
/** The package's bin, as package.json names it. */
export const ZKR = join(REPO, (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: { zkr: string } }).bin.zkr);

/** How a run ended. */
export interface ZkrExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running `zkr`. */
export class ZkrRun {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exit: Promise<ZkrExit>;
  private readonly waiters = new Set<() => void>();
  private readonly killTimer: NodeJS.Timeout;

  /** `stdin`: written to zkr's stdin, which is then closed; `keepStdin`: a pipe left open (end it with `child.stdin.end()`). */
  constructor(args: readonly string[], env: NodeJS.ProcessEnv = {}, options: { stdin?: string; keepStdin?: boolean } = {}) {
    // zkr's own variables come only from the test.
    const { ZK_CONNECT: _c, ZK_SASL_PASSWORD: _p, ZK_TLS_CA: _a, ZK_TLS_CERT: _t, ZK_TLS_KEY: _k, ...rest } = process.env;
    this.child = spawn(ZKR, args, { cwd: REPO, env: { ...rest, ...env }, stdio: [options.stdin === undefined && !options.keepStdin ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (options.stdin !== undefined) this.child.stdin?.end(options.stdin);
    this.child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      this.stdout += d;
      this.poke();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      this.stderr += d;
      this.poke();
    });
    // A bound on the whole run, far above what any case needs: a hang fails, it does not block.
    this.killTimer = setTimeout(() => this.child.kill('SIGKILL'), 90_000).unref();
    this.exit = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        clearTimeout(this.killTimer);
        this.poke();
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  private poke(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves with the match once `pattern` shows in stdout or stderr; rejects after `timeoutMs` or at exit. */
  waitFor(pattern: RegExp, timeoutMs = 30_000, stream: 'stdout' | 'stderr' | 'any' = 'any'): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      let exited = false;
      void this.exit.then(() => {
        exited = true;
        check();
      });
      const check = (): void => {
        const text = stream === 'stdout' ? this.stdout : stream === 'stderr' ? this.stderr : `${this.stdout}\n${this.stderr}`;
        const m = text.match(pattern);
        if (m) {
          done();
          resolve(m);
        } else if (exited) {
          done();
          reject(new Error(`zkr exited before ${pattern} showed; stdout: ${this.stdout}\nstderr: ${this.stderr}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${pattern} did not show within ${timeoutMs} ms; stdout: ${this.stdout}\nstderr: ${this.stderr}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /**
   * Ends a run a failed test left behind: TERM (which zkr passes to its command's group), SIGKILL
   * past 5 s; the pipes are closed either way, so nothing it left keeps the test process alive.
   */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await Promise.race([this.exit, new Promise((resolve) => this.child.once('exit', resolve))]);
      clearTimeout(timer);
    }
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }

  /** Sends `signal` to zkr itself. */
  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

/** Runs `zkr ARGS` to its end. */
export function zkr(args: readonly string[], env: NodeJS.ProcessEnv = {}, options: { stdin?: string } = {}): Promise<ZkrExit> {
  return new ZkrRun(args, env, options).exit;
}

/** Whether process `pid` is alive: it exists and is no zombie (a dead process its parent has not reaped). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * A zkr run whose command prints "held NODE" and then runs until its stdin closes (`args` up to
 * the command), kept in `runs` until it exits.
 */
export function holdUntilStdin(args: readonly string[], env: NodeJS.ProcessEnv, runs: Set<ZkrRun>): ZkrRun {
  const r = new ZkrRun([...args, '--pass-stdin', '--', 'sh', '-c', 'echo "held $ZKR_NODE_PATH"; read line; exit 0'], env, { keepStdin: true });
  runs.add(r);
  void r.exit.then(() => runs.delete(r));
  return r;
}

/** Ends a {@link holdUntilStdin} run and waits for its exit code. */
export async function endHold(r: ZkrRun): Promise<number | null> {
  r.child.stdin?.end('\n');
  return (await r.exit).code;
}
