/**
 * {@link TurnWait}: steps 2-5 of DESIGN.md's acquisition, waiting for our turn in a lock queue:
 * the predicate on a listing, watches on the nodes it names (or, for nodes of our own session,
 * following them in memory), and the grant decision when they go (`grant.ts`).
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { ChildrenResult, WatchEvent } from '../client/types.js';
import type { FireListener } from '../client/one-shot.js';
import { joinPath } from '../client/validate.js';
import { NoNodeError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import { SmallMap } from '../util/small-map.js';
import type { Entered, Listing } from './enter.js';
import { holdsWithoutListing } from './grant.js';
import { heads } from './heads.js';
import { localNodes } from './local-nodes.js';
import type { AcquireRequest, LockSpec } from './lock-driver.js';
import { positionIn, sortChildrenShared, type QueueNode } from './names.js';
import type { OwnNodes } from './own-nodes.js';
import { Restart, WatchEvents } from './watch-events.js';

/**
 * A node waited on, and its place in the listing it was chosen from. Not its uuid: nothing
 * here reads it, and every waiter would keep a copy.
 */
interface Watched extends Omit<QueueNode, 'uuid'> {
  readonly pos: number;
}

/** What a waiter keeps of a listing: the nodes it waits on, and when their deletion promotes it. */
interface Waiting {
  readonly nodes: readonly Watched[];
  readonly holdsAfter: number | undefined;
  /** How many nodes were ahead of ours in that listing. */
  readonly ahead: number;
}

/** What the last listing (or mark) showed. */
interface View {
  /** Children in the directory. */
  size: number;
  /** Nothing was ahead of our node. */
  head: boolean;
  /** Told our place on each listing (see {@link AcquireRequest.onPlace}). */
  readonly place: AcquireRequest['onPlace'];
}

/** How a wait ended: not granted (a try-once), or granted (and whether we are the head). */
export type Turn = 'no' | { readonly release: 'plain' | 'mark'; readonly head: boolean };

/**
 * A watch of one waited-on node: a server watch (the session's, dropped with `stop`), or
 * (`local`) a node of this process followed here.
 */
interface WatchRecord {
  readonly changed: Promise<WatchEvent>;
  readonly local?: boolean;
  /** A server watch's synchronous listener (see {@link EarlyListing}). */
  onFire?: FireListener | undefined;
  stop(reason: unknown): void;
}

/** Whether a wait has ended (a watch whose read was still on its way then drops itself). */
interface Scope {
  ended: boolean;
}

/**
 * The directory length from which a holder's release leaves the handoff mark: below it, the
 * listing a successor makes instead costs less than the mark's heavier transaction.
 */
export const MARK_MIN_CHILDREN = 32;

/**
 * Why a wait drops its watches (it ended): their `changed` rejects with it, and nobody listens
 * then. Shared: a fresh error (or abort()'s DOMException) would build a stack every time.
 */
const WAIT_ENDED = new Error('the wait ended');

/** Waits of one lock directory's acquisitions. */
export class TurnWait {
  /** Children in the directory when a wait of this driver last looked (see afterWait). */
  private lastSize = 0;

  constructor(
    private readonly session: ZkSession,
    private readonly dir: string,
    private readonly spec: LockSpec,
    /** This process's name for a node (see LockDriver's key). */
    private readonly key: (path: string) => string,
  ) {}

