/**
 * A node that stays there: Curator's `PersistentNode`.
 *
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import { randomUUID } from 'node:crypto';
import type { ZkSession } from '../client/session.js';
import type { CreateMode, NodeData } from '../client/types.js';
import { validatePath } from '../client/validate.js';
import { ClosedError, ConnectionLossError, InvalidArgumentError, NodeExistsError, NoNodeError, OperationTimeoutError } from '../errors.js';
import { delay } from '../util/abort.js';
import { linkSignals } from '../util/signals.js';
import { protectedPrefix } from '../driver/names.js';

/** Modes of a {@link PersistentNode}, as Curator's `CreateMode`s. @group Nodes */
export type PersistentNodeMode = 'PERSISTENT' | 'EPHEMERAL' | 'PERSISTENT_SEQUENTIAL' | 'EPHEMERAL_SEQUENTIAL';

/** Options of a {@link PersistentNode}. @group Nodes */
export interface PersistentNodeOptions {
  /** Creation mode; `EPHEMERAL` by default. */
  mode?: PersistentNodeMode;
  /** Curator's protection: the name carries `_c_<uuid>-` so a create whose reply was lost is found again. Default false. */
  protection?: boolean;
  /** Initial data. */
  data?: NodeData;
}

/** Events of a {@link PersistentNode}. @group Nodes */
export interface PersistentNodeEvents {
  /** The node was created (first time or again) at `path`. */
  created: (path: string) => void;
  /** The node was seen deleted (by someone else, or with its session); it is being re-created. */
  deleted: (path: string) => void;
  /** A create or watch failed; the node retries with backoff. */
  error: (error: Error) => void;
}

const MODES: ReadonlySet<string> = new Set(['PERSISTENT', 'EPHEMERAL', 'PERSISTENT_SEQUENTIAL', 'EPHEMERAL_SEQUENTIAL']);

/**
 * A node kept at `path` across reconnects, session loss and deletion by someone else: it is
 * watched, and re-created with the latest data given to {@link setData}. Sequential modes get a
 * new name on each re-create ({@link actualPath}). `close()` deletes it.
 *
 * Layout: exactly Curator's: `path` itself, or with protection `<parent>/_c_<uuid>-<name>`
 * (and the sequence suffix in sequential modes); parents are created as needed.
 *
 * An existing node at a non-sequential path (e.g. the previous session's ephemeral still
 * visible on a lagging member) is adopted as Curator does: our data is written to it and it is
 * watched; when it goes with its session, the watch fires and ours is created.
 * @group Nodes
 */
export class PersistentNode extends EventEmitter<PersistentNodeEvents> {
  readonly #session: ZkSession;
  readonly #path: string;
  readonly #mode: PersistentNodeMode;
  readonly #protection: boolean;
  #data: Buffer;
  #actual: string | undefined;
  #started = false;
  readonly #closing = new AbortController();
  #loop: Promise<void> | undefined;
  #firstCreated!: Promise<void>;
  #resolveFirst!: () => void;
  #wake: (() => void) | undefined;
  readonly #onSession = (): void => this.#wake?.();

  /** A node at `path`; call {@link start}. */
  constructor(session: ZkSession, path: string, options: PersistentNodeOptions = {}) {
    super();
    if (session === null || typeof session !== 'object') throw new InvalidArgumentError('PersistentNode: a ZkSession is required');
    validatePath(path);
    if (path === '/') throw new InvalidArgumentError('PersistentNode: path must not be the root');
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('PersistentNode: options must be an object');
    for (const k of Object.keys(options)) if (!['mode', 'protection', 'data'].includes(k)) throw new InvalidArgumentError(`PersistentNode: unknown option '${k}'`);
    const mode = options.mode ?? 'EPHEMERAL';
    if (!MODES.has(mode)) throw new InvalidArgumentError(`PersistentNode: mode must be one of ${[...MODES].join(', ')}, got ${String(mode)}`);
    if (options.protection !== undefined && typeof options.protection !== 'boolean') throw new InvalidArgumentError('PersistentNode: protection must be a boolean');
    this.#session = session;
    this.#path = path;
    this.#mode = mode;
    this.#protection = options.protection ?? false;
    this.#data = toData(options.data);
    this.#firstCreated = new Promise((resolve) => (this.#resolveFirst = resolve));
  }

