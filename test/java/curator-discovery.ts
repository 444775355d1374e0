/**
 * Runs real Apache curator-x-discovery for the interop tests: one agent JVM
 * (test/java/CuratorDiscoveryAgent.java) with one Curator session, holding any number of
 * ServiceDiscovery, ServiceProvider and ServiceCache handles, driven over stdin/stdout. JSON
 * travels hex-encoded (no word holds a space).
 */
import { JavaAgent } from './agent.js';

/** An instance for Curator to register: unset fields are null (time: now, type DYNAMIC, enabled). */
export interface CuratorInstanceSpec {
  name: string;
  id: string;
  address?: string | null;
  port?: number | null;
  sslPort?: number | null;
  payload?: Record<string, unknown> | null;
  registrationTimeUTC?: number;
  serviceType?: 'DYNAMIC' | 'STATIC' | 'PERMANENT' | 'DYNAMIC_SEQUENTIAL';
  /** A UriSpec template, e.g. `{scheme}://{address}:{port}`. */
  uriSpec?: string | null;
  enabled?: boolean;
}

/** An instance as Curator holds it (deserialized by its JsonInstanceSerializer), field by field. */
export interface CuratorInstance {
  name: string;
  id: string;
  address: string | null;
  port: number | null;
  sslPort: number | null;
  payload: Record<string, unknown> | null;
  /** The Java class of the payload (`java.util.LinkedHashMap`), null without one. */
  payloadClass: string | null;
  registrationTimeUTC: number;
  serviceType: string | null;
  enabled: boolean;
  uriParts: { value: string; variable: boolean }[] | null;
  /** `buildUriSpec()`: the template filled in from the instance. */
  uri: string | null;
}

/** Curator's provider strategies (sticky: over round robin). */
export type CuratorStrategy = 'roundRobin' | 'random' | 'sticky';

const hex = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('hex');
const unhex = <T>(word: string | undefined): T => JSON.parse(Buffer.from(word ?? '', 'hex').toString('utf8')) as T;
const oneOf = (word: string | undefined): CuratorInstance | undefined => (word === undefined || word === '-' ? undefined : unhex<CuratorInstance>(word));

/** One JVM, one Curator session, curator-x-discovery handles named by the caller. */
export class CuratorDiscoveryAgent {
  /** The latest `getInstances()` of each ServiceCache, as its last cacheChanged() printed it. */
  readonly cached = new Map<string, CuratorInstance[]>();
  /** Connection states the client went through, in order, with the session of each connected one. */
  readonly states: { state: string; session: string }[] = [];

  private constructor(private readonly agent: JavaAgent) {}

  /** The agent's session id (`0x...`) when it started. */
  get sessionId(): string {
    return this.agent.sessionId;
  }

  /** Starts an agent connected to `connectString` (session timeout 4 s); resolves once its session is up. */
  static async start(connectString: string): Promise<CuratorDiscoveryAgent> {
    let self: CuratorDiscoveryAgent | undefined;
    const early: (readonly string[])[] = [];
    const onLine = (words: readonly string[]): void => (self ? self.line(words) : void early.push(words));
    const agent = await JavaAgent.start('CuratorDiscoveryAgent', [connectString], { name: 'Curator discovery agent', onLine });
    self = new CuratorDiscoveryAgent(agent);
    for (const words of early) self.line(words);
    return self;
  }

  private line(words: readonly string[]): void {
    if (words[0] === 'cache' && words[1] !== undefined) this.cached.set(words[1], unhex<CuratorInstance[]>(words[2]));
    else if (words[0] === 'state') this.states.push({ state: words[1] ?? '', session: words[2] ?? '-' });
  }

