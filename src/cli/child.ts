/**
 * The child of `zkr`: spawned directly (no shell unless asked) as the leader of a process group
 * of its own, so one signal reaches it and everything it forked; killed by the timing rule's
 * two steps (the kill signal, then SIGKILL after the grace); reported as a shell reports it.
 *
 * @internal
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { delay } from '../util/abort.js';
import { EXIT, signalExitCode } from './exit-codes.js';

/** How a child ended. @internal */
export interface ChildEnd {
  /** Its exit code, or 128 + N when signal N ended it; 126/127 when it could not be started. */
  code: number;
  /** The signal that ended it, if one did. */
  signal: NodeJS.Signals | undefined;
  /** Why it could not be started, if it could not. */
  spawnError: string | undefined;
}

/** What to run and how. @internal */
export interface ChildSpec {
  /** The command and its arguments (one line for `/bin/sh -c` with `shell`). */
  command: readonly string[];
  /** Run it through `/bin/sh -c`. */
  shell: boolean;
  /** Give it our stdin (else /dev/null). */
  passStdin: boolean;
  /** Its environment. */
  env: NodeJS.ProcessEnv;
}

/**
 * Whether any live (not zombie) process is in process group `pgid`. A killed process whose
 * parent has not reaped it yet still counts for kill(2), so on Linux /proc tells the live ones.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return true; // no /proc: kill(2) is all we know
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/** A running child in its own process group. @internal */
export class ChildGroup {
  /** The child's pid, which is also its process group's id. */
  readonly pid: number;
  /** Resolves once the child itself has exited (its group may outlive it). */
  readonly ended: Promise<ChildEnd>;
  private readonly child: ChildProcess;
  private killTimer: NodeJS.Timeout | undefined;
  private killing: Promise<void> | undefined;
  private exited = false;

  private constructor(child: ChildProcess, ended: Promise<ChildEnd>) {
    this.child = child;
    this.pid = child.pid as number;
    this.ended = ended;
    void ended.then(() => (this.exited = true));
  }

  /** Spawns the child, or resolves to how it failed to start (126 or 127, nothing running). */
  static start(spec: ChildSpec): Promise<ChildGroup | ChildEnd> {
    const [file, ...args] = spec.shell ? ['/bin/sh', '-c', spec.command.join(' ')] : spec.command;
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        child = spawn(file as string, args, {
          // setsid(2): a new session and process group led by the child.
          detached: true,
          stdio: [spec.passStdin ? 'inherit' : 'ignore', 'inherit', 'inherit'],
          env: spec.env,
        });
      } catch (err) {
        resolve(startFailure(err));
        return;
      }
      let settled = false;
      const ended = new Promise<ChildEnd>((done) => {
        child.once('exit', (code, signal) => {
          done(signal ? { code: signalExitCode(signal), signal, spawnError: undefined } : { code: code ?? EXIT.software, signal: undefined, spawnError: undefined });
        });
      });
      child.once('error', (err) => {
        if (settled) return;
        settled = true;
        resolve(startFailure(err));
      });
      child.once('spawn', () => {
        if (settled) return;
        settled = true;
        resolve(new ChildGroup(child, ended));
      });
    });
  }

  /** Sends `signal` to the whole group (a forwarded signal). Never throws. */
  signal(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // the group is gone already
    }
  }

  /** Whether any process of the group is still alive. */
  alive(): boolean {
    return !this.exited || groupAlive(this.pid);
  }

  /**
   * The timing rule's kill: `signal` to the group now, SIGKILL to the group `graceMs` later
   * (at once when it is 0 or the signal is SIGKILL). Resolves once the child has exited and no
   * live process is left in its group. Idempotent: a second call joins the first; `now` makes
   * a pending SIGKILL go at once.
   */
  kill(signal: NodeJS.Signals, graceMs: number, now = false): Promise<void> {
    if (this.killing) {
      if (now) this.sigkill();
      return this.killing;
    }
    this.signal(signal);
    if (graceMs <= 0 || signal === 'SIGKILL' || now) this.sigkill();
    else {
      this.killTimer = setTimeout(() => this.sigkill(), graceMs);
    }
    this.killing = this.untilDead();
    return this.killing;
  }

  private sigkill(): void {
    clearTimeout(this.killTimer);
    this.signal('SIGKILL');
  }

  /** Waits for the child's exit, then until its group has no live process, polling /proc. */
  private async untilDead(): Promise<void> {
    await this.ended;
    for (let i = 0; groupAlive(this.pid); i++) {
      await delay(Math.min(50, 5 + i * 5));
    }
    clearTimeout(this.killTimer);
  }
}

function startFailure(err: unknown): ChildEnd {
  const code = (err as NodeJS.ErrnoException).code;
  const message = err instanceof Error ? err.message : String(err);
  return { code: code === 'ENOENT' ? EXIT.notFound : EXIT.cannotExecute, signal: undefined, spawnError: message };
}
