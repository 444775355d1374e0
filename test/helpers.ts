/**
 * Shared helpers of the integration tests: unique base paths, sessions closed at the end of a
 * file, and waiting for connection states with deadlines.
 */
import { randomBytes } from 'node:crypto';
import { ZkSession, type SessionOptions } from '../src/client/index.js';
import { NoNodeError } from '../src/errors.js';
import type { ConnectionState } from '../src/client/types.js';
import { after, before } from 'node:test';
import { ChaosProxy, TestingCluster, TestingServer, waitFor, withTimeout, type TestingClusterOptions, type TestingServerOptions } from '../src/testing/index.js';

/** Child names of `path` as `session` sees them, sorted; [] when it does not exist. */
export async function childrenOf(session: ZkSession, path: string): Promise<string[]> {
  try {
    return (await session.getChildren(path)).children.sort();
  } catch (err) {
    if (err instanceof NoNodeError) return [];
    throw err;
  }
}

/**
 * The session timeout of a session that must outlive the ensemble's leader being killed. An
 * idle session's loss clock trails by up to T/2 (a heartbeat every T/6, docs/sessions.md), so
 * it is LOST 0.4 T to 0.7 T after the kill: 20 s leaves at least 8 s for the election and the
 * reconnect, which take seconds on a loaded two-core machine.
 */
export const OUTLIVES_ELECTION_MS = 20_000;

/** A fresh, unique base path for one test. */
export function uniquePath(name: string): string {
  return `/test/${name.replace(/[^a-zA-Z0-9_-]/g, '_')}-${randomBytes(4).toString('hex')}`;
}

/** Opens sessions and closes all of them at once at the end of a test file. */
export class SessionPool {
  private readonly sessions = new Set<ZkSession>();

  /** Connects a session (default timeout 4 s, quick reconnects) and tracks it. */
  async connect(connectString: string, options: SessionOptions = {}): Promise<ZkSession> {
    const s = await ZkSession.connect(connectString, { sessionTimeoutMs: 4000, spinDelayMs: 50, ...options });
    this.sessions.add(s);
    return s;
  }

  /** Tracks a session connected elsewhere (closed with the others). */
  track(session: ZkSession): ZkSession {
    this.sessions.add(session);
    return session;
  }

  /** Closes every tracked session. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.close()));
    this.sessions.clear();
  }
}

/** Resolves when `session` next enters `state`; rejects after `timeoutMs`. */
export function nextState(session: ZkSession, state: ConnectionState, timeoutMs: number): Promise<void> {
  let listener: ((s: ConnectionState) => void) | undefined;
  const reached = new Promise<void>((resolve) => {
    listener = (s) => {
      if (s === state) resolve();
    };
    session.on('state', listener);
  });
  return withTimeout(reached, timeoutMs, `state ${state}`).finally(() => {
    if (listener) session.off('state', listener);
  });
}

/** Records every state a session goes through. */
export function recordStates(session: ZkSession): ConnectionState[] {
  const seen: ConnectionState[] = [];
  session.on('state', (s) => seen.push(s));
  return seen;
}

let apart = 0;

/**
 * `connectString` spelled anew on each call (the server named a different number of times): a
 * process shares what it knows of its lock nodes only between sessions of one connect string,
 * so a session connected with this acts as if in a process of its own (it watches the nodes of
 * the others on the server, and lists).
 */
export function apartConnectString(connectString: string): string {
  return Array.from({ length: 2 + apart++ }, () => connectString).join(',');
}

/**
 * The usual setup of an integration test file: one standalone server started in `before`, an
 * observer session that lists and checks (and takes no part), and everything closed in `after`.
 */
export class ServerFixture {
  server!: TestingServer;
  observer!: ZkSession;
  readonly pool = new SessionPool();
  readonly proxies: ChaosProxy[] = [];

  /** Registers the `before` and `after` hooks of the file; `options` start the server. */
  constructor(options: TestingServerOptions = {}) {
    before(async () => {
      this.server = await TestingServer.start(options);
      this.observer = await this.pool.connect(this.server.connectString, { sessionTimeoutMs: 30000 });
    });
    after(async () => {
      await this.pool.closeAll();
      await Promise.all(this.proxies.map((p) => p.close()));
      await this.server?.close();
    });
  }

  /** Child names of `path` (sorted, [] when absent), as the observer sees them. */
  children(path: string): Promise<string[]> {
    return childrenOf(this.observer, path);
  }

  /** `n` sessions to the server (closed in `after`). */
  sessionsN(n: number, options: SessionOptions = {}): Promise<ZkSession[]> {
    return Promise.all(Array.from({ length: n }, () => this.pool.connect(this.server.connectString, options)));
  }

