/**
 * Putting items: into the newest bucket of their priority, exactly once even when a reply is
 * lost, and even when the item is consumed before the producer can look for it.
 *
 * Every put is one transaction: check that the bucket is open, bump this put's record (an
 * ephemeral node of the producer, see {@link RecordPool}) from the version we know, writing the
 * put's token, and create the item(s). After a lost reply the record answers "was it applied?"
 * from an up-to-date view (`sync` first): the record, not the items, since a consumer may have
 * taken the items already. The version check makes the answer final: at most one transaction
 * per record version can ever apply, so a put retried after "not applied" cannot duplicate one
 * applied late.
 *
 * @internal
 * @module
 */
import { randomBytes } from 'node:crypto';
import { backoffDelay } from '../client/retry.js';
import type { ZkSession } from '../client/session.js';
import type { Acl } from '../client/types.js';
import type { Op } from '../client/types.js';
import { BadVersionError, ConnectionLossError, NodeExistsError, NoNodeError, SessionExpiredError } from '../errors.js';
import { delay, raceAbort, raceAbortAfterSent } from '../util/abort.js';
import { graceFor } from '../driver/grace.js';
import { LOSS_BACKOFF, untilAnswered } from './backoff.js';
import { BUCKET_CAPACITY, bucketName, itemSeq, OPEN_BUCKET_VERSION, parseBucket, priorityDir, SEALED } from './layout.js';
import { RecordPool, type PutRecord } from './records.js';

/** Ops of a put transaction before the item creates (the check and the record). */
const LEADING_OPS = 2;

/** Puts items into a queue's `items` directory. */
export class Producer {
  // Newest bucket number per priority directory, as last seen by this producer.
  private readonly tails = new Map<string, number>();
  private readonly records: RecordPool;
  private readonly items: string;

  constructor(
    private readonly session: ZkSession,
    root: string,
    /** ACL of the nodes created (undefined: the session's provider). */
    private readonly acl: readonly Acl[] | undefined,
  ) {
    this.items = `${root}/items`;
    this.records = new RecordPool(session, `${root}/producers`, acl);
  }

  /**
   * Puts `payloads` (one transaction) at `priority`, with `extra` ops in the same transaction
   * (a re-queued dead letter's deletion); resolves to the items' paths. Rejects with the
   * signal's reason when it aborts; if the transaction was sent by then, it may have been
   * applied. After the session ended with the outcome unknown and the items not found, rejects
   * with {@link SessionExpiredError}: they may have been put and taken already.
   */
  async put(payloads: readonly Buffer[], priority: number, signal: AbortSignal, extra: readonly Op[] = []): Promise<string[]> {
    const pdir = priorityDir(priority);
    const token = randomBytes(8).toString('hex');
    const id = token.slice(0, 8);
    let record: PutRecord | undefined = await this.records.take(signal);
    let reusable = true;
    // The record went with its session (or was deleted), with nothing of this put applied.
    const replace = async (): Promise<PutRecord> => {
      if (record) this.records.drop(record);
      record = undefined;
      record = await this.records.take(signal);
      return record;
    };
    try {
      for (let attempt = 0; ; attempt++) {
        signal.throwIfAborted();
        if (record === undefined || record.sessionSignal.aborted) record = await replace();
        if (attempt > 0) await delay(backoffDelay(LOSS_BACKOFF, attempt - 1), signal); // never resend at once
        const bucket = await this.tail(pdir, signal);
        const dir = `${this.items}/${pdir}/${bucketName(bucket)}`;
        const used: PutRecord = record;
        const ops: Op[] = [
          { type: 'check', path: dir, version: OPEN_BUCKET_VERSION },
          { type: 'setData', path: used.path, data: token, version: used.version },
          ...extra,
          ...payloads.map((data): Op => ({ type: 'create', path: `${dir}/i-${id}-`, data, mode: 'PERSISTENT_SEQUENTIAL', acl: this.acl })),
        ];
        let paths: string[];
        try {
          const results = await raceAbortAfterSent(this.session.multi(ops), signal, () => graceFor(this.session));
          const bumped = results[1];
          if (bumped?.type === 'setData') used.version = bumped.stat.version;
          paths = results.slice(LEADING_OPS + extra.length).map((r) => (r.type === 'create' ? r.path : ''));
        } catch (err) {
          if (signal.aborted) {
            // Sent, outcome unknown: the record's version is unknown too.
            reusable = false;
            throw err;
          }
          const index = (err as { opIndex?: number }).opIndex;
          if (index === 0 && err instanceof NoNodeError) {
            this.tails.delete(pdir); // the bucket was reaped: find the newest one
            attempt = -1;
            continue;
          }
          if (index === 0 && err instanceof BadVersionError) {
            await this.sealed(pdir, bucket, signal);
            attempt = -1;
            continue;
          }
          if (index === 1 && err instanceof NoNodeError) {
            // The record went with its session: not applied; a record of the current session.
            await replace();
            attempt = -1;
            continue;
          }
          // A record not at the version we knew: only an earlier attempt of this put could have
          // moved it, so it is a lost reply's question again.
          if (err instanceof ConnectionLossError || (index === 1 && err instanceof BadVersionError)) {
            const found = await this.afterLostReply(used, token, id, dir, payloads.length, signal).catch((e: unknown) => {
              reusable = false;
              throw e;
            });
            if (found === undefined) continue; // not applied: send it again, at the same version
            paths = found;
          } else if (err instanceof SessionExpiredError) {
            reusable = false;
            paths = await this.afterSessionEnd(id, dir, payloads.length, signal);
          } else {
            throw err; // the server refused the transaction: nothing was applied
          }
        }
        // The items are in: nothing after this point may fail the put.
        await this.advanceIfFull(pdir, bucket, paths, signal);
        return paths;
      }
    } finally {
      if (record && reusable) this.records.give(record);
      else if (record) this.records.discard(record);
    }
  }

