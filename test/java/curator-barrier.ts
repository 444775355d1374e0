/**
 * Runs real Apache Curator barriers and multi-locks for the interop tests: one agent JVM
 * (test/java/CuratorBarrierAgent.java) with one Curator session, driven over stdin/stdout; each
 * command's reply is awaited by its request id. Missing Java or Curator is an error naming the
 * package, never a skip.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { delimiter } from 'node:path';
import { createInterface } from 'node:readline';
import { compileAgent } from './curator.js';

/** One JVM, one Curator session. */
export class CuratorBarrierAgent {
  private readonly stderr: string[] = [];
  private readonly pending = new Map<string, { resolve: (r: string) => void; reject: (e: Error) => void }>();
  private ready: ((line: string) => void) | undefined;
  private requests = 0;
  private exited: Error | undefined;
  private readonly exit: Promise<void>;
  /** The agent's session id (`0x...`). */
  sessionId = '';

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      this.stderr.push(d);
      if (this.stderr.length > 200) this.stderr.shift();
    });
    this.exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exited = new Error(`the Curator barrier agent exited (${code ?? signal}); its stderr: ${this.stderr.join('').slice(-4000)}`);
        for (const p of this.pending.values()) p.reject(this.exited);
        this.pending.clear();
        this.ready?.(`fatal ${this.exited.message}`);
        resolve();
      });
    });
  }

  /** Starts an agent connected to `connectString`; resolves once its session is up. */
  static async start(connectString: string): Promise<CuratorBarrierAgent> {
    const { dir, installation } = compileAgent('CuratorBarrierAgent');
    const child = spawn(
      installation.java,
      ['-Xmx128m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-cp', [dir, installation.classpath].join(delimiter), 'CuratorBarrierAgent', connectString],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const agent = new CuratorBarrierAgent(child);
    const line = await new Promise<string>((resolve) => (agent.ready = resolve));
    if (!line.startsWith('ready ')) {
      await agent.close();
      throw new Error(`the Curator barrier agent could not start: ${line}`);
    }
    agent.sessionId = line.split(' ')[1] ?? '';
    return agent;
  }

  private onLine(line: string): void {
    const [kind, req, ...rest] = line.trim().split(' ');
    if (kind === 'ready' || kind === 'fatal') {
      this.ready?.(line);
      this.ready = undefined;
      return;
    }
    const p = req === undefined ? undefined : this.pending.get(req);
    if (!p) return;
    this.pending.delete(req as string);
    if (kind === 'ok') p.resolve(rest.join(' '));
    else p.reject(new Error(`Curator agent: ${rest.join(' ')}`));
  }

  /** Sends `command` (its words after the request id) and resolves with the reply's result. */
  send(...words: (string | number)[]): Promise<string> {
    if (this.exited) return Promise.reject(this.exited);
    const req = `r${++this.requests}`;
    const [verb, ...args] = words;
    return new Promise((resolve, reject) => {
      this.pending.set(req, { resolve, reject });
      this.child.stdin.write(`${[verb, req, ...args].join(' ')}\n`);
    });
  }

  /** Closes the agent's client and waits for the JVM to exit (killed after 10 s). */
  async close(): Promise<void> {
    if (this.exited) return;
    this.child.stdin.end('quit\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exit;
    clearTimeout(timer);
  }
}
