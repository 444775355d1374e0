/**
 * The chaos runner's client processes: each with its own proxies, one per member.
 *
 * @internal
 * @module
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestingCluster } from '../cluster.js';
import { ChaosProxy } from '../proxy.js';
import type { SessionTicket } from './expire.js';
import type { HistoryRecorder } from './history.js';
import type { PlannedClient } from './plan.js';
import type { ClientConfig, ClientMessage, RunnerMessage } from './protocol.js';

/**
 * The folder of this compiled file, in the ESM build as in the CommonJS one (which has no
 * `import.meta`): from the raw call site of this function (a stack trace prepared by Node, so
 * source maps do not move it to the TypeScript source).
 */
function moduleDir(): string {
  const original = Error.prepareStackTrace;
  let file: string | undefined;
  try {
    Error.prepareStackTrace = (_error, stack) => stack;
    const stack = new Error().stack as unknown as NodeJS.CallSite[];
    file = stack[0]?.getFileName() ?? undefined;
  } finally {
    Error.prepareStackTrace = original;
  }
  if (file === undefined) throw new Error('chaos: cannot locate the client script (no file name in the stack)');
  return dirname(file.startsWith('file:') ? fileURLToPath(file) : file);
}

// Why: a client must never outlive its runner. Each exits when its IPC channel closes (the
// runner died, however); this handler also SIGKILLs them on any exit of the runner's own.
const children = new Set<ChildProcess>();
let installed = false;
function track(child: ChildProcess): void {
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const c of children) c.kill('SIGKILL');
    });
  }
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** What a client process is started with, besides its plan. */
export interface SpawnOptions {
  /** The ensemble (one proxy per member). */
  cluster: TestingCluster;
  /** Where the client's events go. */
  recorder: HistoryRecorder;
  /** The client's requested session timeout, ms. */
  sessionTimeoutMs: number;
  /** Port of the fenced resource. */
  resourcePort: number;
  /** Over TLS: the client's `tls` option (PEM text); its proxies then forward to the members' TLS ports. */
  tls?: ClientConfig['tls'];
  /** Over TLS: the PEM files of `tls` (for `zkr`). */
  tlsFiles?: ClientConfig['tlsFiles'];
  /** Seed of the client's own random stream. */
  seed: number;
  /** A file descriptor for the client's stdout and stderr. */
  logFd: number | 'ignore';
}

/** One chaos client process. */
export class ChaosClientProcess {
  /** Every session id the client had (`0x...`). */
  readonly sessionIds = new Set<string>();
  /** Settles with the exit code when the process has exited. */
  readonly exited: Promise<number | null>;
  #stopped: Promise<string[]> | undefined;
  #next = 0;

  private constructor(
    /** The client's name. */
    readonly name: string,
    /** For the cache workload: what it does. */
    readonly role: PlannedClient['role'],
    /** Its proxies, one per member. */
    readonly proxies: readonly ChaosProxy[],
    /** The process. */
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Starts the proxies and the process; resolves once its session is connected. */
  static async spawn(plan: PlannedClient, options: SpawnOptions): Promise<ChaosClientProcess> {
    // The proxies forward bytes: over TLS the handshake runs end to end, and the server's
    // certificate names 127.0.0.1, where the proxies listen.
    const proxies = await Promise.all(options.cluster.members.map((m) => ChaosProxy.start({ targetPort: options.tls ? (m.securePort as number) : m.port })));
    const config: ClientConfig = {
      name: plan.name,
      workload: plan.workload,
      connectString: proxies.map((p) => p.connectString).join(','),
      sessionTimeoutMs: options.sessionTimeoutMs,
      resourcePort: options.resourcePort,
      seed: options.seed,
      sessions: plan.sessions,
      ...(plan.role !== undefined && { role: plan.role }),
      ...(options.tls && { tls: options.tls }),
      ...(options.tlsFiles && { tlsFiles: options.tlsFiles }),
    };
    const script = join(moduleDir(), 'client.js');
    const child = fork(script, [JSON.stringify(config)], { stdio: ['ignore', options.logFd, options.logFd, 'ipc'] });
    track(child);
    const client = new ChaosClientProcess(plan.name, plan.role, proxies, child);
    child.on('message', (m: ClientMessage) => {
      if (m.msg === 'event') {
        options.recorder.add(m.event);
        if (m.event.type === 'session' && m.event.sessionId !== '0x0') client.sessionIds.add(m.event.sessionId);
      }
      if (m.msg === 'ready' || m.msg === 'second-ready') client.sessionIds.add(m.sessionId);
    });
    await client.#message('ready', 'its session connected');
    if (plan.sessions > 1) {
      // The second session on another member than the first: the first's member refuses while
      // it connects (its own connection stays), so the two sessions' network fates differ.
      const first = proxies.find((p) => p.connections > 0);
      first?.reject(true);
      try {
        client.send({ cmd: 'second' });
        await client.#message('second-ready', 'its second session connected');
      } finally {
        first?.reject(false);
      }
    }
    return client;
  }

  /** Resolves on the first message `msg` from the process; rejects if it exits first. */
  #message(msg: ClientMessage['msg'], what: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onMessage = (m: ClientMessage): void => {
        if (m.msg !== msg) return;
        this.child.off('message', onMessage);
        resolve();
      };
      this.child.on('message', onMessage);
      void this.exited.then((code) => reject(new Error(`client ${this.name} exited (code ${code}) before ${what}`)));
    });
  }

  /** Sends a command (ignored once the process is gone). */
  send(message: RunnerMessage): void {
    if (this.child.connected) this.child.send(message);
  }

  /** Asks for the current session's credentials; a string says why there are none. */
  credentials(timeoutMs = 3000): Promise<SessionTicket | string> {
    const id = this.#next++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done('no answer'), timeoutMs);
      const onMessage = (m: ClientMessage): void => {
        if (m.msg !== 'credentials' || m.id !== id) return;
        if ('unavailable' in m) done(m.unavailable);
        else done({ sessionId: BigInt(m.sessionId), password: Buffer.from(m.password, 'hex'), timeoutMs: m.timeoutMs });
      };
      const done = (r: SessionTicket | string): void => {
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(r);
      };
      this.child.on('message', onMessage);
      this.send({ cmd: 'credentials', id });
    });
  }

  /** Tells the client to release everything and close its recipes; resolves to its session ids (or rejects after `timeoutMs`). */
  stop(timeoutMs: number): Promise<string[]> {
    this.#stopped ??= new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`client ${this.name} did not stop within ${timeoutMs} ms`)), timeoutMs);
      const onMessage = (m: ClientMessage): void => {
        if (m.msg !== 'stopped') return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        for (const id of m.sessionIds) this.sessionIds.add(id);
        resolve(m.sessionIds);
      };
      this.child.on('message', onMessage);
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`client ${this.name} exited before it stopped`));
      });
      this.send({ cmd: 'stop' });
    });
    return this.#stopped;
  }

  /** Tells the client to close its session and exit; SIGKILLs it after `timeoutMs`. Resolves to whether it exited by itself. */
  async exit(timeoutMs: number): Promise<boolean> {
    this.send({ cmd: 'exit' });
    let timer: NodeJS.Timeout | undefined;
    const clean = await Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
    clearTimeout(timer);
    if (!clean) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
    await Promise.all(this.proxies.map((p) => p.close()));
    return clean;
  }
}
