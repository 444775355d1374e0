/**
 * {@link Semaphore}: a distributed counting semaphore.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Stat } from '../client/types.js';
import { checkOptions, describe, optionKeys } from '../client/validate.js';
import type { LockHandle } from '../driver/handle.js';
import type { AcquireRequest, HeldNodes, LockDriver } from '../driver/lock-driver.js';
import { LOCK_OPTION_KEYS, LockRecipe, type AcquireOptions, type LockOptions, type TryAcquireOptions } from '../driver/lock-recipe.js';
import { parseRecord, refuseForeign } from '../driver/layouts.js';
import { parseNode, type QueueNode } from '../driver/names.js';
import { windowPredicate } from '../driver/predicates.js';
import { BadVersionError, InvalidArgumentError, LayoutMismatchError, LeaseMismatchError, NoNodeError } from '../errors.js';
import { CuratorV2Layout, LEASES, LOCKS } from './curator-v2.js';

/**
 * How a {@link Semaphore} lays out its nodes, i.e. which participants it shares a limit with.
 *
 * - `'window'` (default): `_c_<uuid>-lock-<seq>` nodes directly under the path, granted while
 *   fewer than `maxLeases` precede them. Shared with Curator's deprecated `InterProcessSemaphore`
 *   (V1), which uses the same nodes.
 * - `'curator-v2'`: Curator's `InterProcessSemaphoreV2` layout: a mutex under `path/locks`
 *   guards lease creation, leases are `_c_<uuid>-lease-<seq>` nodes under `path/leases`, held
 *   while there are at most `maxLeases` of them. Shared with Java services using that class.
 *
 * The two layouts cannot see each other: a participant that finds the other layout on its path
 * refuses with {@link LayoutMismatchError}.
 * @group Recipes
 */
export type SemaphoreLayout = 'window' | 'curator-v2';

/** Options of a {@link Semaphore}. @group Recipes */
export interface SemaphoreOptions extends LockOptions {
  /** How many leases may be held at once, across all participants (an integer >= 1). */
  maxLeases: number;
  /** Node layout, i.e. which Curator class the path is shared with. Default `'window'`. */
  layout?: SemaphoreLayout;
}

/** The keys of {@link SemaphoreOptions}. @internal */
export const SEMAPHORE_OPTION_KEYS = optionKeys<SemaphoreOptions, LockOptions>({ maxLeases: true, layout: true }, LOCK_OPTION_KEYS);

/**
 * A distributed counting semaphore: at most `maxLeases` leases held at once across all
 * participants. With the default `'window'` layout, nodes are `_c_<uuid>-lock-<seq>` ephemeral
 * sequential nodes under `path` (like {@link Mutex}, which is a semaphore with one lease); with
 * `layout: 'curator-v2'` they follow Curator's `InterProcessSemaphoreV2` (see
 * {@link SemaphoreLayout}). Either way `maxLeases` is stored as the data of `path` itself, and a
 * participant configured with another value gets a `LeaseMismatchError` instead of silently
 * breaking the limit (Curator participants neither record nor check it).
 *
 * - **Fair**: leases are granted in queue order; `acquire(n)` creates its n nodes in one
 *   transaction, so they are adjacent and a multi-lease request cannot deadlock with others.
 * - **Wake-ups**: a waiter watches the `maxLeases - n + 1` nodes just before its own, so any
 *   release among them can promote it (with holders A, B, C and waiter D, C's release grants D
 *   at once), and a release wakes at most `maxLeases` waiters.
 * - **On SUSPENDED** the instance emits `suspended`; **on LOST** handles' signals abort.
 * - **`curator-v2`**: a waiter holds the mutex `path/locks` and watches the children of
 *   `path/leases`; the other waiters queue on the mutex, each watching its predecessor, so a
 *   release wakes one waiter. Grants are serialized through the mutex (about four more requests
 *   per lease than the window layout), and `tryAcquire()` returns `null` while another
 *   participant holds the mutex. The fencing token is the lease node's czxid.
 *
 * Choosing `maxLeases`: the number of concurrent users the protected resource can serve (e.g.
 * its connection pool size divided among services). Everyone on one path must agree on it.
 *
 * Events ({@link LockEvents}): `acquired(handle)`, `released(handle)`, `lost(handle, error)`
 * (a held lock's signal aborted), `suspended()` and `reconnected()` (while it holds locks).
 *
 * Guide: [Semaphore](../../docs/recipes/semaphore.md), with a whole service instance as example.
 *
 * @example
 * ```ts
 * import { Semaphore } from 'zk-recipes';
 *
 * const pool = new Semaphore(session, '/semaphores/pg-pool', { maxLeases: 10 });
 * await pool.runExclusive(async (signal) => {
 *   // at most 10 of these run at once, across every process on the path
 *   await fetch('https://example.com/report', { signal });
 * });
 * ```
 * @group Recipes
 */
