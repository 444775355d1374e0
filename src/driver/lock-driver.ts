/**
 * The lock driver: the one place that knows sequential-node mechanics. Every recipe acquires
 * through it with its own lock name and predicate.
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { Stat, WatchEvent } from '../client/types.js';
import { joinPath } from '../client/validate.js';
import { ZK_CONNECTION_LOSS } from '../client/error-map.js';
import { isConnectedState } from '../client/lifecycle.js';
import { ConnectionLossError, LockLostError, NoNodeError, OperationTimeoutError, SessionExpiredError } from '../errors.js';
import { Background, raceAbort, within } from '../util/abort.js';
import { linkSignals, onAbort } from '../util/signals.js';
import { graceFor } from './grace.js';
import { placeLost, QueueEntry, type Entered } from './enter.js';
import { OwnNodes, type OwnWatch } from './own-nodes.js';
import { NodeRemoval, type Removal } from './release.js';
import { Restart } from './watch-events.js';
import { TurnWait } from './wait.js';
export { MARK_MIN_CHILDREN } from './wait.js';
import { heads } from './heads.js';
import { localNodes } from './local-nodes.js';
import { protectedPrefix, sortChildren, type QueueNode } from './names.js';
import type { Predicate } from './predicates.js';
import type { Acl } from '../client/types.js';

/** What a recipe tells the driver about its nodes. */
export interface LockSpec {
  /** Lock name of the nodes we create, e.g. `lock-`. */
  readonly lockName: string;
  /** Every lock name that takes part in ordering in the directory (ours included). */
  readonly kinds: readonly string[];
  /** Decides whether we hold, or what to wait on. */
  readonly predicate: Predicate;
  /**
   * The kind of node whose holder may insert a node in its own place, ahead of waiters (a
   * read-write lock downgrade puts a read node where the write node stands): a property of the
   * directory's layout, so every side of it names it. Where such a node went, a node may stand
   * in its place that our snapshot does not show: we are not the head then (unless this process
   * knows that holder never inserted), and with `insertionBlocks` a grant on that snapshot
   * re-lists the directory first instead of trusting it. Sound because the insertion is checked
   * against that node in its own transaction: it happens before the node's deletion, never after.
   */
  readonly insertingKind?: string;
  /**
   * Whether a node inserted in a removed node's place (see `insertingKind`) can keep us from
   * holding (a writer: yes, the read node of a downgrade excludes it; a reader: no). Default true.
   */
  readonly insertionBlocks?: boolean;
  /** Data for the directory node when the driver has to create it. */
  readonly dirData?: Buffer;
  /**
   * ACL of every node the driver creates (ours and the directories above); undefined: the
   * session's `aclProvider` decides.
   */
  readonly acl?: readonly Acl[] | undefined;
  /**
   * Only with a predicate under which a holder has nothing ahead of it (`windowPredicate(1)`):
   * in a long directory ({@link MARK_MIN_CHILDREN}), {@link LockDriver.release} of a grant that
   * waited leaves the released node's name as the directory's data, in the deletion's
   * transaction. A waiter whose predecessor went reads that small node instead of listing the
   * directory: if it names the predecessor, the predecessor held, so nothing is ahead of us.
   * The mark replaces the directory's data: a recipe that also records `dirData` there reads a
   * mark as its own record (a mutex: see `layouts.ts`).
   */
  readonly handoff?: boolean;
}

/** One acquisition request. */
export interface AcquireRequest {
  /** 0: decide once, never wait. Undefined: wait without a time limit. */
  readonly timeoutMs?: number;
  /** Aborting gives up (cleanly) and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** How many adjacent nodes (leases) to take at once. Default 1. */
  readonly count?: number;
  /** Node data: the participant id. */
  readonly data: Buffer;
  /** Also watch our own node, so its deletion by anyone is noticed (one more read). */
  readonly watchOwnNode: boolean;
  /**
   * Take the place of a node we hold (a read-write lock downgrade puts a read node where its
   * write node stands): our node is a plain ephemeral one carrying that node's sequence number.
   * Valid only while that node exists in its session, so the server checks it in the create's
   * own transaction, and nothing is retried in another session: if it is gone, the acquisition
   * rejects with {@link LockLostError}.
   */
  readonly inPlaceOf?: InPlaceOf;
  /**
   * Called with the directory's Stat and children on the first listing after our node was
   * created (semaphores check its data, and that no other layout shares the path).
   */
  readonly onListing?: (dirStat: Stat, children: readonly string[]) => Promise<void> | void;
  /**
   * Called on each listing with how many nodes are ahead of our (first) node, its path and the
   * first node's path: for traces and progress reports only (must not throw).
   */
  readonly onPlace?: (position: number, nodePath: string, headPath: string) => void;
}

