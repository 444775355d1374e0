/**
 * At-least-once claims: taking an item (an ephemeral claim node and a bump of the item's
 * version, the delivery count, in one transaction), and settling it: acknowledge (delete item
 * and claim), release (delete the claim), or bury (move the item to the dead letters).
 *
 * Nothing here may strand an item. A claim whose reply is lost is looked up by owner (our
 * session) after a sync; a settlement whose reply is lost is sent again, at the claimed version,
 * until it is applied or refused or the claim's session is gone (its ephemeral claim then went
 * with it). The claimed version makes every settlement safe to send late or twice: if another
 * consumer claimed the item since, its version moved on and nothing of theirs is touched. An
 * item removed by someone else leaves a claim no one can use: it is deleted too.
 *
 * @internal
 * @module
 */
import { backoffDelay } from '../client/retry.js';
import type { ZkSession } from '../client/session.js';
import type { Acl } from '../client/types.js';
import type { Op } from '../client/types.js';
import { BadVersionError, ClosedError, ConnectionLossError, NodeExistsError, NoNodeError, SessionExpiredError, ZooKeeperError } from '../errors.js';
import { delay } from '../util/abort.js';
import { LOSS_BACKOFF, untilAnswered } from './backoff.js';
import type { ItemRef } from './cursor.js';
import { claimName } from './layout.js';
import { points } from '../observability/channels.js';

/** An item this consumer holds a claim on. */
export interface Claimed {
  readonly ref: ItemRef;
  /** Full path of our claim node. */
  readonly claim: string;
  readonly data: Buffer;
  /** Deliveries before ours (the item's version before our claim). */
  readonly redeliveries: number;
  /** The item's version after our claim bumped it: the number of deliveries, ours included. */
  readonly version: number;
  /** The session our claim lives in, and its end. */
  readonly sessionId: bigint;
  readonly sessionSignal: AbortSignal;
}

/** How a settlement ended: applied, refused by the server (why), or moot (the claim's session ended). */
type Outcome = 'applied' | 'ended' | ZooKeeperError;

/** What a dead letter records besides the payload. */
export interface DeadLetterInfo {
  /** The item's path when it was moved. */
  readonly item: string;
  /** Deliveries, the last one included. */
  readonly deliveries: number;
  /** The last error, as text. */
  readonly error: string;
  /** When it was moved, epoch ms. */
  readonly at: number;
}

/** The claims of one queue, made and settled by this consumer. */
export class Claims {
  private deadReady = false;

  constructor(
    private readonly session: ZkSession,
    /** `<queue>/claims`. */
    readonly dir: string,
    /** `<queue>/dead`. */
    private readonly deadDir: string,
    /** Data of our claim nodes (the participant id). */
    private readonly data: Buffer,
    /** ACL of the nodes created (undefined: the session's provider). */
    readonly acl: readonly Acl[] | undefined,
  ) {}

  /** Claims `ref`; null when someone else has it, or it is gone. */
  async claim(ref: ItemRef): Promise<Claimed | null> {
    const claim = `${this.dir}/${claimName(ref.pdir, ref.bucket, ref.name)}`;
    let read;
    try {
      read = await this.session.getData(ref.path);
    } catch (err) {
      if (err instanceof NoNodeError) return null;
      throw err;
    }
    const sessionSignal = this.session.signal;
    const sessionId = this.session.sessionId;
    const claimed = (version: number): Claimed => ({ ref, claim, data: read.data, redeliveries: read.stat.version, version, sessionId, sessionSignal });
    try {
      const [, bumped] = await this.session.multi([
        { type: 'create', path: claim, mode: 'EPHEMERAL', data: this.data, acl: this.acl },
        { type: 'setData', path: ref.path, data: read.data, version: read.stat.version },
      ]);
      return claimed(bumped?.type === 'setData' ? bumped.stat.version : read.stat.version + 1);
    } catch (err) {
      if (err instanceof NoNodeError || err instanceof NodeExistsError || err instanceof BadVersionError) return null;
      if (!(err instanceof ConnectionLossError)) throw err;
    }
    // The claim may have been applied. Ours if its node is there and owned by our session, in
    // an up-to-date view; then nobody else could have bumped the item since (a claim needs the
    // claim node not to exist), so its version is the one our transaction gave it.
    return (await this.ownedBy(claim, sessionId, sessionSignal)) ? claimed(read.stat.version + 1) : null;
  }

  /** Acknowledges: deletes the item (at the claimed version) and our claim. */
  async ack(c: Claimed): Promise<void> {
    const r = await this.settle(c, [
      { type: 'delete', path: c.ref.path, version: c.version },
      { type: 'delete', path: c.claim },
    ]);
    if (r === 'applied' || r === 'ended' || r instanceof BadVersionError) return; // done, or someone else's now
    if (r instanceof NoNodeError && r.opIndex === 0) return this.dropStale(c);
    if (r instanceof NoNodeError && r.opIndex === 1) {
      // Our claim vanished, yet nobody claimed the item since: it is handled, delete it.
      await this.settle(c, [{ type: 'delete', path: c.ref.path, version: c.version }]);
      return;
    }
    throw r;
  }