export class Semaphore extends LockRecipe {
  /** How many leases may be held at once. */
  readonly maxLeases: number;
  /** The node layout (which Curator class the path is shared with). */
  readonly layout: SemaphoreLayout;
  private readonly v2: CuratorV2Layout | undefined;
  private verifiedDir: bigint | undefined;

  /** Creates a semaphore on `path` (its directory; created on demand with `maxLeases` as data). */
  constructor(session: ZkSession, path: string, options: SemaphoreOptions) {
    // First, so that a misspelled `maxLeases` is named as such.
    if (options !== undefined) checkOptions(options, 'new Semaphore', SEMAPHORE_OPTION_KEYS);
    const max = (options as Partial<SemaphoreOptions> | undefined)?.maxLeases;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 1_000_000) {
      throw new InvalidArgumentError(`semaphore maxLeases must be an integer from 1 to 1000000, got ${describe(max)}`);
    }
    const given = (options as Partial<SemaphoreOptions>).layout;
    const layout = given === undefined ? 'window' : given;
    if (layout !== 'window' && layout !== 'curator-v2') throw new InvalidArgumentError(`semaphore layout must be 'window' or 'curator-v2', got ${describe(layout)}`);
    super(session, path, { lockName: 'lock-', kinds: ['lock-'], predicate: windowPredicate(max), dirData: Buffer.from(String(max)) }, options, 'semaphore', SEMAPHORE_OPTION_KEYS);
    this.maxLeases = max;
    this.layout = layout;
    this.v2 = layout === 'curator-v2' ? new CuratorV2Layout(session, path, max, (stat, children) => this.checkDirectory(stat, children), this.acl) : undefined;
  }

  /**
   * Waits for `leases` leases (default 1), taken together. Rejects with `LockTimeoutError` after
   * `timeoutMs`, or the abort reason.
   */
  acquire(options?: AcquireOptions): Promise<LockHandle>;
  acquire(leases: number, options?: AcquireOptions): Promise<LockHandle>;
  async acquire(a?: number | AcquireOptions, b?: AcquireOptions): Promise<LockHandle> {
    const [leases, options] = typeof a === 'number' ? [a, b] : [1, a];
    // Returned, not awaited: no suspended frame while waiting.
    return this.acquireNodes(this.checkLeases(leases), options, false) as Promise<LockHandle>;
  }

  /**
   * Takes `leases` leases (default 1) if free right now; otherwise resolves to `null`. Rejects
   * with the signal's reason when it aborts first.
   */
  tryAcquire(options?: TryAcquireOptions): Promise<LockHandle | null>;
  tryAcquire(leases: number, options?: TryAcquireOptions): Promise<LockHandle | null>;
  async tryAcquire(a?: number | TryAcquireOptions, b?: TryAcquireOptions): Promise<LockHandle | null> {
    const [leases, options] = typeof a === 'number' ? [a, b] : [1, a];
    return this.acquireNodes(this.checkLeases(leases), options, true);
  }

  /** Runs `fn` while holding one lease, then releases it (`LockLostError` if lost meanwhile). */
  async runExclusive<T>(fn: (signal: AbortSignal, handle: LockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    return this.runExclusively(fn, options, (o) => this.acquire(o));
  }

  private checkLeases(leases: unknown): number {
    if (typeof leases !== 'number' || !Number.isInteger(leases) || leases < 1 || leases > this.maxLeases) {
      throw new InvalidArgumentError(`leases must be an integer from 1 to maxLeases (${this.maxLeases}), got ${describe(leases)}`);
    }
    return leases;
  }

  protected override enter(req: AcquireRequest): Promise<HeldNodes | null> {
    return this.v2 ? this.v2.acquire(req) : super.enter(req);
  }

  protected override idle(): Promise<void> {
    return this.v2 ? this.v2.idle() : super.idle();
  }

  protected override directories(): readonly string[] {
    return this.v2 ? this.v2.directories : super.directories();
  }

  protected override get queueDriver(): LockDriver {
    return this.v2 ? this.v2.leases : super.queueDriver;
  }

  protected holds(queue: readonly QueueNode[], index: number): boolean {
    if (this.v2) return this.v2.holds(queue, index);
    // A multi-lease request is adjacent nodes sharing one uuid: they hold together or not at all.
    const uuid = queue[index]?.uuid;
    let end = index + 1;
    while (uuid !== undefined && queue[end]?.uuid === uuid) end++;
    return end <= this.maxLeases;
  }

  /**
   * Refuses a path that the other layout uses (on every acquisition: participants come and go),
   * then verifies (once per incarnation of the directory) that it records our `maxLeases`.
   */
  protected override async checkDirectory(stat: Stat, children: readonly string[]): Promise<void> {
    this.checkLayout(children);
    if (this.verifiedDir === stat.czxid) return;
    for (;;) {
      let data: Buffer;
      let version: number;
      try {
        ({ data, stat: { version } } = await this.session.getData(this.path));
      } catch (err) {
        // Reaped meanwhile: our node is in it, so this cannot really happen; re-check next time.
        if (err instanceof NoNodeError) return;
        throw err;
      }
      const record = parseRecord(data);
      if (record.kind === 'none') {
        // Created by someone who did not record a limit (e.g. a plain mkdirp): claim it.
        try {
          await this.session.setData(this.path, String(this.maxLeases), { version });
        } catch (err) {
          if (err instanceof BadVersionError) continue;
          throw err;
        }
      } else if (record.kind === 'one-holder' || record.kind === 'latch') {
        // A mutex (or leader election) of one holder at a time: a semaphore of one lease is one.
        if (record.kind === 'latch' || this.maxLeases !== 1) {
          throw new LayoutMismatchError(
            `semaphore ${this.path} (maxLeases ${this.maxLeases}) is used by ${record.kind === 'latch' ? 'a LeaderLatch' : 'a Mutex or a LeaderSelector'}, one holder at a time (its data says so, and its nodes are like ours): neither would respect the other's limit; use another path for one of them`,
            { path: this.path },
          );
        }
      } else if (record.kind !== 'leases' || record.maxLeases !== this.maxLeases) {
        throw new LeaseMismatchError(
          `semaphore ${this.path} is used with maxLeases ${record.kind === 'leases' ? record.maxLeases : JSON.stringify(record.text)}, but this participant was configured with ${this.maxLeases}; use the same maxLeases everywhere (or a new path)`,
          { path: this.path },
        );
      }
      this.verifiedDir = stat.czxid;
      return;
    }
  }

  /** Throws {@link LayoutMismatchError} when `children` (of `path`) show another layout. */
  private checkLayout(children: readonly string[]): void {
    this.checkOtherSemaphoreLayout(children);
    refuseForeign('semaphore', this.path, children, this.v2 ? ['semaphore-v2'] : ['lock']);
  }

  /** The other layout of a semaphore, with what to do. */
  private checkOtherSemaphoreLayout(children: readonly string[]): void {
    if (this.v2) {
      const foreign = children.find((c) => parseNode(c, ['lock-']) !== undefined);
      if (foreign === undefined) return;
      throw new LayoutMismatchError(
        `semaphore ${this.path} (layout 'curator-v2') has lock- nodes directly under it (e.g. ${foreign}): participants of the window layout (zk-recipes' default, Curator's InterProcessSemaphore V1 or a mutex) use it, and they cannot see InterProcessSemaphoreV2 leases; use the window layout there, or another path`,
        { path: this.path },
      );
    }
    const foreign = children.find((c) => c === LOCKS || c === LEASES);
    if (foreign === undefined) return;
    throw new LayoutMismatchError(
      `semaphore ${this.path} (window layout) has a "${foreign}" child: Curator InterProcessSemaphoreV2 participants use it, and they cannot see window-layout nodes; use { layout: 'curator-v2' } to share their limit, or another path`,
      { path: this.path },
    );
  }
}
