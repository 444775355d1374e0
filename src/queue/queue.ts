/**
 * {@link DistributedQueue}: a FIFO queue with priorities, at-most-once takes, at-least-once
 * consumers and dead letters.
 *
 * @module
 */
import { tracing, type QueuePutContext, type QueueTakeContext } from '../observability/channels.js';
import { codeOf, failureOutcome, traceSettled } from '../observability/trace.js';
import { hostname } from 'node:os';
import { backoffDelay } from '../client/retry.js';
import { optionalAcl } from '../client/acl.js';
import type { ZkSession } from '../client/session.js';
import type { NodeData } from '../client/types.js';
import { checkOptions, describe, toBuffer, validatePath } from '../client/validate.js';
import { BadVersionError, ClosedError, ConnectionLossError, InvalidArgumentError, isPermissionError, LayoutMismatchError, NoNodeError, OperationTimeoutError } from '../errors.js';
import { copyPermissionError } from '../util/permission.js';
import { delay, raceAbort, raceAbortAfterSent } from '../util/abort.js';
import { linkSignals, ownedController } from '../util/signals.js';
import { graceFor } from '../driver/grace.js';
import { refuseForeign } from '../driver/layouts.js';
import { LOSS_BACKOFF, untilAnswered } from './backoff.js';
import { Claims } from './claims.js';
import { ClaimSource, ConsumeRun } from './consumer.js';
import { Cursor, type Reader } from './cursor.js';
import { DeadLetters, type DeadLetter } from './dead-letters.js';
import { IdleLine } from './line.js';
import { Members } from './members.js';
import { callBound, checkLimit, checkPriority, consumeConfig, DEAD_LETTER_OPTION_KEYS, PUT_OPTION_KEYS, QUEUE_CALL_OPTION_KEYS, QUEUE_OPTION_KEYS, TAKE_OPTION_KEYS, type QueueCallOptions, type ConsumeHandler, type ConsumeOptions, type DeadLetterOptions, type PutOptions, type QueueOptions, type TakeOptions } from './options.js';
import { Producer } from './producer.js';

const noop = (): void => undefined;

// Bytes of one create in a transaction beyond its data and the queue path: the item path's own
// segments (/items/p-500/b-0000000000/i-xxxxxxxx-0000000000), the ACL and op framing.
const ITEM_PATH_OVERHEAD = 120;
// The bucket check and the put record's update that every put transaction carries.
const PUT_OVERHEAD = 200;

