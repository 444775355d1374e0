/**
 * The lock nodes this process has in queues right now, so that a waiter can follow a node of
 * its own session without a server watch: this process deletes its own nodes, so it is the
 * first to know they are gone. Only within one session: the deletion's reply then comes from
 * the waiter's own server, which has applied everything the holder wrote before it. A waiter
 * of another session (even of the same connect string) may be on a member that lags: told here,
 * it would read data older than the holder's last writes, so it waits for its own server's
 * notification, as another process would. Every way a node of ours ends is reported here:
 * our deletion (or a NoNode: gone already), or the end of its session (then it is gone or about
 * to be, which the follower checks with a server watch of its own).
 *
 * A node we hold whose node someone else deletes is noticed here only at its release; a waiter
 * behind it waits until then, where a server watch would have woken it while the holder still
 * believes it holds. Keys name a node as the driver does (connect string and path): sessions
 * of other connect strings watch it on the server, as another process would.
 *
 * @module
 */
import type { WatchEvent } from '../client/types.js';
import { onAbort } from '../util/signals.js';

/** How a node of ours ended: deleted (or found gone), or its session ended (it may linger a little). */
type End = 'deleted' | 'session-ended';

interface LocalNode {
  /** Made by the first follower: most nodes are never followed (uncontended). */
  followers: Set<Follower> | undefined;
  readonly session: Sessions;
}

/**
 * A waiter following one of our nodes, like a one-shot watch (see {@link LocalNodes.follow}).
 * An object with methods rather than closures and an AbortController: thousands may wait.
 */
export class Follower {
  /** Resolves once the node ended (see {@link LocalNodes.follow}); never rejects. */
  readonly changed: Promise<WatchEvent>;
  /** Followed in memory, not watched on the server. */
  readonly local = true;
  private tell!: (event: WatchEvent) => void;

  constructor(
    private readonly node: LocalNode,
    private readonly path: string,
  ) {
    this.changed = new Promise<WatchEvent>((resolve) => {
      this.tell = resolve;
    });
    (node.followers ??= new Set()).add(this);
  }

  /** The node ended. */
  ended(how: End): void {
    this.tell({ type: how === 'deleted' ? 'NODE_DELETED' : 'NODE_DATA_CHANGED', path: this.path });
  }

  /** Stops following (`changed` then never settles). */
  stop(_reason?: unknown): void {
    this.node.followers?.delete(this);
  }
}

interface Sessions {
  readonly owner: AbortSignal;
  /** Keys of its nodes. */
  readonly paths: Set<string>;
  readonly unsubscribe: () => void;
}

/**
 * Our nodes, each with the waiters that follow it.
 *
 * @internal
 */
export class LocalNodes {
  private readonly nodes = new Map<string, LocalNode>();
  private readonly sessions = new Map<AbortSignal, Sessions>();

  /** Our node `key` is in its queue, in the session behind `owner` (not yet ended). */
  add(key: string, owner: AbortSignal): void {
    if (owner.aborted || this.nodes.has(key)) return;
    let session = this.sessions.get(owner);
    if (!session) {
      const paths = new Set<string>();
      const unsubscribe = onAbort(owner, () => {
        this.sessions.delete(owner);
        for (const k of paths) this.end(k, 'session-ended');
      });
      session = { owner, paths, unsubscribe };
      this.sessions.set(owner, session);
    }
    session.paths.add(key);
    this.nodes.set(key, { followers: undefined, session });
  }

  /** Our node `key` ended; its followers are told (at once, in order of following). */
  end(key: string, how: End): void {
    const node = this.nodes.get(key);
    if (!node) return;
    this.nodes.delete(key);
    node.session.paths.delete(key);
    if (node.session.paths.size === 0 && this.sessions.get(node.session.owner) === node.session) {
      node.session.unsubscribe();
      this.sessions.delete(node.session.owner);
    }
    if (node.followers) for (const f of node.followers) f.ended(how);
  }

  /**
   * Follows our node `key` (at `path`) like a one-shot watch: `changed` resolves with
   * NODE_DELETED once it is deleted, or with NODE_DATA_CHANGED once its session ended (look
   * again: with a server watch, it is not ours any more); `stop()` stops following.
   * Undefined when `key` is not a node of ours in a queue now (a node of another process, or one
   * already gone: a server watch answers then).
   */
  follow(key: string, path: string, owner: AbortSignal): Follower | undefined {
    const node = this.nodes.get(key);
    // Only within one session: another session's server may not have applied what the
    // holder wrote before its release when we learn of the deletion here (see the module doc).
    if (!node || node.session.owner !== owner) return undefined;
    return new Follower(node, path);
  }

  /** Whether `key` is a node of ours in a queue now. */
  has(key: string): boolean {
    return this.nodes.has(key);
  }

  /** How many nodes are kept (tests). */
  get size(): number {
    return this.nodes.size;
  }
}

/** The process's nodes, shared by every driver (a waiter may follow a node of another session). */
export const localNodes = new LocalNodes();