  /**
   * Steps 2-5 of DESIGN.md: evaluate the predicate on the sorted listing; wait on what it names
   * with getData watches. Of a listing a waiter keeps only those nodes and how many of them must
   * go for it to hold (`holdsAfter`): nodes only ever leave the part of the queue ahead of ours,
   * so by the predicate's monotonicity that grant is safe without another listing (a mutex
   * waiter whose predecessor was the head takes the lock on one notification, with no read);
   * so is a grant on the deletion of a node this process knew was the head (the predicates'
   * head rule, `heads.ts`); any other deletion lists again. So a waiter's memory does not grow
   * with the queue.
   */
  async waitForTurn(
    entered: Entered,
    count: number,
    req: AcquireRequest,
    giveUp: AbortSignal | undefined,
    own: OwnNodes,
  ): Promise<Turn> {
    const ours = entered.names[0] as string;
    // Listings are read only in the helpers below: a suspended async function keeps every value
    // it ever awaited in its registers, and this one waits long.
    const view: View = { size: 0, head: false, place: req.onPlace };
    let waiting = await this.firstDecision(entered, ours, count, req, giveUp, view);
    // Granted by the listing sent with our create, before anything was watched. The head of our
    // first listing needs no fact (a successor's listing shows it first), unless it is of the
    // kind that may insert a node in its place: the fact tells its successors that it did not.
    if (waiting === undefined) return { release: 'plain', head: view.head && this.spec.lockName === this.spec.insertingKind };
    // Not a Map: its smallest table is about 300 bytes, kept as long as we wait, for a node or two.
    const watches = new SmallMap<string, WatchRecord>();
    // Ended when this wait ends: a watch whose read was still on its way then removes itself.
    const scope: Scope = { ended: false };
    const events = new WatchEvents();
    events.followOwnAll(own.started);
    // Once we wait: our node goes with its session, so the wait ends then, as a server watch's
    // end would (a node of this process followed in memory does not end with our session).
    let granted = false;
    let first = true; // still on the listing sent with our create
    try {
      for (;;) {
        // Granted by a later listing (the first one was decided above).
        if (waiting === undefined) {
          granted = true;
          return { release: this.afterWait(view), head: view.head };
        }
        if (req.timeoutMs === 0) return 'no';
        if (first) {
          entered.ownerSignal.throwIfAborted();
          events.endWith(entered.ownerSignal);
        }
        first = false;
        // A grant without a listing rests on our own nodes' watches (grant.ts): set them,
        // pipelined with the watches below, once this listing allows such a grant. Any event of
        // them restarts the wait.
        if (!own.allWatched && this.mayHoldUnlisted(waiting, view)) events.followOwnAll(own.watchAll());
        const names = waiting.nodes.map((n) => n.name);
        dropAllBut(watches, names);
        // A deletion that certainly sends us to list again lists at once (see EarlyListing).
        const early = new EarlyListing(this, waiting, view);
        // An array, not a Set, in this long-kept frame: it holds a node or two.
        const gone: string[] = [];
        for (;;) {
          const missing = await raceAbort(this.watchAll(without(names, gone), watches, scope, entered.ownerSignal), giveUp);
          events.follow(watches);
          for (const [, w] of watches) if (!w.local) w.onFire = early;
          addNew(gone, missing);
          if (missing.length === 0) {
            const event = await events.next(names, giveUp);
            watches.delete(event.name);
            // Changed, not deleted: watch it again.
            if (event.type !== 'NODE_DELETED') continue;
            if (!gone.includes(event.name)) gone.push(event.name);
          }
          break;
        }
        // The decision in a helper: its values are not kept in this frame, which waits long.
        const turn = await this.afterGone(waiting, new Set(gone), own, events, giveUp, view);
        if (turn) {
          granted = true;
          return turn;
        }
        // Others ahead may have left unseen (we only watch a few): one listing beats probing
        // them one by one.
        waiting = await this.relist(ours, count, giveUp, view, early.take());
      }
    } finally {
      endWait(events, scope, watches, granted);
    }
  }

  /**
   * Whether the nodes of `waiting` that are `gone` grant us without a listing (see grant.ts):
   * the turn, or undefined to list again.
   */
  private async afterGone(waiting: Waiting, gone: ReadonlySet<string>, own: OwnNodes, events: WatchEvents, giveUp: AbortSignal | undefined, view: View): Promise<Turn | undefined> {
    const { nodes, holdsAfter } = waiting;
    // A removed node's holder may have inserted one in its place (a downgrade): list first,
    // unless it was a head of ours, which forgets that fact before any insertion.
    const known = new Set(nodes.filter((n) => gone.has(n.name) && heads.knows(this.key(joinPath(this.dir, n.name)))).map((n) => n.name));
    const inserted = this.spec.insertionBlocks !== false && nodes.some((n) => gone.has(n.name) && n.kind === this.spec.insertingKind && !known.has(n.name));
    // In a long directory our predecessor's release most likely named it (see afterWait):
    // read that instead of the listing.
    const facts = { gone: gone.size, holdsAfter, knownHeads: known.size, inserted, ownWatched: own.allWatched };
    const watchOwnNow = async (): Promise<void> => {
      const started = own.watchAll();
      events.followOwnAll(started);
      await raceAbort(Promise.all(started), giveUp);
    };
    const askMark = this.markMayName(nodes, view) ? () => this.handedOver(nodes, giveUp, view, known) : undefined;
    if (!(await holdsWithoutListing(facts, askMark, watchOwnNow))) return undefined;
    return { release: this.afterWait(view), head: headAfter(waiting, gone, known, this.spec.insertingKind) };
  }

  /** The decision on the listing sent with our create (after the recipe's `onListing` check). */
  private async firstDecision(entered: Entered, ours: string, count: number, req: AcquireRequest, giveUp: AbortSignal | undefined, view: View): Promise<Waiting | undefined> {
    const listing = entered.listing as Promise<Listing>;
    entered.listing = undefined;
    const { children, stat } = await raceAbort(listing, giveUp);
    view.size = this.lastSize = children.length;
    await raceAbort(Promise.resolve(req.onListing?.(stat, children)), giveUp);
    return this.decide(children, ours, count, view);
  }

