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
import { BUCKET_CAPACITY, bucketName, itemSeq, parseBucket, priorityDir } from './layout.js';

/** Puts items into a queue's `items` directory. */
export class Producer {
  // Tail bucket number per priority directory, as last seen by this producer.
  private readonly tails = new Map<string, number>();

  constructor(
    private readonly session: ZkSession,
    private readonly items: string,
  ) {}

  /** Puts `payloads` (one transaction when several) at `priority`; resolves to their paths. */
  async put(payloads: readonly Buffer[], priority: number): Promise<string[]> {
    const pdir = priorityDir(priority);
    for (;;) {
      const bucket = await this.tail(pdir);
      const id = randomBytes(4).toString('hex');
      const base = `${this.items}/${pdir}/${bucketName(bucket)}/i-${id}-`;
      let paths: string[];
      try {
        paths =
          payloads.length === 1
            ? [await this.session.create(base, { data: payloads[0], mode: 'PERSISTENT_SEQUENTIAL' })]
            : (await this.session.multi(payloads.map((data) => ({ type: 'create' as const, path: base, data, mode: 'PERSISTENT_SEQUENTIAL' as const })))).map((r) =>
                r.type === 'create' ? r.path : '',
              );
      } catch (err) {
        if (err instanceof NoNodeError) {
          // The bucket was reaped (or never existed): find the tail again.
          this.tails.delete(pdir);
          continue;
        }
        if (!(err instanceof ConnectionLossError)) throw err;
        // The reply was lost: the items are there or not, all or none; look for our id, in an
        // up-to-date view (a member we reconnected to may not have applied our create yet).
        await this.session.waitConnected();
        const dir = `${this.items}/${pdir}/${bucketName(bucket)}`;
        await this.session.sync(dir);
        const { children } = await this.session.getChildren(dir).catch(() => ({ children: [] as string[] }));
        const ours = children.filter((c) => c.startsWith(`i-${id}-`));
        if (ours.length === 0) continue;
        paths = ours.sort().map((c) => `${this.items}/${pdir}/${bucketName(bucket)}/${c}`);
      }
      const last = paths[paths.length - 1] ?? '';
      if ((itemSeq(last.slice(last.lastIndexOf('/') + 1)) ?? 0) >= BUCKET_CAPACITY - 1) await this.advance(pdir, bucket);
      return paths;
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
