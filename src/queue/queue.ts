/**
 * {@link DistributedQueue}: a FIFO queue with priorities, at-most-once takes and at-least-once
 * consumers.
 *
 * @module
 */
import { hostname } from 'node:os';
import type { ZkSession } from '../client/session.js';
import type { NodeData, OpResult, WatchEvent } from '../client/types.js';
import { checkInt, checkSignal, checkTimeout, describe, toBuffer, validatePath } from '../client/validate.js';
import { LockDriver } from '../driver/lock-driver.js';
import { windowPredicate } from '../driver/predicates.js';
import { BadVersionError, ClosedError, ConnectionLossError, InvalidArgumentError, NodeExistsError, NoNodeError, OperationTimeoutError, SessionExpiredError } from '../errors.js';
import { backoffDelay, DEFAULT_RETRY } from '../client/retry.js';
import { graceFor } from '../driver/grace.js';
import { Background, delay, raceAbort, raceAbortAfterSent } from '../util/abort.js';
import { Cursor, type ItemRef } from './cursor.js';
import { claimName, PRIORITY_RANGE } from './layout.js';
import { Producer } from './producer.js';

/** Options of a {@link DistributedQueue}. @group Recipes */
export interface QueueOptions {
  /** Shown as the data of this consumer's nodes. Default `hostname:pid`. */
  participantId?: string;
}

/** Options of `put` / `putAll`. @group Recipes */
export interface PutOptions {
  /** 0 to 999, lower is served first; FIFO within a priority. Default 500. */
  priority?: number;
  /**
   * Give up after this many ms with `OperationTimeoutError`. Default: wait without limit. A put
   * that gives up after its request was sent may still have added its items.
   */
  timeoutMs?: number;
  /** Give up when this aborts, rejecting with its reason (same caveat as `timeoutMs`). */
  signal?: AbortSignal;
}

/** Options of `take`. @group Recipes */
export interface TakeOptions {
  /** Give up after this many ms with `OperationTimeoutError`. Default: wait without limit. */
  timeoutMs?: number;
  /** Give up when this aborts, rejecting with its reason. */
  signal?: AbortSignal;
}

/** What an at-least-once handler is given besides the item's data. @group Recipes */
export interface Delivery {
  /** How many times this item was delivered before (0 the first time). */
  redeliveries: number;
  /** Full path of the item node. */
  path: string;
  /** Aborts if our claim is lost (session lost): stop, the item will be redelivered. */
  signal: AbortSignal;
}

/** Options of `consume`. @group Recipes */
export interface ConsumeOptions {
  /** Items handled at once by this consumer. Default 1. */
  concurrency?: number;
  /** Stops consuming (in-flight handlers finish first). */
  signal?: AbortSignal;
  /** Called when a handler throws (the item is then redelivered). */
  onError?: (error: unknown, item: { path: string; redeliveries: number }) => void;
}

const noop = (): void => undefined;

// Bytes of one create in a transaction beyond its data and the queue path: the item path's own
// segments (/items/p-500/b-0000000000/i-xxxxxxxx-0000000000), the ACL and op framing.
const ITEM_PATH_OVERHEAD = 120;

/**
 * A distributed FIFO queue on ZooKeeper, with priorities.
 *
 * - **Producers**: `put(data)` / `putAll(items)` (one transaction) create persistent sequential
 *   items, exactly once even if a reply is lost. Items live in buckets of 10 000 under one
 *   directory per priority, so listings stay small however long the queue is.
 * - **At-most-once**: `take()` / `poll()` claim an item by deleting it, then return it. If the
 *   consumer dies after that, the item is gone.
 * - **At-least-once**: `consume(handler)` claims an item with an ephemeral claim node, runs the
 *   handler and deletes the item only after it resolves; if the handler throws or the session
 *   is lost, the claim goes away and the item is delivered again (`redeliveries` counts).
 * - **Ordering**: strict FIFO (within a priority) only with a single consumer; with several,
 *   items are taken roughly in order and each exactly once (at-most-once) or at least once.
 * - **No herd**: consumers with nothing to do line up (a mutex under `consumers/`); only the
 *   one at the head watches for new items, so a put wakes one consumer, not all.
 *
 * Events: none; a consumer's handler gets each item with a {@link Delivery} whose `signal`
 * aborts when its claim is lost, and `consume`'s `onError` hears about failed handlers.
 *
 * Guide: [Distributed queue](../../docs/recipes/queue.md), with a whole service instance as example.
 *
 * @example
 * ```ts
 * import { DistributedQueue } from 'zk-recipes';
 *
 * const queue = new DistributedQueue(session, '/queues/emails');
 * await queue.put(JSON.stringify({ to: 'a@example.com' }));
 * await queue.consume(
 *   async (data, delivery) => console.log('send', data.toString(), 'delivery', delivery.redeliveries + 1),
 *   { signal: shutdown }, // until shutdown; a handler that throws gets its item again
 * );
 * ```
 * @group Recipes
 */
