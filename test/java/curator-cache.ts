/**
 * Runs real Apache Curator CuratorCaches for the cache interop tests: one agent JVM
 * (test/java/CuratorCacheAgent.java, compiled and run by {@link JavaAgent}) with one Curator session,
 * holding caches by id and writing on command, over stdin/stdout. Every event of every cache is
 * recorded in order. Missing Java or Curator is an error naming the package, never a skip.
 */
import { JavaAgent } from './agent.js';

/** A node as Curator's cache holds it (the fields the agent prints). */
export interface CuratorNode {
  readonly path: string;
  readonly czxid: bigint;
  readonly mzxid: bigint;
  readonly version: number;
  /** The data; undefined when Curator holds none. */
  readonly data: Buffer | undefined;
}

/** One event of a CuratorCache (`deleted` carries the node as last held). */
export interface CuratorCacheEvent {
  readonly type: 'created' | 'changed' | 'deleted';
  readonly node: CuratorNode;
}

/** Which CuratorCache: the whole tree, or `SINGLE_NODE_CACHE`. */
export type CuratorCacheKind = 'tree' | 'node';

function parseNode(text: string): CuratorNode {
  const parts = text.split(':');
  const [czxid, mzxid, version, hex] = parts.slice(-4) as [string, string, string, string];
  return {
    path: parts.slice(0, -4).join(':'),
    czxid: BigInt(czxid),
    mzxid: BigInt(mzxid),
    version: Number(version),
    data: hex === '~' ? undefined : hex === '-' ? Buffer.alloc(0) : Buffer.from(hex, 'hex'),
  };
}

const hexOf = (data: Buffer | string): string => {
  const b = Buffer.from(data);
  return b.length === 0 ? '-' : b.toString('hex');
};

/** One JVM, one Curator session, CuratorCaches by id. */
export class CuratorCacheAgent {
  private readonly replies = new Map<string, readonly string[]>();
  private readonly recorded = new Map<string, CuratorCacheEvent[]>();
  private readonly initializedIds = new Set<string>();
  private agent!: JavaAgent;

  private constructor() {}

  /** The agent's session id, as `wchc` prints it (`0x...`). */
  get sessionId(): string {
    return this.agent.sessionId;
  }

  /** Starts an agent connected to `connectString`; resolves once its session is up. */
  static async start(connectString: string): Promise<CuratorCacheAgent> {
    const cache = new CuratorCacheAgent();
    cache.agent = await JavaAgent.start('CuratorCacheAgent', [connectString], { name: 'Curator cache agent', onLine: (words) => cache.onLine(words) });
    return cache;
  }

  private onLine(words: readonly string[]): void {
    switch (words[0]) {
      case 'event': {
        const [, id, type, node] = words as [string, string, CuratorCacheEvent['type'], string];
        let list = this.recorded.get(id);
        if (!list) this.recorded.set(id, (list = []));
        list.push({ type, node: parseNode(node) });
        break;
      }
      case 'initialized':
        this.initializedIds.add(words[1] as string);
        break;
      case 'started':
      case 'closed':
      case 'dump':
        this.replies.set(`${words[0]} ${words[1]}`, words);
        break;
    }
  }

  /** Resolves once `test` holds (checked after every line the agent prints); rejects past `timeoutMs`. */
  until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return this.agent.until(test, timeoutMs, what);
  }

  private async call(key: string, line: string, what: string): Promise<readonly string[]> {
    this.replies.delete(key);
    this.agent.send(line);
    await this.until(() => this.replies.has(key), 20_000, what);
    const words = this.replies.get(key) as readonly string[];
    this.replies.delete(key);
    return words;
  }

  /**
   * Builds and starts a CuratorCache `id` on `path`, with the agent's session or (`ownSession`)
   * one of its own, closed with the cache. Own sessions are needed for two caches on one path
   * (on a server before 3.9 a recursive and a plain persistent watch on one path in one session
   * interfere, ZOOKEEPER-4466: Curator's tree cache then misses events below the path), and to
   * see the server rid of a closed cache's watch (with ZooKeeper's 3.8 client,
   * `CuratorCache.close()` leaves its persistent watch until the session ends, ZOOKEEPER-4472).
   * Resolves once started (not initialized) with the id of the session it uses (`0x...`).
   */
  async cache(id: string, kind: CuratorCacheKind, path: string, ownSession = false): Promise<string> {
    const w = await this.call(`started ${id}`, `cache ${id} ${kind} ${path}${ownSession ? ' own' : ''}`, `cache ${id} to start`);
    if (w[0] !== 'started') throw new Error(`Curator cache ${id}: ${w.join(' ')}`);
    return w[2] ?? '';
  }

  /** Resolves once cache `id` has called `initialized()`. */
  initialized(id: string, timeoutMs = 10_000): Promise<void> {
    return this.until(() => this.initializedIds.has(id), timeoutMs, `cache ${id} initialized`);
  }

  /** Every event of cache `id` so far, in the order Curator's listener saw them (a live array). */
  events(id: string): CuratorCacheEvent[] {
    let list = this.recorded.get(id);
    if (!list) this.recorded.set(id, (list = []));
    return list;
  }

  /** Cache `id`'s contents, sorted by path. */
  async dump(id: string): Promise<CuratorNode[]> {
    const w = await this.call(`dump ${id}`, `dump ${id}`, `dump of ${id}`);
    return w.slice(2).map(parseNode);
  }

  /** Closes cache `id` (and its own session, if it has one). */
  async closeCache(id: string): Promise<void> {
    await this.call(`closed ${id}`, `close ${id}`, `cache ${id} to close`);
  }

  private async write(...words: string[]): Promise<readonly string[]> {
    return this.agent.request(words, 20_000);
  }

  /** Creates a persistent node through Curator; the node as created. */
  async create(path: string, data: Buffer | string = ''): Promise<CuratorNode> {
    return parseNode((await this.write('create', path, hexOf(data)))[0] as string);
  }

  /** Sets a node's data through Curator (any version); the node as set. */
  async set(path: string, data: Buffer | string): Promise<CuratorNode> {
    return parseNode((await this.write('set', path, hexOf(data)))[0] as string);
  }

  /** Deletes a node through Curator. */
  async delete(path: string): Promise<void> {
    await this.write('delete', path);
  }

  /** Closes the caches and the Curator client, and waits for the JVM to exit; kills it past 20 s. */
  close(): Promise<void> {
    return this.agent.close();
  }
}
