/**
 * Runs real Apache Curator barriers and multi-locks for the interop tests: one agent JVM
 * (test/java/CuratorBarrierAgent.java) with one Curator session, driven over stdin/stdout; each
 * command's reply is awaited by its request id.
 */
import { JavaAgent } from './agent.js';

/** One JVM, one Curator session. */
export class CuratorBarrierAgent {
  private constructor(private readonly agent: JavaAgent) {}

  /** The agent's session id (`0x...`). */
  get sessionId(): string {
    return this.agent.sessionId;
  }

  /** Starts an agent connected to `connectString`; resolves once its session is up. */
  static async start(connectString: string): Promise<CuratorBarrierAgent> {
    return new CuratorBarrierAgent(await JavaAgent.start('CuratorBarrierAgent', [connectString], { name: 'Curator barrier agent' }));
  }

  /** Sends `command` (its words after the request id) and resolves with the reply's result. */
  async send(...words: (string | number)[]): Promise<string> {
    return (await this.agent.request(words, 120_000)).join(' ');
  }

  /** Closes the agent's client and waits for the JVM to exit (killed after 10 s). */
  close(): Promise<void> {
    return this.agent.close(10_000);
  }
}
