/**
 * {@link QueueEntry}: entering a lock queue. Creates our node(s) with a protected name (or, for
 * a downgrade, in the place of a node we hold) and sends the listing right behind; after a lost
 * create reply it finds what the create made from an up-to-date view and by owner, so there are
 * never two nodes for one attempt and never an orphan.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Op, Stat } from '../client/types.js';
import { joinPath } from '../client/validate.js';
import { ClosedError, ConnectionLossError, IllegalStateError, LockLostError, NodeExistsError, NoNodeError, SessionExpiredError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import type { AcquireRequest, InPlaceOf, LockSpec } from './lock-driver.js';
import { formatSeq, parseNode, sortChildren } from './names.js';
import type { NodeRemoval } from './release.js';
import { Restart } from './watch-events.js';

const noop = (): void => undefined;

/** Our node(s) once created, and the listing sent right behind. */
export interface Entered {
  names: string[];
  czxid: bigint;
  /** The session that owns our node(s) (their ephemeralOwner). */
  owner: bigint;
  /** Aborts when the session the create was sent in ends: our node(s) go with it. */
  ownerSignal: AbortSignal;
  /** The listing sent right behind the create; taken (cleared) by the wait that reads it. */
  listing: Promise<Listing> | undefined;
}

/** A listing of the directory. */
export interface Listing {
  children: string[];
  stat: Stat;
}


/** Creates the nodes of one lock directory's acquisitions. */
export class QueueEntry {
  /** The listing that creates issued in this microtask burst will share (see {@link listBehind}). */
  private batch: Promise<Listing> | undefined;

  constructor(
    private readonly session: ZkSession,
    private readonly dir: string,
    private readonly spec: LockSpec,
    private readonly removal: NodeRemoval,
    /** Creates the directory (shared by acquisitions that found it missing at once). */
    private readonly makeDir: () => Promise<void>,
    /** Tells this process's head facts that a node will have one in its place. */
    private readonly forgetHead: (path: string) => void,
  ) {}

  /**
   * A listing sent behind every create issued so far on this session: one request for all the
   * acquisitions that enter in one microtask burst (a burst of N waiters in one process then
   * costs one listing per session, not N listings of up to N names). Sound because a session's
   * requests are processed in the order they were sent: a listing sent after our create sees
   * our node, whoever else it serves. The children array is shared: read only.
   */
  private listBehind(): Promise<Listing> {
    if (this.batch) return this.batch;
    const batch = new Promise<Listing>((resolve, reject) => {
      queueMicrotask(() => {
        this.batch = undefined;
        this.session.getChildren(this.dir).then(resolve, reject);
      });
    });
    batch.catch(noop);
    this.batch = batch;
    return batch;
  }

  /** The transaction that creates `count` adjacent nodes at once. */
  leaseOps(prefix: string, count: number, data: Buffer): Op[] {
    const base = joinPath(this.dir, prefix + this.spec.lockName);
    return Array.from({ length: count }, () => ({ type: 'create' as const, path: base, mode: 'EPHEMERAL_SEQUENTIAL' as const, data, acl: this.spec.acl }));
  }

