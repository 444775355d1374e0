/**
 * Which recipe's nodes are under a path: a recipe refuses a path where it finds another recipe's
 * nodes ({@link LayoutMismatchError}), since two layouts on one path cannot see each other's
 * nodes and neither would exclude the other. What can be told apart is told by the names of the
 * path's children and, for the one pair that shares its node names (a `Mutex` and a
 * window-layout `Semaphore`: `lock-` nodes both), by the directory's data: a semaphore records
 * its `maxLeases` there, a mutex (or leader selector) {@link ONE_HOLDER_RECORD}, or its handoff
 * mark (a `lock-` node's name). What shares a layout by design (a `Mutex` and a
 * `LeaderSelector`, as in Curator) cannot be told apart, and need not be.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Stat } from '../client/types.js';
import { BadVersionError, LayoutMismatchError, NoAuthError, NoNodeError } from '../errors.js';
import { parseNode, perListing } from './names.js';

/** A node layout, as another recipe sees it under a shared path. */
export type LayoutId = 'lock' | 'rwlock' | 'latch' | 'semaphore-v2' | 'queue' | 'curator-queue';

interface Layout {
  readonly id: LayoutId;
  /** Who makes such nodes, for messages. */
  readonly users: string;
  /** Whether `child` (a child's name, directly under the path) is one of its nodes. */
  matches(child: string): boolean;
}

/** The directories a `DistributedQueue` keeps under its path. */
const QUEUE_DIRS: ReadonlySet<string> = new Set(['items', 'consumers', 'producers', 'claims', 'dead']);

// Every listing of every acquisition goes through these (a waiter's first listing is as long as
// the queue ahead of it): a plain substring test first, the parse only for likely matches.
const LAYOUTS: readonly Layout[] = [
  {
    id: 'lock',
    users: "a Mutex, a Semaphore or a LeaderSelector (Curator's InterProcessMutex, InterProcessSemaphore or LeaderSelector)",
    matches: (c) => c.includes('lock-') && parseNode(c, ['lock-']) !== undefined,
  },
  {
    id: 'rwlock',
    users: "a ReadWriteLock (Curator's InterProcessReadWriteLock)",
    matches: (c) => (c.includes('__READ__') || c.includes('__WRIT__')) && parseNode(c, ['__READ__', '__WRIT__']) !== undefined,
  },
  { id: 'latch', users: "a LeaderLatch (Curator's LeaderLatch)", matches: (c) => c.includes('latch-') && parseNode(c, ['latch-']) !== undefined },
  { id: 'semaphore-v2', users: "a Semaphore with layout 'curator-v2' (Curator's InterProcessSemaphoreV2)", matches: (c) => c === 'locks' || c === 'leases' },
  { id: 'queue', users: 'a DistributedQueue', matches: (c) => QUEUE_DIRS.has(c) },
  { id: 'curator-queue', users: "Curator's DistributedQueue", matches: (c) => c.startsWith('queue-') && /^queue-(?:\d{10}|-\d{9,10})$/.test(c) },
];

const SAMPLE_UUID = '00000000-0000-4000-8000-000000000000';

/** {@link layoutsOf} by lock name: every recipe object asks it, often one per request. */
const layoutsByName = new Map<string, readonly LayoutId[]>();

/** The layouts whose nodes a recipe makes that creates `lockName` nodes directly under its path. */
export function layoutsOf(lockName: string): readonly LayoutId[] {
  let ids = layoutsByName.get(lockName);
  if (ids === undefined) {
    const sample = `_c_${SAMPLE_UUID}-${lockName}0000000000`;
    ids = Object.freeze(LAYOUTS.filter((l) => l.matches(sample)).map((l) => l.id));
    // A program uses a few lock names; one that makes them up as it goes is not remembered.
    if (layoutsByName.size < 64) layoutsByName.set(lockName, ids);
  }
  return ids;
}

/** The first child of another layout than `own`'s, and whose it is (looked at once per listing). */
export const foreignChild: (children: readonly string[], own: readonly LayoutId[]) => { child: string; users: string } | undefined = perListing(scanForeign);

function scanForeign(children: readonly string[], own: readonly LayoutId[]): { child: string; users: string } | undefined {
  const others = LAYOUTS.filter((l) => !own.includes(l.id));
  for (const c of children) {
    for (const layout of others) if (layout.matches(c)) return { child: c, users: layout.users };
  }
  return undefined;
}

/**
 * Throws {@link LayoutMismatchError} when `children` (of `path`, the recipe's directory) show
 * another layout than `own`. `what` names the recipe (`mutex`, `queue`).
 */
