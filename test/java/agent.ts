/**
 * One agent JVM (test/java/<Class>.java, compiled once per test process) driven over stdin and
 * stdout, one line per command or reply: what every Curator interop driver shares. The agent
 * prints `ready <sessionId>` once its Curator session is up (or `fatal <why>`); a command sent
 * with {@link JavaAgent.request} carries a request id after its verb, and its reply is
 * `ok <id> ...` or `error <id> ...`. Other lines go to the driver's `onLine`, and to
 * {@link JavaAgent.next} waiters. Missing Java or Curator is an error naming the package, never a skip.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { delimiter } from 'node:path';
import { createInterface } from 'node:readline';
import { compileAgent } from './curator.js';

interface Waiter {
  readonly match: (words: readonly string[]) => boolean;
  readonly resolve: (words: readonly string[]) => void;
  readonly reject: (err: Error) => void;
}

/** A running agent JVM with one Curator session. */
export class JavaAgent {
  private readonly stderr: string[] = [];
  private readonly waiters = new Set<Waiter>();
  private readonly pending = new Map<string, { resolve: (words: readonly string[]) => void; reject: (e: Error) => void }>();
  private requests = 0;
  private exited: Error | undefined;
  private readonly exit: Promise<void>;
  /** The agent's session id (`0x...`), from its `ready` line. */
  sessionId = '';

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly name: string,
    private readonly onLine: (words: readonly string[], line: string) => void,
  ) {
    createInterface({ input: child.stdout }).on('line', (line) => this.line(line));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      this.stderr.push(d);
      if (this.stderr.length > 200) this.stderr.shift();
    });
    this.exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exited = new Error(`the ${name} exited (${code ?? signal}); its stderr: ${this.stderrTail(4000)}`);
        for (const w of this.waiters) w.reject(this.exited);
        this.waiters.clear();
        for (const p of this.pending.values()) p.reject(this.exited);
        this.pending.clear();
        resolve();
      });
    });
  }

  /**
   * Compiles and starts `className` with `args` (the connect string first, by convention);
   * resolves once it printed `ready`. `onLine` sees every line that is not a reply to a request.
   */
  static async start(
    className: string,
    args: readonly string[],
    options: { name?: string; onLine?: (words: readonly string[], line: string) => void; readyTimeoutMs?: number; jvmArgs?: readonly string[] } = {},
  ): Promise<JavaAgent> {
    const { dir, installation } = compileAgent(className);
    const child = spawn(
      installation.java,
      ['-Xmx128m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', ...(options.jvmArgs ?? []), '-cp', [dir, installation.classpath].join(delimiter), className, ...args],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const agent = new JavaAgent(child, options.name ?? `${className} agent`, options.onLine ?? (() => undefined));
    let ready: readonly string[];
    try {
      ready = await agent.next((w) => w[0] === 'ready' || w[0] === 'fatal', options.readyTimeoutMs ?? 60_000, 'the agent to connect');
    } catch (err) {
      agent.child.kill('SIGKILL');
      throw err;
    }
    if (ready[0] !== 'ready') {
      await agent.close();
      throw new Error(`the ${agent.name} could not start: ${ready.join(' ')}`);
    }
    agent.sessionId = ready[1] ?? '';
    return agent;
  }

  private line(line: string): void {
    const words = line.trim().split(/\s+/);
    const p = (words[0] === 'ok' || words[0] === 'error') && words[1] !== undefined ? this.pending.get(words[1]) : undefined;
    if (p) {
      this.pending.delete(words[1] as string);
      if (words[0] === 'ok') p.resolve(words.slice(2));
      else p.reject(new Error(`${this.name}: ${words.slice(2).join(' ')}`));
      return;
    }
    this.onLine(words, line);
    for (const w of this.waiters) {
      if (!w.match(words)) continue;
      this.waiters.delete(w);
      w.resolve(words);
    }
  }

  /** The last `chars` characters the agent wrote to stderr. */
  stderrTail(chars = 2000): string {
    return this.stderr.join('').slice(-chars);
  }

  /** The next line matching `match` (register it before sending the command that causes it). */
  next(match: (words: readonly string[]) => boolean, timeoutMs: number, what: string): Promise<readonly string[]> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; agent stderr: ${this.stderrTail()}`));
      }, timeoutMs);
      const w: Waiter = {
        match,
        resolve: (words) => {
          clearTimeout(timer);
          resolve(words);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.waiters.add(w);
    });
  }

  /** Resolves once `test` holds, checked now and after every line the agent prints. */
  async until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (test()) return;
    await this.next(() => test(), timeoutMs, what);
  }

  /** Writes one line, unanswered. */
  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /**
   * Sends `verb <id> ...args` and resolves with the words of its `ok` reply after the id (rejects
   * on `error`, on the agent's exit, or past `timeoutMs`).
   */
  request(words: readonly (string | number)[], timeoutMs = 30_000): Promise<readonly string[]> {
    if (this.exited) return Promise.reject(this.exited);
    const id = `r${++this.requests}`;
    const [verb, ...args] = words;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for the reply to ${words.join(' ')}; agent stderr: ${this.stderrTail()}`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (w) => {
          clearTimeout(timer);
          resolve(w);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.send([verb, id, ...args].join(' '));
    });
  }

  /** Sends `quit`, closes stdin and waits for the JVM to exit; kills it past `killAfterMs`. */
  async close(killAfterMs = 20_000): Promise<void> {
    if (this.exited) return;
    this.send('quit');
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), killAfterMs);
    await this.exit;
    clearTimeout(timer);
  }
}