export class DistributedQueue {
  /** The queue's root path. */
  readonly path: string;
  private readonly producer: Producer;
  private readonly cursor: Cursor;
  private readonly line: LockDriver;
  private readonly data: Buffer;
  private readonly closeController = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  // Claims whose request was still on its way when their consumer gave up: released once known.
  private readonly background = new Background();
  // At-least-once: the current listing of claimable items, shared by this instance's workers.
  private claimable: ItemRef[] = [];
  private listing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /** Creates a queue handle on `path` (created on demand). */
  constructor(
    private readonly session: ZkSession,
    path: string,
    options: QueueOptions = {},
  ) {
    if (session === null || typeof session !== 'object' || typeof (session as Partial<ZkSession>).createWithStat !== 'function') {
      throw new InvalidArgumentError(`queue: session must be a ZkSession, got ${describe(session)}`);
    }
    validatePath(path, 'queue path');
    if (path === '/') throw new InvalidArgumentError('queue path must not be the root');
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError(`options must be an object, got ${describe(options)}`);
    if (options.participantId !== undefined && typeof options.participantId !== 'string') throw new InvalidArgumentError(`participantId must be a string, got ${describe(options.participantId)}`);
    this.path = path;
    this.data = Buffer.from(options.participantId ?? `${hostname()}:${process.pid}`);
    this.producer = new Producer(session, `${path}/items`);
    this.cursor = new Cursor(session, `${path}/items`);
    this.line = new LockDriver(session, `${path}/consumers`, { lockName: 'lock-', kinds: ['lock-'], predicate: windowPredicate(1) });
  }

  /**
   * Adds one item. Resolves to its path. Rejects with `OperationTimeoutError` after `timeoutMs`,
   * or the abort reason; with `SessionExpiredError` once the session is `LOST` and `renewOnLoss`
   * is off.
   */
  async put(data: NodeData, options: PutOptions = {}): Promise<string> {
    return (await this.putAll([data], options))[0] as string;
  }

  /** Adds several items atomically (one transaction), in order. Resolves to their paths. See `put`. */
  async putAll(items: readonly NodeData[], options: PutOptions = {}): Promise<string[]> {
    this.assertOpen();
    if (!Array.isArray(items) || items.length === 0) throw new InvalidArgumentError(`putAll needs a non-empty array of items, got ${describe(items)}`);
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError(`options must be an object, got ${describe(options)}`);
    const priority = checkInt(options.priority, 'priority', PRIORITY_RANGE.min, PRIORITY_RANGE.max, PRIORITY_RANGE.default);
    const timeoutMs = checkTimeout(options.timeoutMs);
    const userSignal = checkSignal(options.signal);
    const payloads = items.map((d, i) => toBuffer(d, this.session.dataLimit, `${this.path} item #${i}`) ?? Buffer.alloc(0));
    if (payloads.length > 1) {
      // One transaction is one request: each create costs its data, its path and ~60 bytes.
      const perItem = ITEM_PATH_OVERHEAD + Buffer.byteLength(this.path);
      const total = payloads.reduce((n, b) => n + b.length + perItem, 0);
      if (total > this.session.dataLimit) {
        throw new InvalidArgumentError(`putAll of ${items.length} items makes a request of about ${total} bytes, over the ${this.session.dataLimit}-byte limit; split it into smaller batches`, { path: this.path });
      }
    }
    userSignal?.throwIfAborted();
    const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const signals = [userSignal, timeout].filter((x): x is AbortSignal => x !== undefined);
    try {
      return await this.producer.put(payloads, priority, signals.length === 0 ? undefined : AbortSignal.any(signals));
    } catch (err) {
      if (timeout?.aborted && !userSignal?.aborted) {
        throw new OperationTimeoutError(`put to queue ${this.path} did not complete within ${timeoutMs} ms; if its request had been sent, the items may have been added`, { path: this.path, cause: err });
      }
      throw err;
    }
  }