  /** Deletes this producer's records (on close). */
  close(): Promise<void> {
    return this.records.close();
  }

  /**
   * After a lost reply, in the record's session: the items' paths if the put was applied,
   * undefined if not (the record's version is then as we knew it).
   */
  private async afterLostReply(record: PutRecord, token: string, id: string, dir: string, count: number, signal: AbortSignal): Promise<string[] | undefined> {
    await this.session.waitConnected({ signal });
    if (record.sessionSignal.aborted || this.session.sessionId !== record.sessionId) return this.afterSessionEnd(id, dir, count, signal);
    let read;
    try {
      read = await untilAnswered(this.session, signal, async () => {
        // A member we reconnected to may not have applied our transaction yet.
        await raceAbort(this.session.sync(record.path), signal);
        return raceAbort(this.session.getData(record.path), signal);
      });
    } catch (err) {
      if (err instanceof NoNodeError || err instanceof SessionExpiredError) return this.afterSessionEnd(id, dir, count, signal);
      throw err;
    }
    record.version = read.stat.version;
    if (read.data.toString() !== token) return undefined;
    return this.pathsOf(dir, id, count, signal);
  }

  /**
   * The record's session ended while the outcome was unknown: the record went with it. Items
   * still there answer "applied"; none found is no answer (they may have been taken).
   */
  private async afterSessionEnd(id: string, dir: string, count: number, signal: AbortSignal): Promise<string[]> {
    await this.session.waitConnected({ signal });
    const found = await this.listOurs(dir, id, signal);
    if (found.length > 0) return pad(found, dir, id, count);
    throw new SessionExpiredError('SESSION_EXPIRED', `put to ${dir}: the session ended before its outcome was known, and no item of it is there; it may have been put and already taken, or not put at all`, {
      zkCode: -112,
      path: dir,
      op: 'put',
    });
  }

  /**
   * Paths of the items of a put known to be applied; those already taken end in `-`. Never
   * fails: the put succeeded, whatever this listing does.
   */
  private async pathsOf(dir: string, id: string, count: number, signal: AbortSignal): Promise<string[]> {
    return pad(await this.listOurs(dir, id, signal).catch(() => []), dir, id, count);
  }

  private async listOurs(dir: string, id: string, signal: AbortSignal): Promise<string[]> {
    try {
      const { children } = await untilAnswered(this.session, signal, async () => {
        await raceAbort(this.session.sync(dir), signal);
        return raceAbort(this.session.getChildren(dir), signal);
      });
      return children
        .filter((c) => c.startsWith(`i-${id}-`))
        .sort()
        .map((c) => `${dir}/${c}`);
    } catch (err) {
      if (err instanceof NoNodeError) return []; // reaped: drained, so taken
      throw err;
    }
  }