/**
 * A distributed FIFO queue on ZooKeeper, with priorities.
 *
 * - **Producers**: `put(data)` / `putAll(items)` (one transaction) create persistent sequential
 *   items, exactly once even if a reply is lost and the item is consumed before the producer
 *   is back: each put also bumps an ephemeral record of the producer, in the same transaction,
 *   and that record (read after a `sync`) says whether a put whose reply was lost was applied.
 *   Items live in buckets of 10 000 under one directory per priority, so listings stay small.
 * - **At-most-once**: `take()` / `poll()` claim an item by deleting it, then return it. If the
 *   consumer dies after that, the item is gone.
 * - **At-least-once**: `consume(handler)` claims an item with an ephemeral claim node, runs the
 *   handler and deletes the item only after it resolves; if the handler throws or the session
 *   is lost, the claim goes away and the item is delivered again (`redeliveries` counts), after
 *   a backoff that grows with its delivery count; past `maxDeliveries` it moves to the dead
 *   letters (`deadLetters()`, `requeueDeadLetter()`, `discardDeadLetter()`).
 * - **Ordering**: strict FIFO (within a priority) with a single consumer. Several consumers at
 *   work each take their own share of the head of the queue, in order (a stride: they do not
 *   collide on one head), and one's leftovers go to another after a few of its listings:
 *   roughly FIFO, each item exactly once (at-most-once) or at least once. A queue instance
 *   counts as a consumer (an ephemeral node under `items/`) from its first take, poll or
 *   consume that finds items until it is closed.
 * - **No herd**: consumers with nothing to do line up (a mutex under `consumers/`); only the
 *   one at the head watches for new items, so a put wakes one consumer, not all.
 * - **Every call is bounded**: each takes `{ timeoutMs, signal }`; `close()` stops them all.
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
  private readonly members: Members;
  private readonly cursor: Cursor;
  private readonly line: IdleLine;
  private readonly source: ClaimSource;
  private readonly dead: DeadLetters;
  private readonly closeController = ownedController();
  private readonly running = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;
  /** Whether the check that no other recipe uses the path passed. */
  private layoutChecked = false;

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
    checkOptions(options, 'new DistributedQueue', QUEUE_OPTION_KEYS);
    if (options.participantId !== undefined && typeof options.participantId !== 'string') throw new InvalidArgumentError(`participantId must be a string, got ${describe(options.participantId)}`);
    this.path = path;
    const data = Buffer.from(options.participantId ?? `${hostname()}:${process.pid}`);
    if (data.length > session.dataLimit) throw new InvalidArgumentError(`participantId is ${data.length} bytes, over the session's ${session.dataLimit}-byte limit`);
    const acl = optionalAcl(options.acl, 'DistributedQueue');
    this.producer = new Producer(session, path, acl);
    this.members = new Members(session, `${path}/items`, data, acl);
    this.cursor = new Cursor(session, `${path}/items`, this.members);
    this.line = new IdleLine(session, this.cursor, `${path}/consumers`, data, acl);
    this.dead = new DeadLetters(session, `${path}/dead`);
    this.source = new ClaimSource(session, this.cursor, new Claims(session, `${path}/claims`, this.dead.dir, data, acl));
  }

  /** Adds one item. Resolves to its path (see {@link DistributedQueue.putAll}). */
  async put(data: NodeData, options: PutOptions = {}): Promise<string> {
    return (await this.putItems([data], options, 'put'))[0] as string;
  }

  /**
   * Adds several items atomically (one transaction), in order. Resolves to their paths; the
   * path of an item taken before a lost reply could be resolved ends in `-` (its sequence
   * number is not known). Rejects with `SessionExpiredError` if the session ended before the
   * outcome was known and no item of it is found: it may have been put and taken already.
   */
  async putAll(items: readonly NodeData[], options: PutOptions = {}): Promise<string[]> {
    return this.putItems(items, options, 'putAll');
  }

  private async putItems(items: readonly NodeData[], options: PutOptions, what: string): Promise<string[]> {
    const bound = callBound(options, what, PUT_OPTION_KEYS);
    const priority = checkPriority(options.priority);
    this.assertOpen();
    if (!Array.isArray(items) || items.length === 0) throw new InvalidArgumentError(`putAll needs a non-empty array of items, got ${describe(items)}`);
    const payloads = items.map((d, i) => {
      // undefined would be stored as empty data: a bug in the caller, not an empty item.
      if (d === undefined) throw new InvalidArgumentError(`item #${i} for queue ${this.path} must be a Uint8Array or a string, got undefined`, { path: this.path });
      return toBuffer(d, this.session.dataLimit, `${this.path} item #${i}`) ?? Buffer.alloc(0);
    });
    // One transaction is one request: each create costs its data, its path and ~60 bytes.
    const perItem = ITEM_PATH_OVERHEAD + Buffer.byteLength(this.path);
    const total = payloads.reduce((n, b) => n + b.length + perItem, PUT_OVERHEAD + 2 * Buffer.byteLength(this.path));
    if (total > this.session.dataLimit) {
      throw new InvalidArgumentError(`putAll of ${items.length} items makes a request of about ${total} bytes, over the ${this.session.dataLimit}-byte limit; split it into smaller batches`, { path: this.path });
    }
    return traceSettled(
      tracing.queuePut,
      (): QueuePutContext => ({ path: this.path, items: payloads.length, priority, sessionId: this.session.sessionId }),
      () => this.bounded(bound, 'put', (signal) => this.producer.put(payloads, priority, signal), true),
      (ctx, paths, durationMs) => Object.assign(ctx, { outcome: 'ok', itemPaths: paths, durationMs }),
      (ctx, err, durationMs) => Object.assign(ctx, { outcome: failureOutcome(err, bound.signal) === 'error' ? 'error' : 'aborted', errorCode: codeOf(err), durationMs }),
    );
  }

  /** Traces a take or poll (nothing is built while nobody subscribes). */
  private traceTake<T extends Buffer | null>(bound: { timeoutMs: number | undefined; signal: AbortSignal | undefined }, nonblocking: boolean, take: () => Promise<T>): Promise<T> {
    return traceSettled(
      tracing.queueTake,
      (): QueueTakeContext => ({ path: this.path, nonblocking, timeoutMs: bound.timeoutMs, sessionId: this.session.sessionId }),
      take,
      (ctx, item, waitMs) => Object.assign(ctx, { outcome: item ? 'taken' : 'empty', waitMs }),
      (ctx, err, waitMs) => Object.assign(ctx, { outcome: failureOutcome(err, bound.signal), errorCode: codeOf(err), waitMs }),
    );
  }

  /** Takes the next item if there is one right now, else `null` (at-most-once). */
  async poll(options: TakeOptions = {}): Promise<Buffer | null> {
    const bound = callBound(options, 'poll', TAKE_OPTION_KEYS);
    return this.traceTake(bound, true, () => this.bounded(bound, 'poll', (signal) => this.tryTake(signal)));
  }

  /**
   * Takes the next item, waiting for one (at-most-once: the item is deleted, then returned).
   * Rejects with `OperationTimeoutError` after `timeoutMs`, or the abort reason. Waiting leaves
   * nothing behind when it gives up. A take that gives up while its delete is on its way waits
   * up to a second more for the answer over a live connection (and returns the item if the
   * delete took it); otherwise the item may be lost (never handed out twice).
   */
  async take(options: TakeOptions = {}): Promise<Buffer> {
    const bound = callBound(options, 'take', TAKE_OPTION_KEYS);
    const take = (): Promise<Buffer> =>
      this.bounded(bound, 'take', async (signal) => {
        for (;;) {
          const item = await this.tryTake(signal);
          if (item) return item;
          const taken = await this.line.waitAtHead(signal, (s) => this.tryTake(s, 'alone'));
          if (taken) return taken;
        }
      });
    return this.traceTake(bound, false, take);
  }

  /**
   * Claims by deletion: read the item, delete it; whoever deletes it owns it. Reads our stride,
   * or everything in order at the head of the idle line (`'alone'`).
   */
  private async tryTake(signal: AbortSignal, reader: Reader = 'stride'): Promise<Buffer | null> {
    for (let losses = 0; ; ) {
      const ref = await this.cursor.next(signal, reader);
      if (!ref) return null;
      signal.throwIfAborted(); // nothing is sent after the caller gave up
      try {
        const { data, stat } = await raceAbort(this.session.getData(ref.path), signal);
        // Not the retrying delete: a NoNode after a lost reply would hand the item to us when
        // another consumer may have taken it. If the reply is lost the item is not returned
        // (at-most-once allows a loss, never a duplicate).
        await raceAbortAfterSent(this.session.multi([{ type: 'delete', path: ref.path, version: stat.version }]), signal, () => graceFor(this.session));
        this.cursor.hit();
        return data;
      } catch (err) {
        if (signal.aborted) throw err;
        if (err instanceof ConnectionLossError) {
          await delay(backoffDelay(LOSS_BACKOFF, losses++), signal);
          await this.session.waitConnected({ signal });
          continue;
        }
        if (!(err instanceof NoNodeError || err instanceof BadVersionError)) throw err;
        this.cursor.missed();
      }
    }
  }

  /**
   * Consumes items at-least-once: claims one with an ephemeral claim node, runs `handler`, and
   * deletes the item only after it resolves. On a throw (or session loss) the claim goes away and
   * the item is delivered again, after a backoff (`redeliveryBackoff`), or moved to the dead
   * letters after `maxDeliveries`. Resolves when `signal` aborts or the queue is closed, after
   * in-flight handlers finished and their claims are settled; rejects with `ClosedError` when
   * the session is closed, and with `NoAuthError` (reported to `onError` first) when the server
   * refuses us permission on the queue's nodes: that is not retried.
   */
  async consume(handler: ConsumeHandler, options: ConsumeOptions = {}): Promise<void> {
    if (typeof handler !== 'function') throw new InvalidArgumentError(`consume needs a handler function, got ${describe(handler)}`);
    const config = consumeConfig(options);
    this.assertOpen();
    // An aborted signal is a rejection, as everywhere (not a consumer that stops at once).
    config.signal?.throwIfAborted();
    // One subscription to the caller's signal and the queue's close, ended with the run.
    const stop = linkSignals([config.signal, this.closeController.signal]);
    const run = async (): Promise<void> => {
      // Another recipe on the path is refused; trouble reaching the server is retried, as the
      // consumer's own failures are (reported, then a backoff).
      for (let failures = 0; ; ) {
        try {
          await this.checkLayout(stop.signal, false);
          break;
        } catch (err) {
          if (stop.signal.aborted) return; // stopped: consume resolves
          if (err instanceof LayoutMismatchError || this.session.closed) throw err;
          try {
            config.onError?.(err, { path: this.path, redeliveries: -1 });
          } catch (thrown) {
            process.emitWarning(`zk-recipes: a queue onError callback threw: ${String(thrown)}`);
          }
          // No permission on the queue's path: no retry can cure it.
          if (isPermissionError(err)) throw copyPermissionError(err, `queue ${this.path}: consume stopped`);
          try {
            await delay(backoffDelay(config.errorBackoff, failures++), stop.signal);
            await this.session.waitConnected({ signal: stop.signal });
          } catch (waitErr) {
            if (stop.signal.aborted) return;
            throw waitErr; // LOST with renewOnLoss off: it never comes back
          }
        }
      }
      await new ConsumeRun(this.session, this.source, this.line, this.path, handler, config, stop.signal).run();
    };
    return this.track(run().finally(stop.dispose));
  }

  /** Number of items in the queue (claimed ones included). */
  async size(options: TakeOptions = {}): Promise<number> {
    return this.bounded(callBound(options, 'size', TAKE_OPTION_KEYS), 'size', (signal) => this.cursor.size(signal));
  }

  /** The next item's data without taking it, or `null` when empty. */
  async peek(options: TakeOptions = {}): Promise<Buffer | null> {
    return this.bounded(callBound(options, 'peek', TAKE_OPTION_KEYS), 'peek', async (signal) => {
      for (;;) {
        const [head] = await this.cursor.all(signal);
        if (!head) return null;
        try {
          return (await raceAbort(this.session.getData(head.path), signal)).data;
        } catch (err) {
          if (!(err instanceof NoNodeError)) throw err;
        }
      }
    });
  }

  /** The dead letters (items moved out after `maxDeliveries`), oldest first. */
  async deadLetters(options: DeadLetterOptions = {}): Promise<DeadLetter[]> {
    const bound = callBound(options, 'deadLetters', DEAD_LETTER_OPTION_KEYS);
    const limit = checkLimit(options.limit);
    return this.bounded(bound, 'deadLetters', (signal) => this.dead.list(limit, signal), true);
  }

  /**
   * Puts a dead letter back as a new item (at its priority unless `options.priority` says
   * otherwise) and deletes the letter, in one transaction, exactly once like any put. Resolves to
   * the new item's path; rejects with `NoNodeError` if the letter is gone (re-queued or
   * discarded by someone else).
   */
  async requeueDeadLetter(letter: DeadLetter, options: PutOptions = {}): Promise<string> {
    const bound = callBound(options, 'requeueDeadLetter', PUT_OPTION_KEYS);
    const checked = this.checkLetter(letter);
    const priority = options.priority === undefined ? checked.priority : checkPriority(options.priority);
    const data = toBuffer(checked.data, this.session.dataLimit, checked.path) ?? Buffer.alloc(0);
    const [path] = await this.bounded(bound, 'requeueDeadLetter', (signal) => this.producer.put([data], priority, signal, this.dead.deletion(checked)), true);
    return path as string;
  }

  /** Deletes a dead letter for good. Resolves to false if it was not there. */
  async discardDeadLetter(letter: DeadLetter, options: QueueCallOptions = {}): Promise<boolean> {
    const bound = callBound(options, 'discardDeadLetter', QUEUE_CALL_OPTION_KEYS);
    const checked = this.checkLetter(letter);
    return this.bounded(bound, 'discardDeadLetter', (signal) => this.dead.discard(checked, signal), true);
  }

  /** Stops this instance's calls and consumers (they finish their current item) and deletes its put records. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closeController.abort(new ClosedError(`queue ${this.path} closed`));
      await Promise.all([...this.running].map((r) => r.catch(noop)));
      await Promise.all([this.producer.close(), this.members.close()]);
    })();
    return this.closing;
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Runs `fn` with one signal for the call's deadline, its signal and the queue's close, and
   * says which one ended it: `OperationTimeoutError`, the caller's reason, or `ClosedError`.
   */
  private bounded<T>(bound: { timeoutMs: number | undefined; signal: AbortSignal | undefined }, what: string, fn: (signal: AbortSignal) => Promise<T>, patient = false): Promise<T> {
    this.assertOpen();
    const { timeoutMs, signal: userSignal } = bound;
    if (userSignal?.aborted) return Promise.reject(userSignal.reason);
    // The call's own signal: the queue's close and the caller's signal, shared by every call,
    // carry one subscription of it, gone when it settles (AbortSignal.any would stay in them).
    const link = linkSignals([this.closeController.signal, userSignal], timeoutMs);
    const run = this.checkLayout(link.signal, patient)
      .then(() => fn(link.signal))
      .catch((err: unknown) => {
        if (userSignal?.aborted) throw userSignal.reason;
        if (this.closeController.signal.aborted) throw new ClosedError(`queue ${this.path} closed during ${what}`, { cause: err });
        if (link.timedOut) throw new OperationTimeoutError(`${what} on queue ${this.path} did not finish within ${timeoutMs} ms`, { path: this.path, cause: err });
        throw err;
      })
      .finally(link.dispose);
    return this.track(run);
  }

  /**
   * Refuses a path that another recipe uses (its nodes under the path: a lock's, a latch's,
   * Curator's queue items), with {@link LayoutMismatchError}: each would take the other's nodes
   * for foreign ones and ignore them. Looked at once per instance, by its first call (one
   * listing of the path), until it passes; a refusal is looked at again by the next call. A
   * `patient` call (one that waits through connection loss: puts, dead letters) lists the same
   * way; the others reject with {@link ConnectionLossError} as their own reads would.
   */
  private async checkLayout(signal: AbortSignal, patient: boolean): Promise<void> {
    if (this.layoutChecked) return;
    const list = (): Promise<{ children: string[] }> => raceAbort(this.session.getChildren(this.path), signal);
    let children: string[];
    try {
      children = (await (patient ? untilAnswered(this.session, signal, list) : list())).children;
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      children = []; // nothing there yet
    }
    refuseForeign('queue', this.path, children, ['queue']);
    this.layoutChecked = true;
  }

  private track<T>(run: Promise<T>): Promise<T> {
    this.running.add(run);
    return run.finally(() => this.running.delete(run));
  }

  private checkLetter(letter: unknown): DeadLetter {
    const l = letter as Partial<DeadLetter> | null;
    if (l === null || typeof l !== 'object' || typeof l.path !== 'string' || !(l.data instanceof Uint8Array) || typeof l.priority !== 'number' || !l.path.startsWith(`${this.dead.dir}/`)) {
      throw new InvalidArgumentError(`expected a dead letter of queue ${this.path} (from deadLetters()), got ${describe(letter)}`);
    }
    validatePath(l.path, 'dead letter path');
    return l as DeadLetter;
  }

  private assertOpen(): void {
    if (this.closing) throw new ClosedError(`queue ${this.path} is closed`);
    if (this.session.closed) throw new ClosedError(`the session of queue ${this.path} is closed`);
  }
}
