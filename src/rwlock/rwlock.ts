/**
 * {@link ReadWriteLock}: a distributed read-write lock with Curator's layout.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { LockHandle } from '../driver/handle.js';
import { LockRecipe, type AcquireOptions, type LockOptions, type TryAcquireOptions } from '../driver/lock-recipe.js';
import type { QueueNode } from '../driver/names.js';
import { readPredicate, writePredicate } from '../driver/predicates.js';
import { IllegalStateError, LockLostError } from '../errors.js';

/** Options of a {@link ReadWriteLock}. @group Recipes */
export type ReadWriteLockOptions = LockOptions;

const READ = '__READ__';
const WRITE = '__WRIT__';
// Equal sequences sort read first: a downgrade's read node takes its write node's place.
const KINDS = [READ, WRITE] as const;

/**
 * Whether the node at `index` holds: a reader when no writer is ahead; a writer when it is the
 * head, or stands right behind its own downgrade read node (same sequence).
 */
function holdsAt(queue: readonly QueueNode[], index: number): boolean {
  const n = queue[index];
  if (n?.kind === READ) return readPredicate(WRITE)(queue, index, 1).hold;
  return n?.kind === WRITE && queue.slice(0, index).every((p) => p.kind === READ && p.seq === n.seq);
}

/**
 * The node whose czxid is the token of the node at `index`: for a downgrade read node, the write
 * node with its sequence (only a downgrade gives a read node a write node's number: sequential
 * names share one counter), while it is queued.
 */
function tokenNodeAt(queue: readonly QueueNode[], index: number): number {
  const n = queue[index];
  if (n?.kind !== READ) return index;
  const write = queue.findIndex((w) => w.kind === WRITE && w.seq === n.seq);
  return write < 0 ? index : write;
}

/**
 * A distributed read-write lock: many readers, or one writer. Curator's
 * `InterProcessReadWriteLock` layout: `_c_<uuid>-__READ__<seq>` and `_c_<uuid>-__WRIT__<seq>`
 * ephemeral sequential nodes under one path, so Java and Node participants interoperate.
 *
 * - **Fair, no writer starvation**: strict FIFO by sequence; a reader that arrives after a
 *   waiting writer queues behind it. A reader waits on the nearest preceding write node; a
 *   writer waits on its immediate predecessor, reader or writer.
 * - **Downgrade**: while this instance holds the write lock, `readLock().acquire()` takes the
 *   read lock at once, in the write node's place (a read node carrying the write node's
 *   sequence), so a writer queued behind cannot slip in when the write lock is then released
 *   (Curator before 5.5 let it: CURATOR-621). The read node is created in one transaction with
 *   a check that the write node still exists, and only in the session that holds it: if the
 *   write lock is lost first (its session expired, its node was deleted), the downgrade rejects
 *   with `LockLostError` and leaves nothing behind (the write handle's signal aborts too); it
 *   is never retried in another session nor turned into a plain read lock. The read handle carries the
 *   write handle's `fencingToken`, so tokens never decrease in grant order.
 * - **Upgrade** (asking for the write lock while this instance holds only read locks) would wait
 *   for itself forever: it is rejected at once with `IllegalStateError`.
 * - An instance is one participant: use separate instances for independent flows.
 * - Suspension, loss, fencing tokens and cleanup work as for {@link Mutex}.
 *
 * Events: none of its own; its sides ({@link ReadLock}, {@link WriteLock}) emit the
 * {@link LockEvents} of a lock.
 *
 * Guide: [Read-write lock](../../docs/recipes/rwlock.md), with a whole service instance as example.
 *
 * @example
 * ```ts
 * import { ReadWriteLock } from 'zk-recipes';
 *
 * const rw = new ReadWriteLock(session, '/locks/catalog');
 * const items = await rw.readLock().runExclusive(async () => (await session.getChildren('/catalog')).children);
 * await rw.writeLock().runExclusive(async (signal, handle) => {
 *   await session.create(`/catalog/item-${items.length}`, { data: handle.fencingToken.toString() });
 * });
 * ```
 * @group Recipes
 */
export class ReadWriteLock {
  private readonly reader: ReadLock;
  private readonly writer: WriteLock;

  /** Creates a read-write lock on `path` (its directory; created on demand). */
  constructor(session: ZkSession, path: string, options: ReadWriteLockOptions = {}) {
    // Lost handles stay listed until released, but hold nothing: only held ones count.
    this.writer = new WriteLock(session, path, options, () => this.reader.heldHandles.some((h) => h.isHeld));
    this.reader = new ReadLock(session, path, options, () => this.writer.heldHandles.find((h) => h.isHeld));
  }

  /** The shared (read) side. */
  readLock(): ReadLock {
    return this.reader;
  }

  /** The exclusive (write) side. */
  writeLock(): WriteLock {
    return this.writer;
  }