  /** The node's actual path (with protection prefix and sequence), or undefined before it was created. */
  get actualPath(): string | undefined {
    return this.#actual;
  }

  /** The latest data. */
  get data(): Buffer {
    return this.#data;
  }

  /** Starts keeping the node. Once only. */
  start(): void {
    if (this.#closing.signal.aborted) throw new ClosedError(`PersistentNode ${this.#path}: closed`);
    if (this.#started) throw new InvalidArgumentError(`PersistentNode ${this.#path}: already started`);
    this.#started = true;
    this.#session.on('session', this.#onSession);
    this.#loop = this.#run();
  }

  /** Resolves once the node was first created; rejects on timeout (`OperationTimeoutError`), abort or close. */
  async waitForInitialCreate(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    if (!this.#started) throw new InvalidArgumentError(`PersistentNode ${this.#path}: not started`);
    const { timeoutMs, signal } = options;
    if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0)) throw new InvalidArgumentError(`PersistentNode: timeoutMs must be a non-negative number, got ${String(timeoutMs)}`);
    const link = linkSignals([signal, this.#closing.signal], timeoutMs);
    try {
      await new Promise<void>((resolve, reject) => {
        if (link.signal.aborted) return reject(link.signal.reason);
        link.signal.addEventListener('abort', () => reject(link.timedOut ? new OperationTimeoutError(`PersistentNode ${this.#path}: not created within ${timeoutMs} ms`) : link.signal.reason), { once: true });
        void this.#firstCreated.then(resolve);
      });
    } finally {
      link.dispose();
    }
  }

  /** Sets the data; written now if the node exists, and used by every re-create. */
  async setData(data: NodeData): Promise<void> {
    if (this.#closing.signal.aborted) throw new ClosedError(`PersistentNode ${this.#path}: closed`);
    this.#data = toData(data);
    const at = this.#actual;
    if (at === undefined) return;
    try {
      await this.#session.setData(at, this.#data, { signal: this.#closing.signal });
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err; // gone: the watch re-creates it with the new data
    }
  }

  async #run(): Promise<void> {
    const stop = this.#closing.signal;
    let attempt = 0;
    while (!stop.aborted) {
      try {
        const path = this.#actual ?? (await this.#create());
        // Watch it; a deletion (or our session's end) sends us round again.
        const w = await this.#session.existsWatch(path, { signal: stop });
        if (w.result === null || (this.#isEphemeral() && w.result.ephemeralOwner !== this.#session.sessionId && !this.#adopted)) {
          w.changed.catch(() => undefined);
          if (w.result === null) this.#lost(path);
          else {
            // An ephemeral of another (older) session: wait for it to go (Curator adopts it).
            await this.#waitChange(w.changed);
            continue;
          }
          continue;
        }
        attempt = 0;
        const ev = await this.#waitChange(w.changed);
        if (ev === 'deleted') this.#lost(path);
      } catch (err) {
        if (stop.aborted) break;
        this.emit('error', err as Error);
        await delay(Math.min(2000, 50 * 2 ** attempt++) * (0.5 + Math.random() / 2), stop).catch(() => undefined);
      }
    }
  }

  #adopted = false;

  #isEphemeral(): boolean {
    return this.#mode.startsWith('EPHEMERAL');
  }

  #lost(path: string): void {
    this.#actual = undefined;
    this.#adopted = false;
    this.emit('deleted', path);
  }

  /** Waits for a watch to fire, or for a new session (then re-checks). */
  async #waitChange(changed: Promise<{ type: string }>): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      this.#wake = () => resolve('session');
      changed.then((e) => resolve(e.type), (err) => (this.#closing.signal.aborted ? reject(err) : resolve('session')));
    }).finally(() => (this.#wake = undefined));
  }

  async #create(): Promise<string> {
    const sequential = this.#mode.endsWith('SEQUENTIAL');
    const slash = this.#path.lastIndexOf('/');
    const parent = slash === 0 ? '/' : this.#path.slice(0, slash);
    const prefix = this.#protection ? protectedPrefix(randomUUID()) : '';
    const target = this.#protection ? `${parent === '/' ? '' : parent}/${prefix}${this.#path.slice(slash + 1)}` : this.#path;
    const mode = this.#mode as CreateMode;
    // Kept until the create is settled: close() looks it up if its reply was lost.
    this.#pending = { parent, prefix, target, sequential };
    for (;;) {
      try {
        const created = await this.#session.create(target, { data: this.#data, mode, signal: this.#closing.signal });
        return this.#settle(created);
      } catch (err) {
        if (err instanceof NoNodeError && parent !== '/') {
          await this.#session.mkdirp(parent, { container: true, signal: this.#closing.signal }).catch(() => this.#session.mkdirp(parent, { signal: this.#closing.signal }));
          continue;
        }
        if (err instanceof NodeExistsError && !sequential) {
          // Curator adopts an existing node: our data onto it, then watched.
          await this.#session.setData(target, this.#data, { signal: this.#closing.signal }).catch((e: unknown) => {
            if (!(e instanceof NoNodeError)) throw e;
          });
          this.#adopted = true;
          return this.#settle(target);
        }
        if (err instanceof ConnectionLossError && (this.#protection || !sequential)) {
          // Reply lost: look for our node before creating again (never two, never an orphan).
          const found = await this.#find(parent, prefix, target, sequential);
          if (found !== undefined) return this.#settle(found);
          continue;
        }
        throw err;
      }
    }
  }

  #pending: { parent: string; prefix: string; target: string; sequential: boolean } | undefined;

  async #find(parent: string, prefix: string, target: string, sequential: boolean, signal: AbortSignal = this.#closing.signal): Promise<string | undefined> {
    await this.#session.sync(parent, { signal });
    if (!sequential && !this.#protection) return (await this.#session.exists(target, { signal })) ? target : undefined;
    if (!this.#protection) return undefined; // an unprotected sequential name cannot be found again (as Curator)
    const { children } = await this.#session.getChildren(parent, { signal });
    const name = children.find((c) => c.startsWith(prefix));
    return name === undefined ? undefined : `${parent === '/' ? '' : parent}/${name}`;
  }

  #settle(path: string): string {
    this.#pending = undefined;
    if (this.#closing.signal.aborted) {
      // Created as we closed: delete it, not an orphan.
      void this.#session.delete(path).catch(() => undefined);
      return path;
    }
    this.#actual = path;
    this.emit('created', path);
    this.#resolveFirst();
    return path;
  }

  /** Stops keeping the node and deletes it (also one whose create was in flight). Idempotent. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return this.#loop?.catch(() => undefined);
    this.#closing.abort(new ClosedError(`PersistentNode ${this.#path}: closed`));
    this.#session.off('session', this.#onSession);
    this.#wake?.();
    await this.#loop?.catch(() => undefined);
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined && this.#actual === undefined) {
      // A create whose reply was lost as we closed: find it by its protected name (or exact
      // path) and delete it, within a bound, so close leaves no orphan.
      const found = await this.#find(pending.parent, pending.prefix, pending.target, pending.sequential, AbortSignal.timeout(10000)).catch(() => undefined);
      if (found !== undefined) await this.#session.delete(found).catch(() => undefined);
    }
    const at = this.#actual;
    this.#actual = undefined;
    // Bounded: close never waits for a server that is gone (an ephemeral goes with its session).
    if (at !== undefined && !this.#session.closed) await this.#session.delete(at, { signal: AbortSignal.timeout(10_000) }).catch((e: unknown) => {
      if (!(e instanceof NoNodeError)) throw e;
    });
  }

  /** `await using node = ...`: closes it. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function toData(data: NodeData | undefined): Buffer {
  if (data === undefined) return Buffer.alloc(0);
  if (typeof data === 'string') return Buffer.from(data);
  if (data instanceof Uint8Array) return Buffer.from(data);
  throw new InvalidArgumentError(`PersistentNode: data must be a Buffer, Uint8Array or string, got ${typeof data}`);
}
