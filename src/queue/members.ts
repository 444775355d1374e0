/**
 * The consumers of a queue, for their strides: one ephemeral node per consuming queue instance
 * (`<queue>/items/c-<uuid>`), from its first take, poll or consume until it is closed or its
 * session ends. They sit beside the priority directories because every listing of the head
 * already lists that directory (to check priorities): knowing how many consumers there are and
 * our rank among them costs no request and no watch, only the create when we join.
 *
 * A wrong view (a member that died and is not expired yet, one that joined since our listing)
 * costs collisions, never an item: which consumer tries an item is a preference, and whoever
 * deletes or claims it owns it, as before.
 *
 * @internal
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { ZkSession } from '../client/session.js';
import type { Acl } from '../client/types.js';
import { ClosedError, ConnectionLossError, NodeExistsError, NoNodeError, SessionExpiredError, ZooKeeperError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import { deleteWhileSessionLives } from './backoff.js';
import { isMemberName, memberName } from './layout.js';
import type { Place } from './stride.js';

/** Our node in one session. */
interface Membership {
  readonly name: string;
  readonly sessionId: bigint;
  readonly sessionSignal: AbortSignal;
  /** When the create answered that it is there (`performance.now()`). */
  joinedAt?: number;
}

/** This queue instance's membership among the queue's consumers. */
export class Members {
  private current: Membership | undefined;
  private joining: Promise<boolean> | undefined;
  // Our nodes that exist or may exist (a create whose answer was lost), and their session.
  private readonly nodes = new Map<string, AbortSignal>();
  // A session in which the server refused our node (e.g. no permission): not asked again.
  private refusedIn: bigint | undefined;
  private closed = false;

  constructor(
    private readonly session: ZkSession,
    /** `<queue>/items`. */
    private readonly dir: string,
    /** Data of our node (the participant id). */
    private readonly data: Buffer,
    /** ACL of the nodes created (undefined: the session's provider). */
    private readonly acl: readonly Acl[] | undefined,
  ) {}

  /**
   * Our place among the consumers in `children` (a listing of the items directory asked for at
   * `listedAt`), joining them first when we are not there. Undefined when it is not known (the
   * directory is gone, the create's answer was lost, the server refused it): then we act as a
   * lone consumer.
   */
  async place(children: readonly string[], listedAt: number, signal: AbortSignal | undefined): Promise<Place | undefined> {
    const me = this.ours();
    const members = children.filter(isMemberName);
    // A listing older than our join does not show us yet; a newer one that does not is a node
    // that went (deleted by hand): join again.
    const missing = !members.includes(me.name);
    if (missing && me.joinedAt !== undefined && listedAt < me.joinedAt) {
      members.push(me.name);
    } else if (missing) {
      if (this.closed || this.refusedIn === me.sessionId) return undefined;
      this.joining ??= this.join(me).finally(() => {
        this.joining = undefined;
      });
      if (!(await raceAbort(this.joining, signal))) return undefined;
      members.push(me.name);
    }
    members.sort();
    return { index: members.indexOf(me.name), count: members.length };
  }

  /** Leaves: deletes our nodes, bounded by their sessions. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const nodes = [...this.nodes];
    this.nodes.clear();
    await Promise.all(nodes.map(([name, sessionSignal]) => deleteWhileSessionLives(this.session, `${this.dir}/${name}`, sessionSignal)));
  }

  /** Our node in the current session: a new name per session (the old node went with its session). */
  private ours(): Membership {
    const c = this.current;
    if (c && c.sessionId === this.session.sessionId && !c.sessionSignal.aborted) return c;
    for (const [name, s] of this.nodes) if (s.aborted) this.nodes.delete(name);
    this.current = { name: memberName(randomUUID()), sessionId: this.session.sessionId, sessionSignal: this.session.signal };
    return this.current;
  }

  /** Creates our node; true once it is there. */
  private async join(me: Membership): Promise<boolean> {
    this.nodes.set(me.name, me.sessionSignal);
    try {
      await this.session.create(`${this.dir}/${me.name}`, { mode: 'EPHEMERAL', data: this.data, acl: this.acl });
      me.joinedAt = performance.now();
      return true;
    } catch (err) {
      if (err instanceof NodeExistsError) {
        me.joinedAt = performance.now();
        return true; // an earlier create of ours, whose answer was lost
      }
      if (err instanceof ConnectionLossError) return false; // may be there: the next listing says
      this.nodes.delete(me.name);
      if (err instanceof NoNodeError || err instanceof SessionExpiredError || err instanceof ClosedError) return false;
      if (err instanceof ZooKeeperError) {
        this.refusedIn = me.sessionId;
        return false;
      }
      throw err;
    }
  }
}