  /** Takes the next item if there is one right now, else `null` (at-most-once). */
  async poll(): Promise<Buffer | null> {
    this.assertOpen();
    try {
      return await this.tryTake(this.closeController.signal);
    } catch (err) {
      if (this.closeController.signal.aborted) throw new ClosedError(`queue ${this.path} closed while polling`, { cause: err });
      throw err;
    }
  }

  /**
   * Takes the next item, waiting for one (at-most-once: the item is deleted, then returned).
   * Rejects with `OperationTimeoutError` after `timeoutMs`, or the abort reason, also in an
   * outage or after a lost reply; with `SessionExpiredError` once the session is `LOST` and
   * `renewOnLoss` is off. Waiting leaves nothing behind when it gives up (a consumer node left on
   * an unreachable server is deleted once it is back, or goes with its session). A take that
   * gives up while its claim is on its way still returns the item if the reply comes within a
   * short grace; in an outage it may lose that item (at most once: never a duplicate).
   */
  async take(options: TakeOptions = {}): Promise<Buffer> {
    const timeoutMs = checkTimeout(options.timeoutMs);
    const userSignal = checkSignal(options.signal);
    this.assertOpen();
    userSignal?.throwIfAborted();
    const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([this.closeController.signal, ...(userSignal ? [userSignal] : []), ...(timeout ? [timeout] : [])]);
    try {
      for (;;) {
        const item = await this.tryTake(signal);
        if (item) return item;
        const taken = await this.waitAtHead(signal, () => this.tryTake(signal));
        if (taken) return taken;
      }
    } catch (err) {
      if (timeout?.aborted && !userSignal?.aborted && !this.closeController.signal.aborted) {
        throw new OperationTimeoutError(`no item in queue ${this.path} within ${timeoutMs} ms`, { path: this.path });
      }
      if (this.closeController.signal.aborted && !userSignal?.aborted) throw new ClosedError(`queue ${this.path} closed while taking`, { cause: err });
      throw err;
    }
  }

  /**
   * Claims by deletion: read the item, delete it; whoever deletes it owns it. Every wait ends
   * with `signal` (a reply still on its way is then left to arrive on its own).
   */
  private async tryTake(signal: AbortSignal): Promise<Buffer | null> {
    for (;;) {
      const ref = await raceAbort(this.cursor.next(), signal);
      if (!ref) return null;
      try {
        const { data, stat } = await raceAbort(this.session.getData(ref.path), signal);
        // Not after giving up: nobody would return the item.
        signal.throwIfAborted();
        // Not the retrying delete: a NoNode after a lost reply would hand the item to us when
        // another consumer may have taken it. If the reply is lost the item is not returned
        // (at-most-once allows a loss, never a duplicate). Given up while it is on its way: an
        // item it took is still returned if the reply comes within the grace (see grace.ts).
        await raceAbortAfterSent(this.session.multi([{ type: 'delete', path: ref.path, version: stat.version }]), signal, () => graceFor(this.session));
        this.cursor.hit();
        return data;
      } catch (err) {
        if (err instanceof ConnectionLossError) {
          await this.session.waitConnected({ signal });
          continue;
        }
        if (!(err instanceof NoNodeError || err instanceof BadVersionError)) throw err;
        this.cursor.missed();
      }
    }
  }

  /**
   * Lines up behind other idle consumers; at the head, watches for new items (and released
   * claims) and runs `attempt` on every change until it yields something. Resolves to that.
   */
  private async waitAtHead<T>(signal: AbortSignal, attempt: () => Promise<T | null>, alsoWatch: readonly string[] = []): Promise<T | null> {
    const held = await this.line.acquire({ signal, data: this.data, watchOwnNode: false });
    if (!held) return null;
    try {
      for (;;) {
        this.cursor.invalidate();
        const result = await attempt();
        if (result !== null) return result;
        const watch = new AbortController();
        const stop = AbortSignal.any([signal, watch.signal, held.sessionSignal]);
        try {
          const points = await raceAbort(this.cursor.watchPoints(), stop);
          // Raced: a read still on its way when we stop removes its watch itself (`stop`).
          const watched = await raceAbort(
            Promise.all(
              [...points.dirs, ...alsoWatch].map((dir) =>
                // Wrapped: a promise resolved with a promise would wait for the watch to fire.
                this.session.getChildrenWatch(dir, { signal: stop }).then(
                  (w): { changed: Promise<WatchEvent> } => {
                    w.changed.catch(noop);
                    return { changed: w.changed };
                  },
                  async (err: unknown) => {
                    if (!(err instanceof NoNodeError)) throw err;
                    // A directory that does not exist yet: create it and watch it, rather than
                    // treat it as a change (that would spin).
                    await this.session.mkdirp(dir);
                    const w = await this.session.getChildrenWatch(dir, { signal: stop });
                    w.changed.catch(noop);
                    return { changed: w.changed };
                  },
                ),
              ),
            ),
            stop,
          );
          // Something may have arrived between the attempt and the watches: look again first.
          const again = await attempt();
          if (again !== null) return again;
          await new Promise<void>((resolve, reject) => {
            for (const w of watched) w.changed.then(() => resolve(), reject);
            if (stop.aborted) reject(stop.reason);
            else stop.addEventListener('abort', () => reject(stop.reason), { once: true });
          });
        } finally {
          watch.abort();
        }
      }
    } finally {
      // Not waiting for an outage to end: the deletion goes on in the background if need be.
      await this.line.abandon(held.paths, held.sessionSignal);
    }
  }

