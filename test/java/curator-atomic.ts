/**
 * Runs real Apache Curator `DistributedAtomicLong`s for the atomic interop test: one agent JVM
 * (test/java/CuratorAtomicAgent.java) with one Curator session, driven over stdin/stdout; each
 * command's reply is awaited by its request id.
 */
import { JavaAgent } from './agent.js';

/** A Curator `AtomicValue<Long>` as the agent prints it. */
export interface CuratorAtomicValue {
  succeeded: boolean;
  preValue: bigint;
  postValue: bigint;
}

/** One JVM, one Curator session. */
export class CuratorAtomicAgent {
  private constructor(private readonly agent: JavaAgent) {}

  /** Starts an agent connected to `connectString`; resolves once its session is up. */
  static async start(connectString: string): Promise<CuratorAtomicAgent> {
    return new CuratorAtomicAgent(await JavaAgent.start('CuratorAtomicAgent', [connectString], { name: 'Curator atomic agent' }));
  }

  /** Curator's `get()`: the value (0 for a missing node). */
  async get(path: string): Promise<bigint> {
    const [succeeded, value] = await this.agent.request(['get', path], 30_000);
    if (succeeded !== 'true') throw new Error(`Curator get of ${path} did not succeed`);
    return BigInt(value!);
  }

  /** Curator's `add(delta)`. */
  async add(path: string, delta: bigint): Promise<CuratorAtomicValue> {
    return value(await this.agent.request(['add', path, delta.toString()], 30_000));
  }

  /** Curator's `compareAndSet(expected, newValue)`. */
  async compareAndSet(path: string, expected: bigint, newValue: bigint): Promise<CuratorAtomicValue> {
    return value(await this.agent.request(['cas', path, expected.toString(), newValue.toString()], 30_000));
  }

  /**
   * `threads` Curator threads each call `increment()` `count` times (RetryNTimes(retries, 1 ms),
   * PromotedToLock on `lockPath` if given); resolves to how many succeeded and failed.
   */
  async increments(path: string, threads: number, count: number, retries: number, lockPath?: string): Promise<{ succeeded: number; failed: number }> {
    const words = ['inc', path, threads, count, retries, ...(lockPath ? [lockPath] : [])];
    const [ok, failed] = await this.agent.request(words, 120_000);
    return { succeeded: Number(ok), failed: Number(failed) };
  }

  /** Closes the agent's client and waits for the JVM to exit (killed after 10 s). */
  close(): Promise<void> {
    return this.agent.close(10_000);
  }
}

function value(words: readonly string[]): CuratorAtomicValue {
  const [succeeded, pre, post] = words;
  return { succeeded: succeeded === 'true', preValue: BigInt(pre!), postValue: BigInt(post!) };
}