/** A held node whose place a new node takes (a {@link LockHandle} is one). */
export interface InPlaceOf {
  /** Full path of the held node. */
  readonly path: string;
  /** Session that owns it. */
  readonly sessionId: bigint;
  /** Its czxid: the new node stands in its place in grant order, so it carries this token. */
  readonly fencingToken: bigint;
  /** False once released or lost. */
  readonly isHeld: boolean;
}

/** Nodes we hold, and the session they belong to. */
export interface HeldNodes {
  /** Full paths of our nodes, in queue order. */
  readonly paths: readonly string[];
  /** The fencing token: czxid of our node(s), or of the node whose place we took. */
  readonly czxid: bigint;
  /** Session id the nodes belong to. */
  readonly sessionId: bigint;
  /** Aborts when that session ends. */
  readonly sessionSignal: AbortSignal;
  /** Settles when our own node changes or is deleted (when watched). */
  readonly ownWatch: Promise<WatchEvent> | undefined;
  /** Aborts the own-node watch. */
  readonly ownWatchAbort: AbortController | undefined;
  /**
   * Whether a release should leave the handoff mark (see {@link LockSpec.handoff}): only after
   * a wait (a holder that was the head of its first listing is the head of every later
   * snapshot too, so its successor needs no mark), and only when the directory was long when
   * last seen (at least {@link MARK_MIN_CHILDREN} children): the mark makes the release a
   * two-op transaction, worth it only where it spares the successor a long listing.
   */
  readonly markRelease: boolean;
}

/** Why the watches of our nodes are dropped when we give up without an error (nobody listens then). */
const GAVE_UP = new Error('the acquisition gave up');

/**
 * The handle's control of its own-node watch: aborting it drops the watches of the wait (and,
 * through its signal, the handle's later ones).
 */
function stopper(own: OwnNodes): AbortController {
  const controller = new AbortController();
  onAbort(controller.signal, (reason) => own.stop(reason));
  return controller;
}

/**
 * Acquires and releases lock nodes in one directory. Stateless between calls: everything about
 * one acquisition lives in that call.
 */
export class LockDriver {
  private readonly background = new Background();
  /** Deletes our nodes (and leaves the handoff mark). */
  private readonly removal: NodeRemoval;
  /** Creates our nodes. */
  private readonly entry: QueueEntry;
  /** The directory's creation, while on its way. */
  private making: Promise<void> | undefined;
  /** Waits for our turn. */
  private readonly waits: TurnWait;

  constructor(
    private readonly session: ZkSession,
    /** The lock directory. */
    readonly dir: string,
    private readonly spec: LockSpec,
  ) {
    this.removal = new NodeRemoval(session, dir, spec.handoff === true, (path, how) => this.ended(path, how));
    this.waits = new TurnWait(session, dir, spec, (path) => this.key(path));
    this.entry = new QueueEntry(session, dir, spec, this.removal, () => this.makeDir(), (path) => heads.forget(this.key(path)));
  }

  /**
   * Enters the queue and waits for the predicate to grant. Resolves to the held nodes, or null
   * when `timeoutMs` ran out (or was 0 and we do not hold at once). Every wait inside, reconnects
   * and lookups after a lost reply included, ends with the deadline or `signal`.
   *
   * On timeout, abort or error our nodes are deleted: before this settles when connected (within
   * a short grace, see `grace.ts`); in an outage this settles at once and the deletion goes on in the
   * background until the nodes are gone or their session is (a node whose create reply was lost
   * is found by its uuid once reconnected). Nothing is left behind.
   */
  async acquire(req: AcquireRequest): Promise<HeldNodes | null> {
    const prefix = protectedPrefix();
    // Before anything is sent: a request the session would refuse (too large) is refused now.
    this.check(req, prefix);
    // With a deadline, this wait's own signal (the caller's, or the recipe's close signal, which
    // many waits share, carries one subscription of it, gone when this settles). Without one,
    // the caller's signal itself: everything here subscribes through onAbort (one listener per
    // signal however many wait), and an acquisition is not worth two more allocations.
    const link = req.timeoutMs !== undefined && req.timeoutMs > 0 ? linkSignals([req.signal], req.timeoutMs) : undefined;
    const giveUp = link ? link.signal : req.signal;
    try {
      for (;;) {
        giveUp?.throwIfAborted();
        // Create only while connected: a create queued in an outage would go out long after.
        // After LOST with renewal off this rejects (SessionExpiredError).
        // Connected already (the common case): no wait, so the create goes out in this tick.
        if (!isConnectedState(this.session.state)) await this.connected(req.timeoutMs === 0, giveUp);
        // Awaited in a try, not with a .catch closure: nothing more is kept while it waits.
        try {
          return await this.attempt(req, prefix, giveUp);
        } catch (err) {
          const restart = err instanceof Restart || (err instanceof SessionExpiredError && this.session.renewsOnLoss && !this.session.closed);
          // A node in another's place is valid only beside it, in its session: never start over.
          if (req.inPlaceOf && (restart || err instanceof SessionExpiredError)) throw placeLost(req.inPlaceOf, err instanceof Restart ? err.message : 'its session ended', err);
          // The session was lost (or our node deleted) mid-way: start over in the current session.
          if (!restart) throw err;
        }
      }
    } catch (err) {
      if (link?.timedOut && !req.signal?.aborted) return null;
      throw err;
    } finally {
      link?.dispose();
    }
  }