  /**
   * Whether a deletion of `waiting`'s nodes may grant us without a listing, so our own nodes are
   * best watched now (pipelined, at no cost in time): the predicate says how many must go, or a
   * node is of this process (a head fact may be recorded for it), or a long directory's handoff
   * mark may name it. A guess that misses costs a round trip at the grant (our nodes are read
   * then), never a wrong grant. False means that a deletion among them certainly sends us to
   * list again (see afterGone): {@link EarlyListing} then sends that listing at once.
   */
  mayHoldUnlisted(waiting: Waiting, view: View): boolean {
    if (waiting.holdsAfter !== undefined) return true;
    if (this.markMayName(waiting.nodes, view)) return true;
    return waiting.nodes.some((n) => {
      const key = this.key(joinPath(this.dir, n.name));
      return localNodes.has(key) || heads.knows(key);
    });
  }

  /** Whether a handoff mark may name the node we waited on: one node, in a long directory. */
  private markMayName(nodes: readonly Watched[], view: View): boolean {
    return this.spec.handoff === true && nodes.length === 1 && this.long(view);
  }

  /**
   * Whether the one node we waited on left as a holder: its release named it in the directory's
   * data. Asked only in a long directory, where such a release leaves the mark (see afterWait).
   * A holder had nothing ahead of it: on a yes, `known` gets the node (a head gone).
   */
  private async handedOver(nodes: readonly Watched[], giveUp: AbortSignal | undefined, view: View, known: Set<string>): Promise<boolean> {
    const node = nodes[0];
    if (node === undefined || !this.markMayName(nodes, view)) return false;
    try {
      const { data, stat } = await raceAbort(this.session.getData(this.dir), giveUp);
      view.size = this.lastSize = stat.numChildren;
      const held = data.length === Buffer.byteLength(node.name) && data.toString('utf8') === node.name;
      if (held) known.add(node.name);
      return held;
    } catch (err) {
      if (err instanceof NoNodeError) return false;
      throw err;
    }
  }

  /** How a grant after a wait is released: see {@link HeldNodes.markRelease}. */
  private afterWait(view: View): 'plain' | 'mark' {
    return this.spec.handoff && this.long(view) ? 'mark' : 'plain';
  }

  /**
   * Whether the directory is long enough for the handoff mark: by the longer of our own last
   * look and the latest look of any wait of this driver (a wait granted in memory read nothing
   * since it entered, when the directory may have been far shorter than it is now).
   */
  private long(view: View): boolean {
    return Math.max(view.size, this.lastSize) >= MARK_MIN_CHILDREN;
  }

  /** A listing of the directory, sent now (not at the end of this turn). */
  listNow(): Promise<ChildrenResult> {
    const listing = this.session.getChildren(this.dir);
    this.session.flushWrites();
    return listing;
  }

  /** The decision on a fresh listing (`sent`: one already on its way, see {@link EarlyListing}). */
  private async relist(ours: string, count: number, giveUp: AbortSignal | undefined, view: View, sent?: Promise<ChildrenResult>): Promise<Waiting | undefined> {
    const { children } = await raceAbort(sent ?? this.session.getChildren(this.dir), giveUp);
    view.size = this.lastSize = children.length;
    return this.decide(children, ours, count, view);
  }

  /** The predicate on a listing: undefined when we hold, else what to wait on. */
  private decide(children: readonly string[], ours: string, count: number, view: View): Waiting | undefined {
    const queue = sortChildrenShared(children, this.spec.kinds);
    const index = positionIn(queue, ours);
    if (index < 0) throw new Restart(`our node ${ours} is gone from ${this.dir}`);
    view.head = index === 0;
    view.place?.(index, joinPath(this.dir, ours), joinPath(this.dir, (queue[0] as QueueNode).name));
    const decision = this.spec.predicate(queue, index, count);
    if (decision.hold) return undefined;
    // Copies: a name sliced from the listing would keep the whole reply alive.
    const nodes = decision.waitOn.map((name) => {
      const pos = positionIn(queue, name);
      const n = queue[pos] as QueueNode;
      return { name: copy(n.name), kind: n.kind, seq: n.seq, pos };
    });
    return { nodes, holdsAfter: decision.holdsAfter, ahead: index };
  }

