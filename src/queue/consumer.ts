/**
 * At-least-once consuming: workers claim items, run the handler, and settle each claim:
 * acknowledge on success; on failure, keep the claim for a backoff that grows with the item's
 * delivery count, then release it, or move the item to the dead letters once it reached the
 * delivery limit. Every loop backs off (jittered, capped) and stops with its signal or session.
 *
 * @internal
 * @module
 */
import { traced, tracing, type QueueHandleContext } from '../observability/channels.js';
import { backoffDelay } from '../client/retry.js';
import type { ZkSession } from '../client/session.js';
import { ClosedError, isPermissionError, SessionExpiredError, type InvalidAclError, type NoAuthError } from '../errors.js';
import { copyPermissionError } from '../util/permission.js';
import { delay, raceAbort } from '../util/abort.js';
import { onAbort } from '../util/signals.js';

import type { Claimed, Claims } from './claims.js';
import { readerAfter, type Cursor, type ItemRef, type Reader } from './cursor.js';
import { claimName } from './layout.js';
import type { IdleLine } from './line.js';
import type { ConsumeConfig, ConsumeHandler } from './options.js';

/** Longest error text kept with a dead letter. */
const MAX_ERROR_TEXT = 2000;

/** Text of a handler's error, for a dead letter. */
function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}

/**
 * The claimable items of one queue, listed once for all the workers of a queue instance (one
 * listing of the claims per listing of items), claimed in order: this instance's stride
 * through them (see {@link Cursor.share}).
 */
export class ClaimSource {
  private claimable: ItemRef[] = [];
  // Who the claimable items were listed for: a worker at the head of the idle line ('alone')
  // may claim any item, the others their stride.
  private reader: Reader = 'stride';
  // The listing in flight, shared by the workers that want one, and how many were started.
  private listing: { done: Promise<boolean>; seq: number } | undefined;
  private started = 0;
  private dirReady = false;

  constructor(
    private readonly session: ZkSession,
    private readonly cursor: Cursor,
    readonly claims: Claims,
  ) {}

  /**
   * Claims the next unclaimed item of our stride (or in order, `'alone'`: at the head of the
   * idle line), skipping items claimed by others; null only when a fresh listing has nothing
   * claimable. A claim once sent is seen through (its outcome decides whether we hold the
   * item), whatever the signal does meanwhile. `'alone'` (the head of the idle line, which
   * looks again after setting its watches) never relies on a listing started before the call:
   * an item put between that listing and the watches would wait for the next put.
   */
  async tryClaim(signal: AbortSignal, reader: Reader = 'stride'): Promise<Claimed | null> {
    const since = reader === 'alone' ? this.started : -1;
    for (let listed = false, looks = 0; ; looks++) {
      if (this.reader !== readerAfter(reader, looks)) this.claimable = [];
      while (this.claimable.length > 0 && !signal.aborted) {
        const claimed = await this.claims.claim(this.claimable.shift() as ItemRef);
        if (claimed) {
          this.cursor.hit();
          return claimed;
        }
        this.cursor.missed();
      }
      signal.throwIfAborted();
      if (listed) return null;
      if (reader === 'stride') await this.cursor.pause(signal);
      // Only others' items: their owners are on their way; look again after a pause (what
      // outlives a few looks is ours too, and after a few such looks we take any).
      listed = !(await raceAbort(this.listed(readerAfter(reader, looks), since, signal), signal));
    }
  }

  /** The outcome of a listing started after the `since`-th one (joined when one is in flight). */
  private async listed(reader: Reader, since: number, signal: AbortSignal): Promise<boolean> {
    let current = this.listing;
    if (current && current.seq <= since) {
      await raceAbort(current.done.catch(() => undefined), signal);
      current = this.listing;
    }
    if (!current) {
      const seq = ++this.started;
      const done = this.list(reader).finally(() => {
        if (this.listing?.seq === seq) this.listing = undefined;
      });
      current = this.listing = { done, seq };
    }
    return current.done;
  }

  /** Lists the claimable items; true when none is ours but others' are there. */
  private async list(reader: Reader): Promise<boolean> {
    if (!this.dirReady) {
      await this.session.mkdirp(this.claims.dir, { acl: this.claims.acl });
      this.dirReady = true;
    }
    let taken: Set<string>;
    try {
      taken = new Set((await this.session.getChildren(this.claims.dir)).children);
    } catch (err) {
      this.dirReady = false;
      throw err;
    }
    const share = await this.cursor.share((r) => !taken.has(claimName(r.pdir, r.bucket, r.name)), undefined, reader);
    this.claimable = share.refs;
    this.reader = reader;
    return share.others;
  }
}

/** One `consume()` call: its workers and the releases they scheduled. */
export class ConsumeRun {
  private readonly delayed = new Set<() => Promise<void>>();

  constructor(
    private readonly session: ZkSession,
    private readonly source: ClaimSource,
    private readonly line: IdleLine,
    /** The queue's root, reported as the path of failures that are not an item's. */
    private readonly root: string,
    private readonly handler: ConsumeHandler,
    private readonly config: ConsumeConfig,
    /** Stops the run: the caller's signal or the queue's close. */
    private readonly stop: AbortSignal,
  ) {}