  /**
   * Consumes items at-least-once: claims one with an ephemeral claim node, runs `handler`, and
   * deletes the item only after it resolves. On a throw (or session loss) the claim goes away and
   * the item is delivered again. Resolves when `signal` aborts or the queue is closed, after
   * in-flight handlers finished (a handler whose session was lost is not acknowledged: its claim
   * went with the session). Rejects with `SessionExpiredError` once the session is `LOST` and
   * `renewOnLoss` is off (or `ClosedError` if the session is closed): no item can be claimed
   * again.
   */
  async consume(handler: (data: Buffer, delivery: Delivery) => unknown, options: ConsumeOptions = {}): Promise<void> {
    if (typeof handler !== 'function') throw new InvalidArgumentError(`consume needs a handler function, got ${describe(handler)}`);
    const concurrency = checkInt(options.concurrency, 'concurrency', 1, 1000, 1);
    const userSignal = checkSignal(options.signal);
    this.assertOpen();
    const stop = userSignal ? AbortSignal.any([userSignal, this.closeController.signal]) : this.closeController.signal;
    const worker = async (): Promise<void> => {
      let failures = 0;
      while (!stop.aborted) {
        try {
          const claimed = (await this.tryClaim(stop)) ?? (await this.waitAtHead(stop, () => this.tryClaim(stop), [`${this.path}/claims`]));
          if (claimed) await this.handle(claimed, handler, options.onError);
          failures = 0;
        } catch (err) {
          if (stop.aborted) return;
          // The session will never connect again: stop rather than retry forever.
          if (this.session.closed || (err instanceof SessionExpiredError && !this.session.renewsOnLoss)) throw err;
          options.onError?.(err, { path: this.path, redeliveries: -1 });
          // Session trouble: wait until connected again (and back off) before the next claim.
          await this.session.waitConnected({ signal: stop }).catch(noop);
          await delay(backoffDelay(DEFAULT_RETRY, failures++), stop).catch(noop);
        }
      }
    };
    const run = Promise.all(Array.from({ length: concurrency }, worker)).then(noop);
    this.running.add(run);
    try {
      await run;
    } finally {
      this.running.delete(run);
    }
  }

  /**
   * Claims the next unclaimed item: claim node + version bump (the delivery count), atomically.
   * Walks the listing in order, skipping items claimed by others (one listing of the claims per
   * listing of items); resolves to null only when a fresh listing has nothing claimable.
   */
  private async tryClaim(signal: AbortSignal): Promise<Claimed | null> {
    let listed = false;
    for (;;) {
      while (this.claimable.length > 0) {
        const claimed = await this.claim(this.claimable.shift() as ItemRef, signal);
        if (claimed) return claimed;
      }
      if (listed) return null;
      await raceAbort(this.listClaimable(), signal);
      listed = true;
    }
  }

  private async listClaimable(): Promise<void> {
    this.listing ??= (async () => {
      await this.session.mkdirp(`${this.path}/claims`);
      const taken = new Set((await this.session.getChildren(`${this.path}/claims`)).children);
      this.claimable = await this.cursor.allWhere((r) => !taken.has(claimName(r.pdir, r.bucket, r.name)));
    })().finally(() => {
      this.listing = undefined;
    });
    await this.listing;
  }