  /** The newest bucket of a priority, created (with its parents) when there is none. */
  private async tail(pdir: string, signal: AbortSignal): Promise<number> {
    const known = this.tails.get(pdir);
    if (known !== undefined) return known;
    let buckets: number[] = [];
    try {
      const { children } = await untilAnswered(this.session, signal, () => raceAbort(this.session.getChildren(`${this.items}/${pdir}`), signal));
      buckets = children.map(parseBucket).filter((b): b is number => b !== undefined);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
    const tail = buckets.length > 0 ? Math.max(...buckets) : 0;
    if (buckets.length === 0) await untilAnswered(this.session, signal, () => raceAbort(this.session.mkdirp(`${this.items}/${pdir}/${bucketName(0)}`, { acl: this.acl }), signal));
    this.tails.set(pdir, tail);
    return tail;
  }

  /** A put found `bucket` sealed: move to the newest bucket, creating the next if there is none. */
  private async sealed(pdir: string, bucket: number, signal: AbortSignal): Promise<void> {
    this.tails.delete(pdir);
    if ((await this.tail(pdir, signal)) !== bucket) return;
    // The newest bucket is sealed but has no successor (removed by hand, or an older layout).
    await this.createBucket(pdir, bucket + 1, signal);
  }

  /** Best effort after a put landed: moves on if it filled the bucket (the next put retries). */
  private async advanceIfFull(pdir: string, bucket: number, paths: readonly string[], signal: AbortSignal): Promise<void> {
    const last = paths[paths.length - 1] ?? '';
    if ((itemSeq(last.slice(last.lastIndexOf('/') + 1)) ?? 0) < BUCKET_CAPACITY - 1) return;
    await this.advance(pdir, bucket, signal).catch(() => undefined);
  }

  /**
   * Creates the next bucket and seals this one, in one transaction: from then on no put lands
   * here, so a stale tail cannot make a bucket outgrow what consumers can list, and nothing
   * lands in a bucket idle consumers no longer watch.
   */
  private async advance(pdir: string, bucket: number, signal: AbortSignal): Promise<void> {
    const dir = `${this.items}/${pdir}/${bucketName(bucket)}`;
    try {
      await raceAbort(
        this.session.multi([
          { type: 'create', path: `${this.items}/${pdir}/${bucketName(bucket + 1)}`, acl: this.acl },
          { type: 'setData', path: dir, data: SEALED, version: OPEN_BUCKET_VERSION },
        ]),
        signal,
      );
    } catch (err) {
      const index = (err as { opIndex?: number }).opIndex;
      if (index === 0 && err instanceof NodeExistsError) {
        // Someone moved on already (and sealed it, unless an older version did): make sure.
        await raceAbort(this.session.setData(dir, SEALED, { version: OPEN_BUCKET_VERSION }), signal).catch((e: unknown) => {
          if (!(e instanceof BadVersionError || e instanceof NoNodeError)) throw e;
        });
      } else if (index === 1 && err instanceof BadVersionError) {
        await this.createBucket(pdir, bucket + 1, signal);
        return;
      } else if (index === 1 && err instanceof NoNodeError) {
        this.tails.delete(pdir);
        return;
      } else {
        throw err;
      }
    }
    this.tails.set(pdir, Math.max(this.tails.get(pdir) ?? 0, bucket + 1));
  }

  private async createBucket(pdir: string, bucket: number, signal: AbortSignal): Promise<void> {
    // After a lost reply the create is sent again: NodeExists then means done.
    await untilAnswered(this.session, signal, () => raceAbort(this.session.create(`${this.items}/${pdir}/${bucketName(bucket)}`, { acl: this.acl }), signal)).catch((e: unknown) => {
      if (!(e instanceof NodeExistsError)) throw e;
    });
    this.tails.set(pdir, Math.max(this.tails.get(pdir) ?? 0, bucket));
  }
}

/** `found`, then a sequence-less path for each item already taken (its number is unknown). */
function pad(found: readonly string[], dir: string, id: string, count: number): string[] {
  return [...found, ...Array.from({ length: Math.max(0, count - found.length) }, () => `${dir}/i-${id}-`)];
}