  /** Closes both sides: releases what they hold and gives up pending acquisitions. */
  async close(): Promise<void> {
    await Promise.all([this.reader.close(), this.writer.close()]);
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * The read side of a {@link ReadWriteLock}: shared with other readers, excluded by writers.
 * Same calls and handle as {@link Mutex}.
 *
 * Events ({@link LockEvents}): `acquired(handle)`, `released(handle)`, `lost(handle, error)`
 * (a held lock's signal aborted), `suspended()` and `reconnected()` (while it holds locks).
 *
 * Guide: [Read-write lock](../../docs/recipes/rwlock.md).
 *
 * @example
 * ```ts
 * import { ReadWriteLock } from 'zk-recipes';
 *
 * const read = new ReadWriteLock(session, '/locks/catalog').readLock();
 * read.on('suspended', () => console.warn('connection suspended: the read lock may be lost'));
 * await using lock = await read.acquire({ timeoutMs: 10_000, signal: shutdown });
 * console.log('reading under', lock.path);
 * ```
 * @group Recipes
 */
export class ReadLock extends LockRecipe {
  /** @internal */
  constructor(
    session: ZkSession,
    path: string,
    options: ReadWriteLockOptions,
    private readonly heldWrite: () => LockHandle | undefined,
  ) {
    // A downgrade's read node never keeps a reader out, but it stands ahead: no head then.
    super(session, path, { lockName: READ, kinds: KINDS, predicate: readPredicate(WRITE), insertingKind: WRITE, insertionBlocks: false }, options, 'read lock');
  }

  /**
   * Waits for the read lock. Rejects with `LockTimeoutError` after `timeoutMs`, or the abort
   * reason. If this lock's write side is held, it is a downgrade: granted at once in the write
   * node's place, or rejected with `LockLostError` if the write lock is lost before the server
   * creates the read node (never granted as a plain read lock instead).
   */
  acquire(options?: AcquireOptions): Promise<LockHandle> {
    // Not async: a waiting acquisition keeps no suspended frame here (acquireOrDowngrade is).
    return this.acquireOrDowngrade(options, false) as Promise<LockHandle>;
  }

  /**
   * Takes the read lock if no writer holds or waits ahead; otherwise `null`. A downgrade is
   * granted, or rejects with `LockLostError`, as with `acquire()`. Rejects with the signal's
   * reason when it aborts first.
   */
  tryAcquire(options?: TryAcquireOptions): Promise<LockHandle | null> {
    return this.acquireOrDowngrade(options, true);
  }

  /** Runs `fn` while holding the read lock, then releases it (`LockLostError` if lost meanwhile). */
  async runExclusive<T>(fn: (signal: AbortSignal, handle: LockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    return this.runExclusively(fn, options, (o) => this.acquire(o));
  }

  /** Decided once per call: a downgrade fails with the write lock, it never becomes a plain read. */
  private async acquireOrDowngrade(options: AcquireOptions | TryAcquireOptions | undefined, tryOnce: boolean): Promise<LockHandle | null> {
    const write = this.heldWrite();
    if (!write?.isHeld) return this.acquireNodes(1, options, tryOnce);
    try {
      return await this.acquireNodes(1, options, tryOnce, write);
    } catch (err) {
      // The write node is gone: its handle may not know yet (it does not always watch it).
      if (err instanceof LockLostError) write.noteLost('a downgrade found it gone', err);
      throw err;
    }
  }

  protected holds(queue: readonly QueueNode[], index: number): boolean {
    return holdsAt(queue, index);
  }

  protected override tokenNodeAt(queue: readonly QueueNode[], index: number): number {
    return tokenNodeAt(queue, index);
  }
}

/**
 * The write side of a {@link ReadWriteLock}: excludes readers and other writers. Same calls and
 * handle as {@link Mutex}; while held, this instance's read side is granted at once (downgrade).
 *
 * Events ({@link LockEvents}): `acquired(handle)`, `released(handle)`, `lost(handle, error)`
 * (a held lock's signal aborted), `suspended()` and `reconnected()` (while it holds locks).
 *
 * Guide: [Read-write lock](../../docs/recipes/rwlock.md#semantics).
 *
 * @example
 * ```ts
 * import { ReadWriteLock } from 'zk-recipes';
 *
 * const rw = new ReadWriteLock(session, '/locks/catalog');
 * const write = await rw.writeLock().acquire({ timeoutMs: 10_000, signal: shutdown });
 * const read = await rw.readLock().acquire(); // downgrade: granted at once, in the write lock's place
 * await write.release(); // no writer slips in between
 * await read.release();
 * ```
 * @group Recipes
 */
export class WriteLock extends LockRecipe {
  /** @internal */
  constructor(
    session: ZkSession,
    path: string,
    options: ReadWriteLockOptions,
    private readonly holdsRead: () => boolean,
  ) {
    // A downgrade inserts a read node in a write node's place, ahead of queued writers: a writer
    // that saw a write node go re-lists before taking the lock.
    super(session, path, { lockName: WRITE, kinds: KINDS, predicate: writePredicate, insertingKind: WRITE }, options, 'write lock');
  }

  /** Waits for the write lock. Rejects with `IllegalStateError` at once if it would be an upgrade. */
  async acquire(options?: AcquireOptions): Promise<LockHandle> {
    this.refuseUpgrade();
    // Returned, not awaited: no suspended frame while waiting.
    return this.acquireNodes(1, options, false) as Promise<LockHandle>;
  }

  /**
   * Takes the write lock if nobody holds or waits ahead; otherwise `null`. Rejects with the
   * signal's reason when it aborts first.
   */
  async tryAcquire(options?: TryAcquireOptions): Promise<LockHandle | null> {
    this.refuseUpgrade();
    return this.acquireNodes(1, options, true);
  }

  /** Runs `fn` while holding the write lock, then releases it (`LockLostError` if lost meanwhile). */
  async runExclusive<T>(fn: (signal: AbortSignal, handle: LockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    return this.runExclusively(fn, options, (o) => this.acquire(o));
  }

  private refuseUpgrade(): void {
    if (this.holdsRead() && !this.heldHandles.some((h) => h.isHeld)) {
      throw new IllegalStateError(
        `write lock ${this.path}: this ReadWriteLock holds the read lock; upgrading would wait for itself forever. Release the read lock first (or use another ReadWriteLock instance for an independent flow)`,
        { path: this.path },
      );
    }
  }

  protected holds(queue: readonly QueueNode[], index: number): boolean {
    return holdsAt(queue, index);
  }

  protected override tokenNodeAt(queue: readonly QueueNode[], index: number): number {
    return tokenNodeAt(queue, index);
  }
}