  /** Resolves once `test` holds, checked now and after every line the agent prints. */
  until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return this.agent.until(test, timeoutMs, what);
  }

  /** A started ServiceDiscovery `d` (the builder's defaults: Map payloads, JsonInstanceSerializer) on `basePath`. */
  async open(d: string, basePath: string): Promise<void> {
    await this.agent.request(['open', d, basePath]);
  }

  /** `registerService` on `d`; the instance as Curator built it. */
  async register(d: string, spec: CuratorInstanceSpec): Promise<CuratorInstance> {
    return oneOf((await this.agent.request(['register', d, hex(spec)]))[0]) as CuratorInstance;
  }

  /** `updateService` on `d`. */
  async update(d: string, spec: CuratorInstanceSpec): Promise<CuratorInstance> {
    return oneOf((await this.agent.request(['update', d, hex(spec)]))[0]) as CuratorInstance;
  }

  /** `unregisterService` of `name`/`id` on `d`. */
  async unregister(d: string, name: string, id: string): Promise<void> {
    await this.agent.request(['unregister', d, name, id]);
  }

  /** `queryForNames()`, sorted. */
  async queryForNames(d: string): Promise<string[]> {
    return [...(await this.agent.request(['names', d]))];
  }

  /** `queryForInstances(name)`, sorted by id. */
  async queryForInstances(d: string, name: string): Promise<CuratorInstance[]> {
    return unhex<CuratorInstance[]>((await this.agent.request(['instances', d, name]))[0]);
  }

  /** `queryForInstance(name, id)`; undefined for Curator's null. */
  async queryForInstance(d: string, name: string, id: string): Promise<CuratorInstance | undefined> {
    return oneOf((await this.agent.request(['instance', d, name, id]))[0]);
  }

  /** A started ServiceProvider `p` for `name` on `d`, with a DownInstancePolicy when `down` is given. */
  async provider(d: string, p: string, name: string, strategy: CuratorStrategy, down?: { timeoutMs: number; errorThreshold: number }): Promise<void> {
    await this.agent.request(['provider', d, p, name, strategy, ...(down ? [down.timeoutMs, down.errorThreshold] : [])]);
  }

  /** The provider's `getInstance()`; undefined for null. */
  async getInstance(p: string): Promise<CuratorInstance | undefined> {
    return oneOf((await this.agent.request(['get', p]))[0]);
  }

  /** The ids of `n` calls of the provider's `getInstance()` (undefined for null). */
  async getInstanceIds(p: string, n: number): Promise<(string | undefined)[]> {
    return (await this.agent.request(['gets', p, n])).map((w) => (w === '-' ? undefined : w));
  }

  /** The provider's `getAllInstances()`, sorted by id. */
  async getAllInstances(p: string): Promise<CuratorInstance[]> {
    return unhex<CuratorInstance[]>((await this.agent.request(['all', p]))[0]);
  }

  /** The provider's `noteError` of its instance `id`. */
  async noteError(p: string, id: string): Promise<void> {
    await this.agent.request(['noteError', p, id]);
  }

  /** Closes provider `p`. */
  async closeProvider(p: string): Promise<void> {
    await this.agent.request(['closeProvider', p]);
  }

  /** A started ServiceCache `c` of `name` on `d`; its instances after start. Changes land in {@link cached}. */
  async cache(d: string, c: string, name: string): Promise<CuratorInstance[]> {
    const list = unhex<CuratorInstance[]>((await this.agent.request(['cache', d, c, name]))[0]);
    if (!this.cached.has(c)) this.cached.set(c, list);
    return list;
  }

  /** The cache's `getInstances()` now, sorted by id. */
  async cachedNow(c: string): Promise<CuratorInstance[]> {
    return unhex<CuratorInstance[]>((await this.agent.request(['cached', c]))[0]);
  }

  /** Resolves once cache `c`'s last change shows exactly `ids` (sorted), plus `test` of its list. */
  async cacheShows(c: string, ids: readonly string[], timeoutMs = 15_000, test: (list: CuratorInstance[]) => boolean = () => true): Promise<CuratorInstance[]> {
    const want = [...ids].sort().join(',');
    const now = (): CuratorInstance[] | undefined => {
      const list = this.cached.get(c);
      return list && list.map((i) => i.id).join(',') === want && test(list) ? list : undefined;
    };
    await this.until(() => now() !== undefined, timeoutMs, `Curator's cache ${c} to show [${want}] (shows [${(this.cached.get(c) ?? []).map((i) => i.id).join(',')}])`);
    return now() as CuratorInstance[];
  }

  /** Closes cache `c`. */
  async closeCache(c: string): Promise<void> {
    await this.agent.request(['closeCache', c]);
  }

  /** Closes discovery `d` (Curator unregisters what it registered). */
  async close(d: string): Promise<void> {
    await this.agent.request(['close', d]);
  }

  /** Ends the agent's session on the server; Curator sees it expire and starts a new one. */
  async expire(): Promise<void> {
    await this.agent.request(['expire']);
  }

  /** Closes every handle and the client, and waits for the JVM to exit (killed after 10 s). */
  shutdown(): Promise<void> {
    return this.agent.close(10_000);
  }
}
