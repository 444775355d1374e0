/**
 * The grant decision: the one place that says when a waiter holds without a fresh listing, and
 * on which facts. Every fact names where it came from (which session's server saw it), so a new
 * shortcut is checked against the same list. The rules of an ensemble that they rest on
 * (docs/sessions.md, "The loss clock on an ensemble", and DESIGN.md, "Failure discipline"):
 * members answer from their own copy and may lag; one session's notifications and replies come
 * in the order its server applied them; any node may be deleted by anyone.
 *
 * | fact | from | why it is sound |
 * | --- | --- | --- |
 * | `gone` | our session: a server notification of the deletion, or (a node of our own session) its deletion's reply | our server applied the deletion, so everything written before it: our reads after the grant see the holder's writes |
 * | `holdsAfter` | the last listing, on our session | nodes only leave the part of the queue ahead of ours (sequence numbers only grow), so the predicate's verdict holds once that many watched nodes are gone |
 * | `knownHeads` | this process: a grant of any of its sessions recorded the node as the head (`heads.ts`) | "nothing was ahead of it" is a fact about the order, which no session's lag changes; a downgrade's insertion forgets it first |
 * | `markNamesPredecessor` | the directory's data, read on our session after `gone` | written in the holder's deletion's own transaction: it held, so nothing was ahead of it |
 * | `inserted` | the last listing's kinds | a node of the inserting kind may have left one in its place: list instead |
 * | `ownWatched`, `OwnNodes.stand` | our session: the watches on our own nodes, set when the wait began (whenever its listing allowed a grant without a listing), else read at the grant | a notification comes before the one (or the reply) that granted us, and a read at the grant is answered after the deletions that granted us: not fired, or found, means our nodes stood when we were granted |
 * | `sessionLive` | the session layer | a grant is handed out only in the live session that owns our node |
 *
 * @internal
 * @module
 */

/** What a waiter knows once nodes it waited on are gone (see the module's table). */
export interface WaitFacts {
  /** How many of the watched nodes are gone (deletions seen on our own session). */
  readonly gone: number;
  /** How many must go for the predicate to hold on the last listing; undefined: it never says. */
  readonly holdsAfter: number | undefined;
  /** How many of the gone nodes this process knows were the head of their queue. */
  readonly knownHeads: number;
  /** Whether a gone node may have left a node in its place that keeps us from holding. */
  readonly inserted: boolean;
  /** Whether our own nodes were watched before the nodes we waited on went (else they are read now). */
  readonly ownWatched: boolean;
}

/**
 * Whether the waiter holds without listing the directory, on `facts`, or must ask the handoff
 * mark (`askMark`, read on our session; undefined where no mark can name the node) before deciding; `false` means list again. A grant
 * without a listing needs our own nodes to stand: when they were not watched before
 * (`ownWatched`), `watchOwn` reads (and watches) them now, on our session, after the deletions
 * that grant us were applied there; it rejects (start over) if one is gone. Pipelined with the
 * mark's read when both are needed.
 */
export async function holdsWithoutListing(facts: WaitFacts, askMark: (() => Promise<boolean>) | undefined, watchOwn: () => Promise<void>): Promise<boolean> {
  if (facts.inserted) return false;
  const own = facts.ownWatched ? undefined : watchOwn;
  if ((facts.holdsAfter !== undefined && facts.gone >= facts.holdsAfter) || facts.knownHeads > 0) {
    await own?.();
    return true;
  }
  if (!askMark) return false;
  const [held] = await Promise.all([askMark(), own?.()]);
  return held;
}
