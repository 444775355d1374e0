/**
 * Putting items: into the tail bucket of their priority, exactly once even when a create's
 * reply is lost (items carry a short random id to find them again).
 *
 * @internal
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { ZkSession } from '../client/session.js';
import { ConnectionLossError, NodeExistsError, NoNodeError } from '../errors.js';
import { graceFor } from '../driver/grace.js';
import { raceAbort, raceAbortAfterSent } from '../util/abort.js';
import { BUCKET_CAPACITY, bucketName, itemSeq, parseBucket, priorityDir } from './layout.js';

/** Puts items into a queue's `items` directory. */
export class Producer {
  // Tail bucket number per priority directory, as last seen by this producer.
  private readonly tails = new Map<string, number>();

  constructor(
    private readonly session: ZkSession,
    private readonly items: string,
  ) {}

  /**
   * Puts `payloads` (one transaction when several) at `priority`; resolves to their paths. Every
   * wait ends with `signal`; once the request was sent, giving up leaves its outcome unknown.
   */
  async put(payloads: readonly Buffer[], priority: number, signal?: AbortSignal): Promise<string[]> {
    const pdir = priorityDir(priority);
    for (;;) {
      // Send only while connected: a create queued in an outage would go out after we gave up.
      await this.session.waitConnected({ signal });
      const bucket = await raceAbort(this.tail(pdir), signal);
      signal?.throwIfAborted();
      const id = randomBytes(4).toString('hex');
      const base = `${this.items}/${pdir}/${bucketName(bucket)}/i-${id}-`;
      let paths: string[];
      try {
        const creating =
          payloads.length === 1
            ? this.session.create(base, { data: payloads[0], mode: 'PERSISTENT_SEQUENTIAL' }).then((p) => [p])
            : this.session
                .multi(payloads.map((data) => ({ type: 'create' as const, path: base, data, mode: 'PERSISTENT_SEQUENTIAL' as const })))
                .then((rs) => rs.map((r) => (r.type === 'create' ? r.path : '')));
        // Given up while it is on its way: the caller still learns of a put that lands within
        // the grace (see grace.ts); after that, the outcome is unknown to it.
        paths = await raceAbortAfterSent(creating, signal, () => graceFor(this.session));
      } catch (err) {
        if (err instanceof NoNodeError) {
          // The bucket was reaped (or never existed): find the tail again.
          this.tails.delete(pdir);
          continue;
        }
        if (!(err instanceof ConnectionLossError)) throw err;
        // The reply was lost: the items are there or not, all or none; look for our id.
        const ours = (await this.lookUp(`${this.items}/${pdir}/${bucketName(bucket)}`, signal)).filter((c) => c.startsWith(`i-${id}-`));
        if (ours.length === 0) continue;
        paths = ours.sort().map((c) => `${this.items}/${pdir}/${bucketName(bucket)}/${c}`);
      }
      const last = paths[paths.length - 1] ?? '';
      // Best effort (the next put past the capacity tries again): the items are in, whatever
      // happens to this, so it must not turn the put into a failure or hold it up.
      if ((itemSeq(last.slice(last.lastIndexOf('/') + 1)) ?? 0) >= BUCKET_CAPACITY - 1) await raceAbort(this.advance(pdir, bucket), signal).catch(() => undefined);
      return paths;
    }
  }

  /**
   * The children of `bucket` after a lost reply, once connected, within `signal`. Only NoNode
   * means "none": a lookup that failed otherwise proves nothing (creating again could duplicate
   * the items), so it is tried again.
   */
  private async lookUp(bucket: string, signal: AbortSignal | undefined): Promise<string[]> {
    for (;;) {
      await this.session.waitConnected({ signal });
      try {
        // An up-to-date view: a member we reconnected to may not have applied our create yet.
        await raceAbort(this.session.sync(bucket), signal);
        return (await raceAbort(this.session.getChildren(bucket), signal)).children;
      } catch (err) {
        if (err instanceof NoNodeError) return [];
        // The read was retried with backoff already; anything but another connection loss is real.
        if (!(err instanceof ConnectionLossError)) throw err;
      }
    }
  }

  /** The tail bucket of a priority, created (with its parents) when there is none. */
  private async tail(pdir: string): Promise<number> {
    const known = this.tails.get(pdir);
    if (known !== undefined) return known;
    let buckets: number[] = [];
    try {
      buckets = (await this.session.getChildren(`${this.items}/${pdir}`)).children.map(parseBucket).filter((b): b is number => b !== undefined);
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
    }
    const tail = buckets.length > 0 ? Math.max(...buckets) : 0;
    if (buckets.length === 0) await this.session.mkdirp(`${this.items}/${pdir}/${bucketName(0)}`);
    this.tails.set(pdir, tail);
    return tail;
  }

  /** Moves this producer (and, through the new node, everyone) on to the next bucket. */
  private async advance(pdir: string, bucket: number): Promise<void> {
    try {
      await this.session.create(`${this.items}/${pdir}/${bucketName(bucket + 1)}`);
    } catch (err) {
      if (!(err instanceof NodeExistsError)) throw err;
    }
    this.tails.set(pdir, Math.max(this.tails.get(pdir) ?? 0, bucket + 1));
  }
}