  /**
   * Creates our node(s) with a protected name, and sends the listing right behind the create
   * (a session's requests are processed in order, so it sees our node). Not bounded by the
   * caller: it may go on after the caller gave up (see `attempt`), but never creates again then,
   * and it ends at the latest when the session of its create ends.
   */
  async enter(req: AcquireRequest, prefix: string, count: number, giveUp: AbortSignal | undefined): Promise<Entered> {
    const base = joinPath(this.dir, prefix + this.spec.lockName);
    for (;;) {
      giveUp?.throwIfAborted();
      const owner = this.session.signal;
      const created =
        count === 1
          ? this.session
              .createWithStat(base, { mode: 'EPHEMERAL_SEQUENTIAL', data: req.data, acl: this.spec.acl })
              .then((r) => ({ paths: [r.path], stat: r.stat as Stat | undefined }))
          : this.session
              .multi(this.leaseOps(prefix, count, req.data))
              .then((rs) => ({ paths: rs.map((r) => (r.type === 'create' ? r.path : '')), stat: undefined as Stat | undefined }));
      const listing = this.listBehind();
      try {
        const made = await created;
        const names = made.paths.map((p) => p.slice(this.dir.length + 1));
        // One multi is one transaction: all its nodes share one czxid.
        const stat = made.stat ?? (await raceAbort(this.statOf(made.paths[0] as string), owner));
        return { names, czxid: stat.czxid, owner: stat.ephemeralOwner, ownerSignal: owner, listing };
      } catch (err) {
        if (err instanceof NoNodeError) {
          // Raced: once the session ends, mkdirp's creates would wait for the next one.
          await raceAbort(this.makeDir(), owner);
          continue;
        }
        if (!(err instanceof ConnectionLossError)) throw err;
        // The create may have been applied: adopt our node by its uuid rather than create a
        // second one (never two nodes for one attempt, never an orphan). Look even if the caller
        // gave up, so that a node that did get created is deleted. If the session ends first,
        // its node went with it: the wait ends with SessionExpiredError (or ClosedError).
        await this.session.waitConnected({ signal: owner });
        const found = await raceAbort(this.findOurs(prefix, count, owner), owner);
        if (found) return { ...found, ownerSignal: owner };
      }
    }
  }

  /**
   * Creates our node in `place`'s place (its sequence, plain ephemeral) in one transaction with
   * a check that `place`'s node still exists, and only in the session that holds it: a condition
   * checked before sending would not hold (the session may be renewed, the node deleted, while
   * the create is on its way or retried). The listing goes right behind. A lost reply is
   * resolved by our node's path, in the same session; whatever fails, nothing of ours is left.
   * Our token is `place`'s: our node's own czxid is newer than those of writers queued behind
   * `place`, yet it is granted before them.
   */
  async enterInPlace(req: AcquireRequest, place: InPlaceOf, prefix: string, giveUp: AbortSignal | undefined): Promise<Entered> {
    const seq = parseNode(place.path.slice(place.path.lastIndexOf('/') + 1), this.spec.kinds)?.seq;
    if (seq === undefined || !place.path.startsWith(`${this.dir}/`)) throw new IllegalStateError(`${place.path} is not a lock node of ${this.dir}`, { path: place.path });
    const name = prefix + this.spec.lockName + formatSeq(seq);
    const path = joinPath(this.dir, name);
    let sent = false;
    let sessionSignal = this.session.signal;
    try {
      for (;;) {
        if (!place.isHeld) throw placeLost(place, 'it is no longer held');
        sessionSignal = this.session.signal;
        if (this.session.sessionId !== place.sessionId || sessionSignal.aborted) throw placeLost(place, `its session 0x${place.sessionId.toString(16)} ended`);
        sent = true;
        // Our node joins ahead of `place`'s successors: none of them may take `place`'s
        // deletion for a handoff from a head any more.
        this.forgetHead(place.path);
        const created = this.session.multi([
          { type: 'check', path: place.path },
          { type: 'create', path, mode: 'EPHEMERAL', data: req.data, acl: this.spec.acl },
        ]);
        const listing = this.session.getChildren(this.dir);
        listing.catch(noop);
        try {
          await created;
          // Sent in `place`'s session (checked above, same tick): the node is its ephemeral, and
          // our token is `place`'s, so no read for a Stat.
          return this.inPlace(name, place, listing, sessionSignal);
        } catch (err) {
          if (err instanceof NoNodeError && err.opIndex === 0) throw placeLost(place, 'its node is gone', err);
          if (err instanceof SessionExpiredError) throw placeLost(place, 'its session ended', err);
          // Applied already (an earlier reply was lost): the path is this attempt's alone.
          if (err instanceof NodeExistsError && err.opIndex === 1) return this.adoptInPlace(name, place, giveUp, sessionSignal);
          if (!(err instanceof ConnectionLossError)) throw err;
        }
        // Wait for the same session, even if giving up (a node created in it must be found and
        // deleted); its end is an answer too: the node, if any, went with it.
        await this.session.waitConnected({ signal: sessionSignal }).catch((err: unknown) => {
          throw err instanceof ClosedError ? err : placeLost(place, 'its session ended', err);
        });
        if (this.session.sessionId !== place.sessionId) continue; // renewed: refused at the top
        if (await raceAbort(this.session.exists(path), sessionSignal)) return this.adoptInPlace(name, place, giveUp, sessionSignal);
        giveUp?.throwIfAborted();
      }
    } catch (err) {
      if (sent) await this.removal.remove([path], sessionSignal);
      throw err;
    }
  }

