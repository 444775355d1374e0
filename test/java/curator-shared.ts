/**
 * Runs real Apache Curator SharedCount and SharedValue for the interop tests: one agent JVM
 * (test/java/CuratorSharedAgent.java) with one Curator session, driven over stdin/stdout. The
 * listeners' lines are recorded per recipe id, in arrival order.
 */
import { JavaAgent } from './agent.js';
import { waitFor } from '../../src/testing/index.js';

/** One JVM, one Curator session, any number of shared counts and values by id. */
export class CuratorSharedAgent {
  private agent!: JavaAgent;
  /** What each recipe's listener reported: counts as numbers, values as hex ('-' for none). */
  readonly changes = new Map<string, string[]>();

  private constructor() {}

  /** The agent's session id (`0x...`). */
  get sessionId(): string {
    return this.agent.sessionId;
  }

  /** Starts an agent connected to `connectString`; resolves once its session is up. */
  static async start(connectString: string): Promise<CuratorSharedAgent> {
    const a = new CuratorSharedAgent();
    a.agent = await JavaAgent.start('CuratorSharedAgent', [connectString], {
      name: 'Curator shared agent',
      onLine: (words) => {
        if (words[0] !== 'changed' && words[0] !== 'vchanged') return;
        const id = words[1] as string;
        let list = a.changes.get(id);
        if (!list) a.changes.set(id, (list = []));
        list.push(words[2] as string);
      },
    });
    return a;
  }

  /** Sends `command` (its words after the request id) and resolves with the reply's words. */
  async send(...words: (string | number)[]): Promise<readonly string[]> {
    return this.agent.request(words, 120_000);
  }

  /** Waits until the listener of `id` reported `value` (a count, or hex). */
  async changed(id: string, value: string | number, timeoutMs = 10_000): Promise<void> {
    await waitFor(() => this.changes.get(id)?.includes(String(value)), { timeoutMs, message: `Curator's ${id} reports ${value}` });
  }

  /** Closes the agent's client and waits for the JVM to exit (killed after 10 s). */
  close(): Promise<void> {
    return this.agent.close(10_000);
  }
}