  /** `n` sessions to the server, each as if in a process of its own (see {@link apartConnectString}). */
  sessionsApart(n: number, options: SessionOptions = {}): Promise<ZkSession[]> {
    return Promise.all(Array.from({ length: n }, () => this.pool.connect(apartConnectString(this.server.connectString), options)));
  }

  /** Waits until `session` has no data watch left on the server under `under` (wchc). */
  async waitNoWatches(session: ZkSession, under: string): Promise<void> {
    const hex = `0x${session.sessionId.toString(16)}`;
    await waitFor(
      async () => {
        const paths = (await this.server.watchesBySession()).get(hex) ?? [];
        return !paths.some((p) => p.startsWith(under));
      },
      { timeoutMs: 5000, message: `no watches of ${hex} under ${under}` },
    );
  }

  /** Every watch the server holds, child watches included (mntr's total: `wchc` lists data watches only). */
  async watchTotal(): Promise<number> {
    return Number((await this.server.mntr()).zk_watch_count);
  }

  /** Waits until the server holds `count` watches in all ({@link watchTotal}). */
  async waitWatchTotal(count: number, message: string, timeoutMs = 5000): Promise<void> {
    await waitFor(async () => (await this.watchTotal()) === count, { timeoutMs, message: `${count} watches on the server: ${message}` });
  }

  /** A proxy in front of the server (closed in `after`). */
  async proxy(): Promise<ChaosProxy> {
    const proxy = await ChaosProxy.start({ targetPort: this.server.port });
    this.proxies.push(proxy);
    return proxy;
  }
}

/** A session that reaches the ensemble only through two followers; see {@link ClusterFixture.behindTwoFollowers}. */
export interface BehindTwoFollowers {
  /** The session, connected through the first follower. */
  victim: ZkSession;
  /** Server id of the first follower. */
  first: number;
  /** Its route to the first follower. */
  viaFirst: ChaosProxy;
  /** Its route to the second follower (refusing until `failOver()`). */
  viaSecond: ChaosProxy;
  /** Cuts the first route and opens the second, so the next reconnect goes there. */
  failOver: () => void;
}

/** Like {@link ServerFixture}, for a file sharing one 3-member ensemble. */
export class ClusterFixture {
  cluster!: TestingCluster;
  observer!: ZkSession;
  readonly pool = new SessionPool();
  readonly proxies: ChaosProxy[] = [];

  /** Registers the `before` and `after` hooks of the file; `options` go to the ensemble (member links, TLS). */
  constructor(options: TestingClusterOptions = {}) {
    before(async () => {
      this.cluster = await TestingCluster.start(3, options);
      this.observer = await this.pool.connect(this.cluster.connectString, { sessionTimeoutMs: 30000 });
    });
    after(async () => {
      await this.pool.closeAll();
      await Promise.all(this.proxies.map((p) => p.close()));
      await this.cluster?.close();
    });
  }

  /** Waits until no running member holds a data watch of `session` under `under` (wchc). */
  async waitNoWatches(session: ZkSession, under: string): Promise<void> {
    const hex = `0x${session.sessionId.toString(16)}`;
    await waitFor(
      async () => {
        const maps = await Promise.all(this.cluster.members.filter((m) => m.running).map((m) => m.watchesBySession()));
        return !maps.some((m) => (m.get(hex) ?? []).some((p) => p.startsWith(under)));
      },
      { timeoutMs: 5000, message: `no watches of ${hex} under ${under}` },
    );
  }

  /** A proxy in front of the member listening on `port` (closed in `after`). */
  async proxyTo(port: number): Promise<ChaosProxy> {
    const proxy = await ChaosProxy.start({ targetPort: port });
    this.proxies.push(proxy);
    return proxy;
  }

  /**
   * A session connected through one follower, whose only other route is a second follower:
   * `failOver()` cuts the first route and opens the second, so the next reconnect goes there.
   */
  async behindTwoFollowers(): Promise<BehindTwoFollowers> {
    const leader = await this.cluster.waitForQuorum();
    const [first, second] = this.cluster.members.filter((m) => m.id !== leader);
    if (!first || !second) throw new Error('behindTwoFollowers: the ensemble has fewer than two followers');
    const viaFirst = await this.proxyTo(first.port);
    const viaSecond = await this.proxyTo(second.port);
    viaSecond.reject(true);
    const victim = await this.pool.connect(`${viaFirst.connectString},${viaSecond.connectString}`, { sessionTimeoutMs: 4000 });
    const failOver = (): void => {
      viaFirst.reject(true);
      viaSecond.reject(false);
    };
    return { victim, first: first.id, viaFirst, viaSecond, failOver };
  }

  /** Child names of `path` (sorted, [] when absent), as the observer sees them. */
  children(path: string): Promise<string[]> {
    return childrenOf(this.observer, path);
  }
}