  /** Our node exists (its name is this attempt's, created only in `place`'s session): take it. */
  private adoptInPlace(name: string, place: InPlaceOf, giveUp: AbortSignal | undefined, owner: AbortSignal): Entered {
    giveUp?.throwIfAborted();
    const listing = this.session.getChildren(this.dir);
    listing.catch(noop);
    return this.inPlace(name, place, listing, owner);
  }

  private inPlace(name: string, place: InPlaceOf, listing: Promise<Listing>, ownerSignal: AbortSignal): Entered {
    return { names: [name], czxid: place.fencingToken, owner: place.sessionId, ownerSignal, listing };
  }

  private async statOf(path: string): Promise<Stat> {
    const stat = await this.session.exists(path);
    if (!stat) throw new Restart(`our node ${path} vanished`);
    return stat;
  }

  /**
   * After a lost create reply: the node(s) that create made, if it was applied. Decided from an
   * up-to-date view (sync first: a member we reconnected to may not have applied our create yet)
   * and by owner: only nodes of the current session are ours to adopt. Nodes with our prefix
   * from an earlier session of this acquisition are deleted (they would go with that session,
   * but meanwhile they hold a place in the queue); so is an incomplete set of ours.
   */
  private async findOurs(prefix: string, count: number, owner: AbortSignal): Promise<Omit<Entered, 'ownerSignal'> | undefined> {
    await this.session.sync(this.dir);
    const listing = await this.session.getChildren(this.dir).catch((err: unknown) => {
      if (err instanceof NoNodeError) return { children: [] as string[] };
      throw err;
    });
    const names = listing.children.filter((c) => c.startsWith(prefix));
    if (names.length === 0) return undefined;
    const stats = await Promise.all(names.map((n) => this.session.exists(joinPath(this.dir, n))));
    const sessionId = this.session.sessionId;
    const ours = names.filter((_, i) => stats[i]?.ephemeralOwner === sessionId);
    const stale = names.filter((n, i) => stats[i] && !ours.includes(n));
    await this.removal.remove(stale.map((n) => joinPath(this.dir, n)), owner);
    if (ours.length === 0) return undefined;
    if (ours.length !== count) {
      await this.removal.remove(ours.map((n) => joinPath(this.dir, n)), owner);
      return undefined;
    }
    const stat = stats[names.indexOf(ours[0] as string)] as Stat;
    // Sent after the deletes: the listing does not show the stale nodes.
    const fresh = this.session.getChildren(this.dir);
    fresh.catch(noop);
    return { names: sortChildren(ours, this.spec.kinds).map((n) => n.name), czxid: stat.czxid, owner: sessionId, listing: fresh };
  }
}

/** The lock a node in its place stood for is lost. */
export function placeLost(place: InPlaceOf, why: string, cause?: unknown): LockLostError {
  return new LockLostError(`cannot take the place of ${place.path}: ${why}, so the lock it stood for is lost; nothing was acquired (nor left behind): acquire the lock again`, { path: place.path, cause });
}
