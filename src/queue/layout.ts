/**
 * The znode layout of a {@link DistributedQueue}:
 *
 * ```
 * <path>/items/p-<priority>/b-<bucket>/i-<id>-<seq>   persistent sequential items
 * <path>/items/c-<uuid>                               consuming queue instances (ephemeral)
 * <path>/claims/<priority>.<bucket>.<item>            ephemeral claims (at-least-once)
 * <path>/consumers/_c_<uuid>-lock-<seq>               idle consumers lining up
 * <path>/producers/<uuid>-<n>                         ephemeral put records, one per put in flight
 * <path>/dead/<priority>.<bucket>.<item>              dead letters (data: the payload)
 * <path>/dead/<priority>.<bucket>.<item>/info         their delivery count and last error (JSON)
 * ```
 *
 * Buckets keep every listing small: a producer moves on to the next bucket once an item's
 * sequence number reaches the bucket capacity, so no `getChildren` reply nears ZooKeeper's
 * 1 MB packet limit however long the queue grows. The move creates the next bucket and seals
 * the full one (its data version goes from 0 to 1) in one transaction; every put checks that its
 * bucket is unsealed in its own transaction, so only the newest bucket of a priority ever grows,
 * whatever tail a producer remembers.
 *
 * @internal
 * @module
 */

/** Items per bucket before producers move on (the sequence also counts deletions). */
export const BUCKET_CAPACITY = 10_000;
/** Listing a bucket with more children than this is refused: its reply could near 1 MB. */
export const MAX_LISTING = 30_000;
/** Data of a sealed bucket (its data version is then 1; an open bucket's is 0). */
export const SEALED = Buffer.from('sealed');
/** Data version of a bucket that still takes puts. */
export const OPEN_BUCKET_VERSION = 0;

/** Lowest and highest priority (lower is served first). */
export const PRIORITY_RANGE = { min: 0, max: 999, default: 500 } as const;

/** Directory name of a priority. */
export function priorityDir(priority: number): string {
  return `p-${String(priority).padStart(3, '0')}`;
}

/** Priority of a priority directory name, or undefined for foreign children. */
export function parsePriority(name: string): number | undefined {
  const m = /^p-(\d{3})$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Bucket directory name. */
export function bucketName(n: number): string {
  return `b-${String(n).padStart(10, '0')}`;
}

/** Bucket number of a bucket name, or undefined for foreign children. */
export function parseBucket(name: string): number | undefined {
  const m = /^b-(\d{10})$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Sequence number of an item name (`i-<id>-<seq>`), or undefined for foreign children. */
export function itemSeq(name: string): number | undefined {
  const m = /^i-[0-9a-f]{8}-(\d{10})$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Sorts item names by sequence (FIFO within a bucket), dropping foreign children. */
export function sortItems(names: readonly string[]): string[] {
  return names
    .map((n) => [n, itemSeq(n)] as const)
    .filter((e): e is readonly [string, number] => e[1] !== undefined)
    .sort((a, b) => a[1] - b[1])
    .map((e) => e[0]);
}

/** Priority of a claim or dead-letter name (`p-<priority>.b-<bucket>.i-…`), or undefined. */
export function priorityOfKey(key: string): number | undefined {
  return parsePriority(key.slice(0, key.indexOf('.')));
}

/** Name of a consumer's member node (beside the priority directories). */
export function memberName(uuid: string): string {
  return `c-${uuid}`;
}

/** Whether a child of the items directory is a consumer's member node. */
export function isMemberName(name: string): boolean {
  return /^c-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(name);
}

/** Claim node name of an item (one flat directory; names are unique per item). */
export function claimName(priority: string, bucket: string, item: string): string {
  return `${priority}.${bucket}.${item}`;
}
