// What every workload gets: where the server is, sessions that are closed afterwards, a fresh
// unique root path, and the server counters around the timed part.
import { randomBytes } from 'node:crypto';
import { ZkSession } from '../src/index.js';
import { ChaosProxy, mntr } from '../src/testing/index.js';
import { result, serverCounters, type Result, type ServerCounters } from './metrics.js';

/**
 * The `k`-th session's spelling of `connectString` as if in a process of its own (`--apart`):
 * the same servers, named `k + 1` times, so no two sessions share a key for what a process
 * knows of its lock nodes.
 */
export function apartSpelling(connectString: string, k: number): string {
  return Array.from({ length: k + 1 }, () => connectString).join(',');
}

/** Shared state of one workload run. */
export class BenchContext {
  private readonly sessions: ZkSession[] = [];
  private readonly proxies: ChaosProxy[] = [];
  private readonly deferred: (() => Promise<void>)[] = [];
  /** Connect-string spellings handed out (`apart`): counted when asked for, not when connected. */
  private spellings = 0;
  /** A fresh root path for this run, removed afterwards. */
  readonly root: string;

  constructor(
    readonly connectString: string,
    readonly workload: string,
    private readonly statsHost: string,
    private readonly statsPort: number,
    /** Pid of the server's JVM when the bench started it (its heap can then be read). */
    readonly serverPid?: number,
    /**
     * Each session as if in a process of its own (`--apart`): a process shares what it knows of
     * its lock nodes only between sessions of one connect string, so each gets its own spelling.
     */
    readonly apart = false,
  ) {
    this.root = `/bench/zk-recipes/${workload}/${randomBytes(4).toString('hex')}`;
  }

  /** Opens `n` sessions (10 s session timeout, as WORKLOADS.md says), to `connectString` by default. */
  async sessionsN(n: number, connectString = this.connectString): Promise<ZkSession[]> {
    return Promise.all(Array.from({ length: n }, () => this.session(connectString)));
  }

  /** Opens one session (closed at cleanup). */
  async session(connectString = this.connectString): Promise<ZkSession> {
    const spelled = this.apart ? apartSpelling(connectString, this.spellings++) : connectString;
    const s = await ZkSession.connect(spelled, { sessionTimeoutMs: 10_000 });
    this.sessions.push(s);
    return s;
  }

  /** A pass-through proxy to the server, to count the bytes of the sessions opened through it. */
  async countingProxy(): Promise<ChaosProxy> {
    const proxy = await ChaosProxy.start({ targetHost: this.statsHost, targetPort: this.statsPort });
    this.proxies.push(proxy);
    return proxy;
  }

  /** Runs `fn` at cleanup, before the root is removed (e.g. a faster removal of a large tree). */
  defer(fn: () => Promise<void>): void {
    this.deferred.push(fn);
  }

  /** Server counters now. */
  counters(): Promise<ServerCounters | undefined> {
    return serverCounters(this.statsHost, this.statsPort);
  }

  /** One numeric `mntr` figure of the server (e.g. `zk_znode_count`), or undefined. */
  async stat(key: string): Promise<number | undefined> {
    const v = Number((await mntr(this.statsHost, this.statsPort, { timeoutMs: 3000 }).catch(() => undefined))?.[key]);
    return Number.isFinite(v) ? v : undefined;
  }

  /** The result line. */
  result(ops: number, seconds: number, latenciesMs: readonly number[], before: ServerCounters | undefined, after: ServerCounters | undefined, extra: Result = {}): Result {
    return result(this.workload, ops, seconds, latenciesMs, before, after, extra);
  }

  /** Removes the root path and closes the sessions and proxies. */
  async cleanup(): Promise<void> {
    for (const fn of this.deferred) await fn().catch((err: unknown) => console.error(`${this.workload}: cleanup step failed:`, err));
    const s = this.sessions.find((x) => !x.closed);
    if (s) await s.deleteRecursive(this.root).catch(() => undefined);
    await Promise.all(this.sessions.map((x) => x.close()));
    await Promise.all(this.proxies.map((p) => p.close()));
  }
}