  /**
   * Sets a getData watch on each name not yet watched (pipelined). Returns the names already
   * gone. Every read is settled before this returns or throws: a read answered after the caller
   * gave up would leave a listener and a server watch nobody drops. On failure the watches this
   * call set are dropped, and the first error is thrown; so is a watch set after `scope` ended
   * (the wait ended meanwhile).
   */
  private async watchAll(names: readonly string[], watches: SmallMap<string, WatchRecord>, scope: Scope, owner: AbortSignal): Promise<string[]> {
    const todo = names.filter((name) => !watches.has(name));
    const results = await Promise.allSettled(
      todo.map(async (name): Promise<WatchRecord> => {
        const path = joinPath(this.dir, name);
        // A node of our own session: we are told here when it goes, with no request.
        const followed = localNodes.follow(this.key(path), path, owner);
        if (followed) return followed;
        return this.session.dataWatch(path);
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected' && !(r.reason instanceof NoNodeError));
    const gone: string[] = [];
    for (const [i, r] of results.entries()) {
      const name = todo[i] as string;
      if (r.status === 'rejected') {
        // Gone already: no watch was left on the server (getData, not exists).
        if (r.reason instanceof NoNodeError) gone.push(name);
      } else if (failed || scope.ended) r.value.stop(WAIT_ENDED);
      else watches.set(name, r.value);
    }
    if (failed) throw failed.reason;
    return gone;
  }
}

/**
 * The listing a waiter sends from the notification of a deletion that sends it to list again
 * (see `TurnWait.mayHoldUnlisted`), in that notification's own handling, not once the wait's
 * promise reactions come round to it: on the path of every handoff between processes (a failover's
 * notification to its listing's write: 24 µs, was 36).
 * Sent after the notification was read, so it shows that deletion, as the wait's own listing
 * would: the same request, only sooner. One per wait step; a wait that ends (or is granted on a
 * fact learnt meanwhile) before it reads it leaves it unread: a read, it needs no cleanup.
 */
class EarlyListing implements FireListener {
  private listing: Promise<ChildrenResult> | undefined;

  constructor(
    private readonly wait: TurnWait,
    private readonly waiting: Waiting,
    private readonly view: View,
  ) {}

  /** Decided when the watch fires, on the facts of then (a directory seen long since, a head fact). */
  fired(event: WatchEvent): void {
    if (this.listing || event.type !== 'NODE_DELETED' || this.wait.mayHoldUnlisted(this.waiting, this.view)) return;
    this.listing = this.wait.listNow();
    this.listing.catch(noop);
  }

  /** The listing sent, if any (once). */
  take(): Promise<ChildrenResult> | undefined {
    const listing = this.listing;
    this.listing = undefined;
    return listing;
  }
}

const noop = (): void => undefined;

/**
 * Whether a grant after these deletions leaves nothing ahead of us: every node that stood
 * between us and the head of the listing, or a head among `known`, is among those watched and
 * gone, and none of those may have left a node in its place (`insertingKind`, unless known:
 * its fact is forgotten before any insertion). Otherwise nodes never join ahead of ours.
 */
function headAfter(waiting: Waiting, gone: ReadonlySet<string>, known: ReadonlySet<string>, insertingKind: string | undefined): boolean {
  const after = (pos: number): Watched[] => waiting.nodes.filter((n) => n.pos > pos && gone.has(n.name));
  const clear = (pos: number): boolean => {
    const left = after(pos);
    return left.length === waiting.ahead - pos - 1 && left.every((n) => n.kind !== insertingKind || known.has(n.name));
  };
  return clear(-1) || waiting.nodes.some((n) => known.has(n.name) && clear(n.pos));
}


/** Stops the watch of `name` and forgets it. */
function dropWatch(watches: SmallMap<string, WatchRecord>, name: string): void {
  watches.get(name)?.stop(WAIT_ENDED);
  watches.delete(name);
}

/** Drops the watches of `watches` on nodes not in `names`. */
function dropAllBut(watches: SmallMap<string, WatchRecord>, names: readonly string[]): void {
  for (const name of watches.keys()) if (!names.includes(name)) dropWatch(watches, name);
}

/** Adds to `into` the names of `names` it does not hold yet. */
function addNew(into: string[], names: readonly string[]): void {
  for (const name of names) if (!into.includes(name)) into.push(name);
}

/**
 * Ends a wait: its events and scope, and its watches. Granted: the rest of a semaphore's window
 * are nodes held by others, deleted when they release; their watches then fire unheard, which
 * costs the server less than a removal request each now. Given up: nothing of ours may linger,
 * so they are removed. Nodes of this process followed here are dropped either way (only memory).
 */
function endWait(events: WatchEvents, scope: Scope, watches: SmallMap<string, WatchRecord>, granted: boolean): void {
  events.close();
  scope.ended = true;
  for (const [name, w] of [...watches]) if (!granted || w.local) dropWatch(watches, name);
}

/** `names` but those in `gone`. */
function without(names: readonly string[], gone: readonly string[]): string[] {
  return names.filter((n) => !gone.includes(n));
}

/** A flat copy of `s`: V8 keeps a sliced string's parent alive. */
function copy(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}
