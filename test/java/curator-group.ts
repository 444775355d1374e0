/**
 * Runs real Apache Curator GroupMembers for the interop tests: one agent JVM
 * (test/java/CuratorGroupAgent.java) with one Curator session, driven over stdin/stdout.
 */
import { JavaAgent } from './agent.js';

const hex = (payload: string | Buffer): string => {
  const b = Buffer.from(payload);
  return b.length === 0 ? '-' : b.toString('hex');
};

/** One JVM, one Curator session, any number of Curator GroupMembers on it. */
export class CuratorGroupAgent {
  private constructor(private readonly agent: JavaAgent) {}

  /** The agent's session id (`0x...`). */
  get sessionId(): string {
    return this.agent.sessionId;
  }

  /** Starts an agent connected to `connectString`; resolves once its session is up. */
  static async start(connectString: string): Promise<CuratorGroupAgent> {
    return new CuratorGroupAgent(await JavaAgent.start('CuratorGroupAgent', [connectString], { name: 'Curator group agent' }));
  }

  /** A Curator GroupMember `id` (a handle of the agent's) joins `path` as `memberId` with `payload`. */
  async join(id: string, path: string, memberId: string, payload: string | Buffer): Promise<void> {
    await this.agent.request(['join', id, path, memberId, hex(payload)]);
  }

  /** Curator's `getCurrentMembers()` of member `id`: member id to payload. */
  async members(id: string): Promise<Map<string, Buffer>> {
    const words = await this.agent.request(['members', id]);
    return new Map(
      words.map((w) => {
        const i = w.indexOf('=');
        const h = w.slice(i + 1);
        return [w.slice(0, i), h === '-' ? Buffer.alloc(0) : Buffer.from(h, 'hex')];
      }),
    );
  }

  /** Curator's `setThisData` of member `id`. */
  async setData(id: string, payload: string | Buffer): Promise<void> {
    await this.agent.request(['set', id, hex(payload)]);
  }

  /** Curator's `close()` of member `id`: it leaves. */
  async leave(id: string): Promise<void> {
    await this.agent.request(['leave', id]);
  }

  /** Closes the agent's client and waits for the JVM to exit (killed after 10 s). */
  close(): Promise<void> {
    return this.agent.close(10_000);
  }
}
