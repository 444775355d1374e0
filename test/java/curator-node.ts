/**
 * Runs real Apache Curator PersistentNodes for the nodes interop test: one agent JVM
 * (test/java/CuratorNodeAgent.java) with one Curator session, driven over stdin/stdout; each
 * command's reply is awaited by its request id, and the agent's `created <id> <path>` lines
 * (its nodes' listener) are awaited with {@link CuratorNodeAgent.nextCreated}.
 */
import { JavaAgent } from './agent.js';

/** One JVM, one Curator session. */
export class CuratorNodeAgent {
  private constructor(private readonly agent: JavaAgent) {}

  /** The agent's session id (`0x...`). */
  get sessionId(): string {
    return this.agent.sessionId;
  }

  /** Starts an agent connected to `connectString`; resolves once its session is up. */
  static async start(connectString: string): Promise<CuratorNodeAgent> {
    return new CuratorNodeAgent(await JavaAgent.start('CuratorNodeAgent', [connectString], { name: 'Curator node agent' }));
  }

  /** Sends `command` (its words after the request id) and resolves with the reply's result. */
  async send(...words: (string | number)[]): Promise<string> {
    return (await this.agent.request(words, 60_000)).join(' ');
  }

  /** Starts a Curator PersistentNode as `id`; resolves with its actual path once created. */
  startNode(id: string, mode: string, protection: boolean, path: string, data: string): Promise<string> {
    return this.send('start', id, mode, String(protection), path, data);
  }

  /** The next `created` report of node `id` (call before causing it); resolves with the path. */
  async nextCreated(id: string, timeoutMs = 20_000): Promise<string> {
    const words = await this.agent.next((w) => w[0] === 'created' && w[1] === id, timeoutMs, `Curator node ${id} to be created`);
    return words[2] ?? '';
  }

  /** Closes the agent's client and waits for the JVM to exit (killed after 10 s). */
  close(): Promise<void> {
    return this.agent.close(10_000);
  }
}
