/**
 * What this process knows about its own lock nodes: which of them were, at some moment, the
 * head of their queue (nothing of any ordering kind ahead of them). Such a fact never turns
 * false: nodes never join a queue ahead of existing ones (sequence numbers only grow), so once
 * nothing is ahead of a node, nothing ever is again; the one exception, a holder putting a node
 * in its own place (a read-write lock downgrade), {@link HeadFacts.forget}s its fact before it
 * does so. A waiter in this process whose watched node was such a head and is gone holds (the
 * predicates' head rule) without listing the directory: a handoff between two sessions of one
 * process costs no read. Only nodes that waited are recorded (the head of its first listing is
 * the head of every listing made after it, so its successors know it anyway), and write nodes
 * of a read-write lock: their fact also says they put no read node in their place.
 *
 * Keys name a node as the driver does (connect string and path); our node names carry a fresh
 * random uuid each, so a key names one node of one ensemble (the same node through another
 * connect string simply finds no fact: it lists, as always). Facts are only memory: a held
 * node's fact stays while its session lives, a released node's for one to two rotations (the
 * successor's notification comes within milliseconds; a later one finds no fact and lists).
 * The exception above has a twin: a node granted after a write node went that has no fact here
 * is never counted as a head, since that write node may have left a read node in its place.
 *
 * @module
 */
/** How often released facts age (a fact lives one to two of these after its release). */
export const HEAD_FACT_ROTATE_MS = 5000;

/**
 * The facts, with their lifetimes.
 *
 * @internal
 */
export class HeadFacts {
  /** Nodes still held (or not yet released), with their session's signal; keys as the driver names nodes. */
  private readonly live = new Map<string, AbortSignal>();
  private recent = new Set<string>();
  private old = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly rotateMs = HEAD_FACT_ROTATE_MS) {}

  /** Our node `key` (of the session behind `session`) has nothing ahead of it. */
  record(key: string, session: AbortSignal): void {
    this.live.set(key, session);
    this.timer ??= setInterval(() => this.rotate(), this.rotateMs).unref();
  }

  /** Node `key` was deleted (or its deletion ended): keep the fact a little longer. */
  released(key: string): void {
    if (this.live.delete(key)) this.recent.add(key);
  }

  /** Node `key`'s holder is about to put a node in its place: the fact no longer covers its successors. */
  forget(key: string): void {
    this.live.delete(key);
    this.recent.delete(key);
    this.old.delete(key);
    this.stopIfEmpty();
  }

  /** Whether node `key` was known to be the head of its queue (at some moment, by this process). */
  knows(key: string): boolean {
    return this.live.has(key) || this.recent.has(key) || this.old.has(key);
  }

  /** How many facts are kept (tests). */
  get size(): number {
    return this.live.size + this.recent.size + this.old.size;
  }

  /** Whether the rotation timer runs (tests: only while facts are kept). */
  get rotating(): boolean {
    return this.timer !== undefined;
  }

  /** Ages released facts; those of nodes whose session ended count as released. */
  rotate(): void {
    this.old = this.recent;
    this.recent = new Set();
    for (const [key, session] of this.live) {
      if (!session.aborted) continue;
      this.live.delete(key);
      this.recent.add(key);
    }
    this.stopIfEmpty();
  }

  private stopIfEmpty(): void {
    if (this.size > 0 || this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The process's facts, shared by every driver (a handoff between sessions of one process). */
export const heads = new HeadFacts();
