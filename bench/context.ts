// What every workload gets: where the server is, sessions that are closed afterwards, a fresh
// unique root path, and the server counters around the timed part.
import { randomBytes } from 'node:crypto';
import { ZkSession } from '../src/index.js';
import { result, serverCounters, type Result, type ServerCounters } from './metrics.js';

/** Shared state of one workload run. */
export class BenchContext {
  private readonly sessions: ZkSession[] = [];
  /** A fresh root path for this run, removed afterwards. */
  readonly root: string;

  constructor(
    readonly connectString: string,
    readonly workload: string,
    private readonly statsHost: string,
    private readonly statsPort: number,
  ) {
    this.root = `/bench/zk-recipes/${workload}/${randomBytes(4).toString('hex')}`;
  }

  /** Opens `n` sessions (10 s session timeout, as WORKLOADS.md says). */
  async sessionsN(n: number): Promise<ZkSession[]> {
    const made = await Promise.all(Array.from({ length: n }, () => ZkSession.connect(this.connectString, { sessionTimeoutMs: 10_000 })));
    this.sessions.push(...made);
    return made;
  }

  /** Server counters now. */
  counters(): Promise<ServerCounters | undefined> {
    return serverCounters(this.statsHost, this.statsPort);
  }

  /** The result line. */
  result(ops: number, seconds: number, latenciesMs: readonly number[], before: ServerCounters | undefined, after: ServerCounters | undefined, extra: Result = {}): Result {
    return result(this.workload, ops, seconds, latenciesMs, before, after, extra);
  }

  /** Removes the root path and closes the sessions. */
  async cleanup(): Promise<void> {
    const s = this.sessions[0];
    if (s && !s.closed) await s.deleteRecursive(this.root).catch(() => undefined);
    await Promise.all(this.sessions.map((x) => x.close()));
  }
}
