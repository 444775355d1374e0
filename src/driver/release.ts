/**
 * {@link NodeRemoval}: deleting our lock nodes, at release (with the handoff mark) or when an
 * acquisition gives up, retrying through connection loss until they are gone or their session
 * is; never past the end of that session.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { ClosedError, ConnectionLossError, NoAuthError, NoNodeError, SessionExpiredError } from '../errors.js';
import { raceAbort } from '../util/abort.js';

/** How a removal of our node ended: our deletion, found gone already, or its session ended first. */
export type Removal = 'deleted' | 'gone' | 'ended';

const noop = (): void => undefined;

/** Deletes the nodes of one lock directory; `ended` hears how each removal ended. */
export class NodeRemoval {
  constructor(
    private readonly session: ZkSession,
    private readonly dir: string,
    /** Releases leave the handoff mark (off for good once the directory refuses our writes). */
    private marks: boolean,
    private readonly ended: (path: string, how: Removal) => void,
  ) {}

  /**
   * Deletes our nodes, retrying through connection loss until they are gone or their session is
   * (`owner` aborted: its ephemerals went with it, so nothing is sent and nothing waited for).
   * Ends at the latest when that session is LOST or closed. Resolves to whether this call deleted
   * them all (false: some were already gone, or the session ended).
   */
  async remove(paths: readonly string[], owner: AbortSignal): Promise<boolean> {
    let all = true;
    for (const path of paths) {
      let end: Removal = 'ended';
      try {
        end = await this.removeOne(path, owner);
        if (end !== 'deleted') all = false;
      } finally {
        this.ended(path, end);
      }
    }
    return all;
  }

  /** A deletion another participant may be waiting on leaves now, not at the end of the turn. */
  private sent<T>(request: Promise<T>): Promise<T> {
    this.session.flushWrites();
    return request;
  }

  private async removeOne(path: string, owner: AbortSignal): Promise<Removal> {
    for (;;) {
      if (owner.aborted || this.session.closed) return 'ended';
      try {
        // Raced: a retry after the session ended would go to the next session, and wait for it.
        await raceAbort(this.sent(this.session.delete(path)), owner);
        return 'deleted';
      } catch (err) {
        if (!owner.aborted && err instanceof NoNodeError) return 'gone';
        if (owner.aborted || err instanceof SessionExpiredError || err instanceof ClosedError) return 'ended';
        if (!(err instanceof ConnectionLossError)) throw err;
        await this.session.waitConnected({ signal: owner }).catch(noop);
      }
    }
  }


  /**
   * Deletes the node(s) of a grant, like {@link remove}; with `handoff` (one node) and a grant
   * that asks for it (`withMark`, see {@link HeldNodes.markRelease}), in one transaction with
   * the mark that tells our successor we held (see {@link LockSpec.handoff}). An uncontended
   * cycle so stays a plain delete. Only for nodes that were granted: a mark from a node that
   * never held could grant its successor while others are ahead.
   */
  async release(paths: readonly string[], owner: AbortSignal, withMark = true): Promise<boolean> {
    const path = paths[0];
    if (!this.marks || !withMark || paths.length !== 1 || path === undefined) return this.remove(paths, owner);
    let end: Removal = 'ended';
    try {
      end = await this.releaseMarked(path, owner);
      return end === 'deleted';
    } finally {
      this.ended(path, end);
    }
  }

  private async releaseMarked(path: string, owner: AbortSignal): Promise<Removal> {
    const mark = Buffer.from(path.slice(this.dir.length + 1), 'utf8');
    let sent = false;
    for (;;) {
      if (owner.aborted || this.session.closed) return 'ended';
      try {
        await raceAbort(this.sent(this.session.multi([{ type: 'delete', path }, { type: 'setData', path: this.dir, data: mark }])), owner);
        return 'deleted';
      } catch (err) {
        // After a lost reply, gone means our earlier transaction deleted it.
        if (!owner.aborted && err instanceof NoNodeError) return sent && err.opIndex === 0 ? 'deleted' : 'gone';
        // A directory we may create and delete children in but not write (Curator needs no
        // more): release without the mark, here and from now on; waiters then list.
        if (err instanceof NoAuthError && err.opIndex === 1) {
          this.marks = false;
          return this.removeOne(path, owner);
        }
        if (owner.aborted || err instanceof SessionExpiredError || err instanceof ClosedError) return 'ended';
        if (!(err instanceof ConnectionLossError)) throw err;
        sent ||= err.sent !== false;
        await this.session.waitConnected({ signal: owner }).catch(noop);
      }
    }
  }
}