export function refuseForeign(what: string, path: string, children: readonly string[], own: readonly LayoutId[]): void {
  const found = foreignChild(children, own);
  if (found === undefined) return;
  throw new LayoutMismatchError(
    `${what} ${path} has ${JSON.stringify(found.child)} under it, a node of ${found.users}: the two cannot see each other's nodes, so neither would exclude the other; use another path for one of them`,
    { path },
  );
}

/**
 * What a `Mutex` or a `LeaderSelector` records as its directory's data: a path of one holder at
 * a time. At least 8 bytes, so that a participant can tell it without reading it from a
 * semaphore's `maxLeases` (at most 7 digits) by the data's length in a listing's Stat.
 */
export const ONE_HOLDER_RECORD: Buffer = Buffer.from('zk-recipes:mutex');

/** The longest `maxLeases` a semaphore records (1 000 000). */
const MAX_LEASES_DIGITS = 7;

/** What a directory's data says about its holders. */
export type DirectoryRecord =
  | { readonly kind: 'none' }
  | { readonly kind: 'leases'; readonly maxLeases: number }
  /** One holder at a time: the record, or a handoff mark (a `lock-` node's name). */
  | { readonly kind: 'one-holder' }
  /** A leader latch's handoff mark (a `latch-` node's name). */
  | { readonly kind: 'latch' }
  | { readonly kind: 'other'; readonly text: string };

/** Reads a lock directory's data. */
export function parseRecord(data: Buffer): DirectoryRecord {
  if (data.length === 0) return { kind: 'none' };
  const text = data.toString('utf8');
  if (/^[1-9]\d{0,6}$/.test(text)) return { kind: 'leases', maxLeases: Number(text) };
  if (data.equals(ONE_HOLDER_RECORD) || parseNode(text, ['lock-']) !== undefined) return { kind: 'one-holder' };
  if (parseNode(text, ['latch-']) !== undefined) return { kind: 'latch' };
  return { kind: 'other', text };
}

/**
 * The directory check of a recipe of one holder at a time on `lock-` nodes (a `Mutex`, a
 * `LeaderSelector`): a semaphore of more than one lease records its `maxLeases` in the
 * directory's data, and shares its node names, so only that data tells. Claims a directory
 * without data (one made by someone else: Curator, a plain mkdirp) with
 * {@link ONE_HOLDER_RECORD}, so that a semaphore arriving later refuses it too; on a directory
 * the participants may not write (Curator needs only read, create and delete), nothing is
 * recorded. Costs nothing where the data is ours already: only data of a semaphore's length is
 * read. Checked once per incarnation of the directory (its czxid).
 */
export class OneHolderDirectory {
  private verified: bigint | undefined;

  constructor(
    private readonly session: ZkSession,
    private readonly path: string,
    /** Names the recipe in messages (`mutex`, `leader selector`). */
    private readonly what: string,
  ) {}

  /** Throws {@link LayoutMismatchError} if a semaphore of more than one lease uses the directory. */
  async check(stat: Stat): Promise<void> {
    if (this.verified === stat.czxid) return;
    // Ours, a handoff mark, or someone else's data: nothing to read.
    if (stat.dataLength > MAX_LEASES_DIGITS) {
      this.verified = stat.czxid;
      return;
    }
    let data: Buffer | undefined;
    let version = stat.version;
    if (stat.dataLength > 0) ({ data, version } = await this.read());
    for (;;) {
      const record = data === undefined ? { kind: 'none' as const } : parseRecord(data);
      if (record.kind === 'leases' && record.maxLeases > 1) {
        throw new LayoutMismatchError(
          `${this.what} ${this.path} is used by a Semaphore with maxLeases ${record.maxLeases} (its data says so, and its lock- nodes are like ours): it would not exclude this ${this.what}'s holder, nor this one its lease holders; use another path for one of them`,
          { path: this.path },
        );
      }
      if (record.kind !== 'none') break;
      try {
        await this.session.setData(this.path, ONE_HOLDER_RECORD, { version });
        break;
      } catch (err) {
        if (err instanceof NoAuthError || err instanceof NoNodeError) break; // not ours to write, or reaped meanwhile
        if (!(err instanceof BadVersionError)) throw err;
      }
      // Someone wrote first: what?
      ({ data, version } = await this.read());
    }
    this.verified = stat.czxid;
  }

  private async read(): Promise<{ data: Buffer | undefined; version: number }> {
    try {
      const r = await this.session.getData(this.path);
      return { data: r.data, version: r.stat.version };
    } catch (err) {
      // Reaped meanwhile: our node is in it, so this cannot really happen; nothing to check.
      if (err instanceof NoNodeError) return { data: ONE_HOLDER_RECORD, version: -1 };
      throw err;
    }
  }
}