  /** Releases our claim so the item is delivered again, if the item is still at our version. */
  async release(c: Claimed): Promise<void> {
    const r = await this.settle(c, [
      { type: 'check', path: c.ref.path, version: c.version },
      { type: 'delete', path: c.claim },
    ]);
    if (r === 'applied' || r === 'ended' || r instanceof BadVersionError) return;
    if (r instanceof NoNodeError) return r.opIndex === 0 ? this.dropStale(c) : undefined; // else released already
    throw r;
  }

  /**
   * Moves the item to the dead letters, with its delivery count and last error, atomically
   * with the deletion of item and claim. Falls back to a release if that cannot be done.
   */
  async bury(c: Claimed, error: string, deliveries: number): Promise<void> {
    const key = claimName(c.ref.pdir, c.ref.bucket, c.ref.name);
    const letter = `${this.deadDir}/${key}`;
    const info: DeadLetterInfo = { item: c.ref.path, deliveries, error, at: Date.now() };
    const move: Op[] = [
      { type: 'create', path: letter, data: c.data, acl: this.acl },
      { type: 'create', path: `${letter}/info`, data: JSON.stringify(info), acl: this.acl },
    ];
    let withClaim = true;
    for (let pass = 0; pass < 3; pass++) {
      if (!this.deadReady) {
        try {
          await untilAnswered(this.session, c.sessionSignal, () => this.session.mkdirp(this.deadDir, { acl: this.acl }));
        } catch (err) {
          if (c.sessionSignal.aborted || err instanceof ClosedError) return; // the claim went with its session
          await this.release(c); // never leave the claim behind
          throw err;
        }
        this.deadReady = true;
      }
      const ops: Op[] = [{ type: 'delete', path: c.ref.path, version: c.version }, ...(withClaim ? [{ type: 'delete' as const, path: c.claim }] : []), ...move];
      const r = await this.settle(c, ops);
      if (r === 'applied' && points.queueDeadLetter.hasSubscribers) {
        points.queueDeadLetter.publish({ path: this.deadDir.slice(0, -'/dead'.length), letterPath: letter, attempts: deliveries, reason: error });
      }
      if (r === 'applied' || r === 'ended' || (r instanceof BadVersionError && r.opIndex === 0)) return;
      if (r instanceof NoNodeError && r.opIndex === 0) return this.dropStale(c);
      if (r instanceof NoNodeError && withClaim && r.opIndex === 1) {
        withClaim = false; // our claim vanished, nobody claimed since: move it all the same
        continue;
      }
      if (r instanceof NoNodeError) {
        this.deadReady = false; // the dead-letter directory is gone
        continue;
      }
      if (r instanceof NodeExistsError) break; // a letter of this item exists already (should not happen)
      await this.release(c);
      throw r;
    }
    await this.release(c);
  }

  /** The item is gone: a claim on it can never be used, whoever made it; delete it. */
  private async dropStale(c: Claimed): Promise<void> {
    const r = await this.settle(c, [{ type: 'delete', path: c.claim }]);
    if (r === 'applied' || r === 'ended' || r instanceof NoNodeError) return;
    throw r;
  }

  /**
   * Sends `ops` until they are applied or refused, or the claim's session has ended, backing
   * off (jittered) after each connection loss. Safe to send twice: the first op names the
   * item's claimed version, and the refusals say what happened.
   */
  private async settle(c: Claimed, ops: readonly Op[]): Promise<Outcome> {
    for (let attempt = 0; ; attempt++) {
      if (c.sessionSignal.aborted) return 'ended';
      try {
        await this.session.multi(ops);
        return 'applied';
      } catch (err) {
        if (err instanceof SessionExpiredError || err instanceof ClosedError) return 'ended';
        if (!(err instanceof ConnectionLossError)) {
          if (err instanceof ZooKeeperError) return err;
          throw err;
        }
      }
      try {
        await delay(backoffDelay(LOSS_BACKOFF, attempt), c.sessionSignal);
        await this.session.waitConnected({ signal: c.sessionSignal });
      } catch {
        return 'ended'; // the session ended (or was closed): our claim went with it
      }
    }
  }

  /** Whether `path` exists and belongs to session `owner`, read after a sync, while it lives. */
  private async ownedBy(path: string, owner: bigint, sessionSignal: AbortSignal): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.session.waitConnected({ signal: sessionSignal });
        if (this.session.sessionId !== owner) return false;
        await this.session.sync(path);
        return (await this.session.exists(path))?.ephemeralOwner === owner;
      } catch (err) {
        if (sessionSignal.aborted || err instanceof SessionExpiredError || err instanceof ClosedError) return false;
        if (!(err instanceof ConnectionLossError)) throw err;
      }
      try {
        await delay(backoffDelay(LOSS_BACKOFF, attempt), sessionSignal);
      } catch {
        return false;
      }
    }
  }
}