  /**
   * Throws the {@link InvalidArgumentError} the session would refuse `req`'s create with (a
   * multi-lease transaction over the packet limit), before anything is sent.
   */
  check(req: AcquireRequest, prefix: string = protectedPrefix()): void {
    const count = req.count ?? 1;
    if (count > 1 && !req.inPlaceOf) this.session.validateOps(this.entry.leaseOps(prefix, count, req.data));
  }

  /**
   * Waits until connected, within `giveUp`. A try-once acquisition ("if free right now") waits
   * at most the session's connect timeout, then rejects with {@link ConnectionLossError}
   * (`sent: false`), as a session call does: it never waits for an outage to end.
   */
  private async connected(tryOnce: boolean, giveUp: AbortSignal | undefined): Promise<void> {
    if (!tryOnce) return this.session.waitConnected({ signal: giveUp });
    const ms = this.session.connectTimeoutMs;
    try {
      await this.session.waitConnected({ signal: giveUp, timeoutMs: ms });
    } catch (err) {
      if (!(err instanceof OperationTimeoutError)) throw err;
      throw new ConnectionLossError('CONNECTION_LOSS', `acquiring ${this.dir} once: no connection to ${this.session.connectString} within the connect timeout (${ms} ms); nothing was sent`, {
        zkCode: ZK_CONNECTION_LOSS,
        op: 'create',
        path: this.dir,
        sent: false,
        cause: err,
      });
    }
  }

  private async attempt(req: AcquireRequest, prefix: string, giveUp: AbortSignal | undefined): Promise<HeldNodes | null> {
    const count = req.count ?? 1;
    const entering = req.inPlaceOf ? this.entry.enterInPlace(req, req.inPlaceOf, prefix, giveUp) : this.entry.enter(req, prefix, count, giveUp);
    let entered: Entered;
    try {
      entered = await raceAbort(entering, giveUp);
    } catch (err) {
      // Given up while our node was on its way: it may still be created, or found after a lost
      // reply; delete it then. `enter` ends by itself, at the latest with its session.
      if (giveUp?.aborted) await this.abandonNodes(entering.then((e) => ({ paths: this.pathsOf(e), owner: e.ownerSignal })));
      throw err;
    }
    const paths = this.pathsOf(entered);
    // The node must belong to the session we now rely on: if the session was renewed while the
    // create was on its way, start over rather than tie the lock to the wrong session.
    const sessionSignal = this.session.signal;
    const sessionId = this.session.sessionId;
    if (entered.owner !== sessionId || sessionSignal.aborted) {
      await this.abandon(paths, entered.ownerSignal);
      throw new Restart(`our node ${paths[0]} belongs to session 0x${entered.owner.toString(16)}, not the current one`);
    }
    // Waiters of this process follow our nodes here, without a server watch.
    const keys = paths.map((p) => this.key(p)); // one string each, kept by both registries
    for (const key of keys) localNodes.add(key, entered.ownerSignal);
    const ownNodes = new OwnNodes(paths, this.ownWatcher);
    // Sent right behind the create's reply, so it costs no extra round trip on the way in; a
    // try-once acquisition sets it only if it holds. Without `watchOwnNode` our nodes are watched
    // only when a grant may skip the listing (see waitForTurn).
    if (req.watchOwnNode && req.timeoutMs !== 0) ownNodes.watchFirst();
    try {
      const turn = await this.waits.waitForTurn(entered, count, req, giveUp, ownNodes);
      if (turn === 'no') {
        await this.letGo(paths, entered.ownerSignal, ownNodes, GAVE_UP);
        return null;
      }
      // Told by this process, not by the server: hand out a lock only with a live session,
      // the one our node belongs to.
      if (!isConnectedState(this.session.state)) await this.session.waitConnected({ signal: giveUp });
      if (entered.ownerSignal.aborted) throw new Restart(`the session of our node ${paths[0]} ended while we were granted`);
      // A try-once acquisition that holds watches its node only now.
      if (req.watchOwnNode) ownNodes.watchFirst();
      // Nodes are not ours alone: a grant without a listing rests on our own nodes' watches
      // (grant.ts, own-nodes.ts).
      const standing = ownNodes.stand(giveUp);
      const stand = standing instanceof Promise ? await standing : standing;
      if (!stand) throw new Restart(`a node of ours in ${this.dir} was deleted or changed by someone else while we waited`);
      // Before anyone can see our node go: a successor of this process that is told of its
      // deletion then holds without a listing.
      if (turn.head) heads.record(keys[0] as string, entered.ownerSignal);
      return {
        paths,
        czxid: entered.czxid,
        sessionId,
        sessionSignal,
        // Without `watchOwnNode` the wait's own watch stays until our release fires it (cheaper
        // than a removal now); nothing listens to it.
        ownWatch: req.watchOwnNode ? stand.changed : undefined,
        ownWatchAbort: req.watchOwnNode ? stopper(ownNodes) : undefined,
        markRelease: turn.release === 'mark',
      };
    } catch (err) {
      await this.letGo(paths, entered.ownerSignal, ownNodes, err);
      throw err;
    }
  }