  /**
   * Runs the workers until `stop` aborts; resolves once in-flight handlers finished and every
   * claim is settled. Rejects with {@link ClosedError} when the session is closed, and with
   * {@link SessionExpiredError} once it is `LOST` with `renewOnLoss` off (it never comes back).
   */
  async run(): Promise<void> {
    const unsubscribe = onAbort(this.stop, () => void this.flush());
    try {
      await Promise.all(Array.from({ length: this.config.concurrency }, () => this.worker()));
    } finally {
      unsubscribe();
      await this.flush();
    }
    if (!this.stop.aborted && this.session.closed) throw new ClosedError(`the session of queue ${this.root} was closed while consuming`);
    if (!this.stop.aborted && this.ended) throw this.ended;
  }

  /**
   * Set when the session can never come back (LOST with renewOnLoss off), or the server refuses
   * us permission (no retry can cure it): every worker ends.
   */
  private ended: SessionExpiredError | NoAuthError | InvalidAclError | undefined;

  private async worker(): Promise<void> {
    let failures = 0;
    while (!this.stop.aborted && this.ended === undefined) {
      try {
        const claimed = (await this.source.tryClaim(this.stop)) ?? (await this.line.waitAtHead(this.stop, (s) => this.source.tryClaim(s, 'alone'), [this.source.claims.dir]));
        failures = 0;
        if (claimed) await this.handle(claimed);
      } catch (err) {
        if (this.stop.aborted || this.session.closed) return;
        this.report(err, { path: this.root, redeliveries: -1 });
        if (isPermissionError(err)) {
          this.ended ??= copyPermissionError(err, `queue ${this.root}: consume stopped`);
          return;
        }
        try {
          // Never retry at once: a persistent error costs a few requests a second at most.
          await delay(backoffDelay(this.config.errorBackoff, failures++), this.stop);
          await this.session.waitConnected({ signal: this.stop });
        } catch (waitErr) {
          if (waitErr instanceof SessionExpiredError) this.ended ??= waitErr;
          return;
        }
      }
    }
  }

  private handle(c: Claimed): Promise<void> {
    if (this.stop.aborted) return this.source.claims.release(c);
    if (!traced(tracing.queueHandle)) return this.handleClaimed(c, undefined);
    const ctx: QueueHandleContext = { path: this.root, itemPath: c.ref.path, previousAttempts: c.redeliveries };
    return tracing.queueHandle.tracePromise(() => this.handleClaimed(c, ctx), ctx);
  }

  private async handleClaimed(c: Claimed, ctx: QueueHandleContext | undefined): Promise<void> {
    const startedAt = ctx ? performance.now() : 0;
    const outcome = (o: 'done' | 'failed' | 'lost'): void => {
      if (!ctx) return;
      ctx.outcome = o;
      ctx.durationMs = performance.now() - startedAt;
    };
    const max = this.config.maxDeliveries;
    if (max !== undefined && c.version > max) {
      // The earlier deliveries ended without the handler's verdict (sessions or processes
      // that ended): do not run it again.
      return this.source.claims.bury(c, `delivered ${c.redeliveries} times without an acknowledgement (the last delivery ended without the handler's verdict: its consumer's session or process ended)`, c.redeliveries);
    }
    try {
      await this.handler(c.data, { redeliveries: c.redeliveries, path: c.ref.path, signal: c.sessionSignal });
    } catch (err) {
      outcome('failed');
      this.report(err, { path: c.ref.path, redeliveries: c.redeliveries });
      if (max !== undefined && c.version >= max) return this.source.claims.bury(c, describeError(err), c.version);
      return this.releaseLater(c, backoffDelay(this.config.redelivery, c.version - 1));
    }
    await this.source.claims.ack(c);
    outcome(c.sessionSignal.aborted ? 'lost' : 'done');
  }

  /**
   * Keeps the claim for `ms` (the item is hidden from every consumer meanwhile), then releases
   * it. At once when the run stops; moot when the claim's session ends first.
   */
  private releaseLater(c: Claimed, ms: number): void {
    let fired: Promise<void> | undefined;
    const fire = (): Promise<void> => {
      fired ??= (async () => {
        clearTimeout(timer);
        unsubscribe();
        this.delayed.delete(fire);
        await this.source.claims.release(c).catch((err: unknown) => this.report(err, { path: c.ref.path, redeliveries: c.redeliveries }));
      })();
      return fired;
    };
    const onEnd = (): void => void fire();
    const timer = setTimeout(onEnd, this.stop.aborted ? 0 : ms);
    // The session's signal is shared by every delayed claim: one listener for all of them.
    const unsubscribe = onAbort(c.sessionSignal, onEnd);
    this.delayed.add(fire);
  }

  /** Releases every claim kept for a backoff, now. */
  private async flush(): Promise<void> {
    await Promise.all([...this.delayed].map((fire) => fire()));
  }

  private report(err: unknown, item: { path: string; redeliveries: number }): void {
    try {
      this.config.onError?.(err, item);
    } catch (thrown) {
      process.emitWarning(`zk-recipes: a queue onError callback threw: ${String(thrown)}`);
    }
  }
}