  private async claim(ref: ItemRef, signal: AbortSignal): Promise<Claimed | null> {
    const claim = `${this.path}/claims/${claimName(ref.pdir, ref.bucket, ref.name)}`;
    try {
      const { data, stat } = await raceAbort(this.session.getData(ref.path), signal);
      signal.throwIfAborted();
      const sessionSignal = this.session.signal;
      const claiming = this.session.multi([
        { type: 'create', path: claim, mode: 'EPHEMERAL', data: this.data },
        { type: 'setData', path: ref.path, data, version: stat.version },
      ]);
      claiming.catch(noop);
      const [, bumped] = await raceAbort(claiming, signal).catch((err: unknown) => {
        // Given up with the claim on its way: if it lands, release it (the item is delivered again).
        if (signal.aborted) this.background.track(claiming.then((rs) => this.releaseClaim(ref, claim, rs[1], stat.version, sessionSignal)));
        throw err;
      });
      const version = bumped?.type === 'setData' ? bumped.stat.version : stat.version + 1;
      return { ref, claim, data, redeliveries: stat.version, version, sessionSignal };
    } catch (err) {
      if (err instanceof NoNodeError || err instanceof NodeExistsError || err instanceof BadVersionError) return null;
      throw err;
    }
  }

  /** Releases a claim that landed after its consumer gave up, unless its session ended meanwhile. */
  private async releaseClaim(ref: ItemRef, claim: string, bumped: OpResult | undefined, version: number, sessionSignal: AbortSignal): Promise<void> {
    if (sessionSignal.aborted) return;
    const v = bumped?.type === 'setData' ? bumped.stat.version : version + 1;
    await raceAbort(this.session.multi([{ type: 'check', path: ref.path, version: v }, { type: 'delete', path: claim }]), sessionSignal);
  }

  private async handle(c: Claimed, handler: (data: Buffer, delivery: Delivery) => unknown, onError: ConsumeOptions['onError']): Promise<void> {
    try {
      await handler(c.data, { redeliveries: c.redeliveries, path: c.ref.path, signal: c.sessionSignal });
    } catch (err) {
      onError?.(err, { path: c.ref.path, redeliveries: c.redeliveries });
      // The claim went with its session: nothing to release (sent now, it would wait for the
      // next session to connect).
      if (c.sessionSignal.aborted) return;
      // Release the claim (the item is delivered again), only if this delivery is still the
      // item's latest: a newer claim bumped the version, and its claim node has our name.
      await raceAbort(this.session.multi([{ type: 'check', path: c.ref.path, version: c.version }, { type: 'delete', path: c.claim }]), c.sessionSignal).catch(noop);
      return;
    }
    // Lost while the handler ran: not acknowledged, the item is delivered again (at least once).
    if (c.sessionSignal.aborted) return;
    // Acknowledge: delete the item at the version our claim gave it, with our claim. If our
    // session was lost and someone re-claimed it, the version moved on and nothing is touched.
    // Raced with the claim's session: it ends the wait at the latest.
    await raceAbort(
      this.session.multi([
        { type: 'delete', path: c.ref.path, version: c.version },
        { type: 'delete', path: c.claim },
      ]),
      c.sessionSignal,
    ).catch((err: unknown) => {
      if (!(err instanceof NoNodeError || err instanceof BadVersionError || c.sessionSignal.aborted)) throw err;
    });
  }

  /** Number of items in the queue (claimed ones included). */
  async size(): Promise<number> {
    this.assertOpen();
    return this.cursor.size();
  }

  /** The next item's data without taking it, or `null` when empty. */
  async peek(): Promise<Buffer | null> {
    this.assertOpen();
    for (;;) {
      const [head] = await this.cursor.all();
      if (!head) return null;
      try {
        return (await this.session.getData(head.path)).data;
      } catch (err) {
        if (!(err instanceof NoNodeError)) throw err;
      }
    }
  }

  /**
   * Stops this instance's takes and consumers (they finish their current item). Idempotent.
   * Never waits for a server that is gone: a handler whose session was lost is not acknowledged
   * (its claim went with the session).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closeController.abort(new ClosedError(`queue ${this.path} closed`));
      await Promise.all([...this.running].map((r) => r.catch(noop)));
      // Cleanups left running by consumers that gave up (each ends with its session at the latest).
      await Promise.all([this.line.idle(), this.background.idle()]);
    })();
    return this.closing;
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private assertOpen(): void {
    if (this.closing) throw new ClosedError(`queue ${this.path} is closed`);
    if (this.session.closed) throw new ClosedError(`the session of queue ${this.path} is closed`);
  }
}

interface Claimed {
  ref: ItemRef;
  claim: string;
  data: Buffer;
  redeliveries: number;
  /** The item's version after our claim bumped it. */
  version: number;
  sessionSignal: AbortSignal;
}