  /**
   * Deletes our nodes, then drops their watches (the deletion fires them, so no watch removal
   * is needed). A method, not a closure of `attempt`: that frame waits long, once per waiter.
   */
  private letGo(paths: readonly string[], owner: AbortSignal, ownNodes: OwnNodes, why: unknown): Promise<void> {
    return this.abandonNodes(Promise.resolve({ paths, owner }), () => ownNodes.stop(why));
  }

  private pathsOf(entered: Entered): string[] {
    return entered.names.map((n) => joinPath(this.dir, n));
  }

  /** {@link watchOwn} of this driver, made once: every acquisition's `OwnNodes` is given it. */
  private readonly ownWatcher = (path: string): Promise<OwnWatch> => this.watchOwn(path);

  /** Watches our node at `path`; it is gone (deleted by someone): start over. */
  private async watchOwn(path: string): Promise<OwnWatch> {
    try {
      return await this.session.dataWatch(path);
    } catch (err) {
      if (err instanceof NoNodeError) throw new Restart(`our node ${path} was deleted`);
      throw err;
    }
  }

  /**
   * Creates the directory, as containers (Curator's layout: the server deletes them once empty);
   * acquisitions that found it missing at once share one mkdirp.
   */
  private makeDir(): Promise<void> {
    this.making ??= this.session.mkdirp(this.dir, { data: this.spec.dirData, container: true, acl: this.spec.acl }).finally(() => {
      this.making = undefined;
    });
    return this.making;
  }

  /**
   * Deletes our nodes, retrying through connection loss until they are gone or their session is
   * (`owner` aborted: nothing is sent then). Resolves to whether this call deleted them all
   * (see {@link NodeRemoval.remove}).
   */
  remove(paths: readonly string[], owner: AbortSignal): Promise<boolean> {
    return this.removal.remove(paths, owner);
  }

  /**
   * Deletes the node(s) of a grant, with the handoff mark when the grant asks for it (see
   * {@link NodeRemoval.release}).
   */
  release(paths: readonly string[], owner: AbortSignal, withMark = true): Promise<boolean> {
    return this.removal.release(paths, owner, withMark);
  }

  /**
   * Deletes our nodes like {@link remove}, for a caller that gives up and must not wait for an
   * outage to end: waits while connected (at most a short grace, see `grace.ts`), then lets the
   * deletion go on in the background ({@link idle} waits for it).
   */
  abandon(paths: readonly string[], owner: AbortSignal): Promise<void> {
    return this.abandonNodes(Promise.resolve({ paths, owner }));
  }

  /** Like {@link abandon}, for nodes still on their way; `then` runs after the deletion. */
  private abandonNodes(nodes: Promise<{ paths: readonly string[]; owner: AbortSignal }>, then?: () => void): Promise<void> {
    const work = this.background.track(nodes.then((n) => this.remove(n.paths, n.owner)).finally(then));
    return within(work, graceFor(this.session));
  }

  /**
   * This process's name for a node: its path under the session's connect string. The same node
   * through another connect string (another chroot or spelling of the ensemble) has another
   * name, so only sessions of one connect string share what they know of their nodes.
   */
  private key(path: string): string {
    return `${this.session.connectString}\n${path}`;
  }

  /** Tells this process's facts and followers that our node at `path` is gone (or may be). */
  private ended(path: string, how: Removal): void {
    const key = this.key(path);
    heads.released(key);
    localNodes.end(key, how === 'ended' ? 'session-ended' : 'deleted');
  }

  /** Resolves once the deletions left running by callers that gave up have ended. */
  idle(): Promise<void> {
    return this.background.idle();
  }

  /** Lists the queue, sorted (for participants()). */
  async queue(signal?: AbortSignal): Promise<QueueNode[]> {
    try {
      return sortChildren((await this.session.getChildren(this.dir, signal ? { signal } : {})).children, this.spec.kinds);
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
  }
}



