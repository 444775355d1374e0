/**
 * The persistent watches of one generation (one server session): one server registration per
 * path, shared by every handle on it, and the dispatch of notifications to handles.
 *
 * A server before 3.9 keeps one watch mode per path and session (ZOOKEEPER-4466): a one-shot
 * watch set on a path with a persistent one turns it one-shot, and removing a one-shot watch
 * there removes half of the persistent one. So a path with a persistent registration takes no
 * one-shot server watch: one-shot reads on it go without the watch flag and their watchers are
 * fed from the persistent one's notifications ("riders"); a registration is removed only once no
 * handle and no rider needs it; and a mode once set is never lowered while it lives (recursive
 * serves plain persistent handles too, with the children's events as NODE_CHILDREN_CHANGED).
 *
 * @internal
 * @module
 */
import { parentChecked } from './validate.js';
import { sinkOf, type PersistentWatch } from './persistent-watch.js';
import type { WatchEvent, WatchEventType } from './types.js';

const EVENT_TYPES: Record<number, WatchEventType> = { 1: 'NODE_CREATED', 2: 'NODE_DELETED', 3: 'NODE_DATA_CHANGED', 4: 'NODE_CHILDREN_CHANGED' };
const CHILDREN_CHANGED = 4;

/** One path's server registration. */
interface Registration {
  readonly path: string;
  /** The server mode: recursive once any handle needed it. */
  recursive: boolean;
  readonly handles: Set<PersistentWatch>;
  /** The server has it (addWatch answered, then re-sent with every handshake). */
  armed: boolean;
  /** addWatch calls for it not done yet (they attach a handle or give up). */
  adders: number;
  /** addWatch requests written to connection `pendingOn` and not answered (reads sent behind them ride). */
  pending: number;
  pendingOn: number;
  /** One-shot reads sent without the watch flag and not answered yet. */
  riders: number;
  /** Zxid of the last NODE_CHILDREN_CHANGED given to plain handles (a 3.9 server can send one we also derive). */
  lastChildrenZxid: bigint;
}

/** What the registry asks of its generation. */
export interface RegistryIo {
  /** Removes the persistent watch of `path` (in its mode) on the server, best effort. */
  removeOnServer(path: string, recursive: boolean): void;
  /** Whether the client's tables hold a one-shot watcher of `path`. */
  hasOneShot(path: string): boolean;
  /** Gives the client's one-shot child watchers of `path` a NODE_CHILDREN_CHANGED. */
  childrenChanged(path: string): void;
  /** The current connection's serial number. */
  connection(): number;
}

/** The persistent watches of one generation. */
export class WatchRegistry {
  private readonly regs = new Map<string, Registration>();

  constructor(private readonly io: RegistryIo) {}

  /** Registrations (for leak checks). */
  get size(): number {
    return this.regs.size;
  }

  /**
   * Whether an addWatch of `path` (in `recursive` mode) must be sent: no registration covers it
   * yet. Makes the registration if absent, and raises its mode to recursive when asked.
   */
  need(path: string, recursive: boolean): boolean {
    const reg = this.regs.get(path);
    if (!reg) {
      this.regs.set(path, { path, recursive, handles: new Set(), armed: false, adders: 1, pending: 0, pendingOn: -1, riders: 0, lastChildrenZxid: -1n });
      return true;
    }
    reg.adders += 1;
    if (recursive && !reg.recursive) {
      reg.recursive = true;
      return true;
    }
    return !reg.armed;
  }

  /** The mode an addWatch of `path` must ask for (the registration's). */
  modeOf(path: string): boolean {
    return this.regs.get(path)?.recursive ?? false;
  }

  /** An addWatch of `path` was written to the current connection. */
  sent(path: string): void {
    const reg = this.regs.get(path);
    if (!reg) return;
    const now = this.io.connection();
    if (reg.pendingOn !== now) reg.pending = 0;
    reg.pendingOn = now;
    reg.pending += 1;
  }

  /**
   * The server answered an addWatch of `path` (or the connection it was sent on dropped): `ok`
   * arms the registration. Even the reply to a call given up on counts: the server set it.
   */
  answered(path: string, ok: boolean): void {
    const reg = this.regs.get(path);
    if (!reg) return;
    if (reg.pendingOn === this.io.connection() && reg.pending > 0) reg.pending -= 1;
    if (ok) reg.armed = true;
    this.drain(reg);
  }

  /** An addWatch call is done: with its handle (on an armed registration), or without (gave up). */
  attach(path: string, watch: PersistentWatch | undefined): void {
    const reg = this.regs.get(path);
    if (!reg) return;
    reg.adders -= 1;
    if (watch) reg.handles.add(watch);
    else this.drain(reg);
  }

  /** Whether the registration of `path` is armed (an addWatch call may attach its handle). */
  armed(path: string): boolean {
    return this.regs.get(path)?.armed === true;
  }

  /** A handle closed: the registration goes once nothing needs it. */
  detach(watch: PersistentWatch): void {
    const reg = this.regs.get(watch.path);
    if (!reg || !reg.handles.delete(watch)) return;
    this.drain(reg);
  }

  /**
   * Whether a one-shot read of `path` sent now must go without the watch flag: a registration
   * the server has, or whose addWatch is ahead of it on this connection, covers it.
   */
  rides(path: string): boolean {
    const reg = this.regs.get(path);
    return reg !== undefined && (reg.armed || (reg.pending > 0 && reg.pendingOn === this.io.connection()));
  }

  /** A riding read was sent. */
  riderSent(path: string): void {
    const reg = this.regs.get(path);
    if (reg) reg.riders += 1;
  }

  /** A riding read was answered (its watcher, if any, is filed by then). */
  riderDone(path: string): void {
    const reg = this.regs.get(path);
    if (!reg) return;
    reg.riders -= 1;
    this.drain(reg);
  }

  /** Whether a one-shot watch of `path` may be removed on the server (no registration there). */
  mayRemoveOneShot(path: string): boolean {
    return !this.regs.has(path);
  }

  /** A one-shot watcher of `path` was dropped: the registration may not be needed any more. */
  oneShotGone(path: string): void {
    const reg = this.regs.get(path);
    if (reg) this.drain(reg);
  }

  /** Paths to re-register with a handshake: every registration the server had. */
  lists(): { persistent: string[]; recursive: string[] } {
    const persistent: string[] = [];
    const recursive: string[] = [];
    for (const reg of this.regs.values()) if (reg.armed) (reg.recursive ? recursive : persistent).push(reg.path);
    return { persistent, recursive };
  }

  /** A reconnect re-registered every armed registration: their handles get RESET. */
  reset(): void {
    for (const reg of [...this.regs.values()]) {
      if (reg.armed) for (const h of [...reg.handles]) sinkOf(h).deliver({ type: 'RESET', path: reg.path });
    }
  }

  /** Ends every handle with `reason` (the session is over). */
  endAll(reason: unknown): void {
    const handles = [...this.regs.values()].flatMap((r) => [...r.handles]);
    this.regs.clear();
    for (const h of handles) sinkOf(h).end(reason);
  }

  /** A notification (after the client gave it to its one-shot watchers). */
  notified(type: number, path: string, zxid: bigint): void {
    // No persistent or recursive watch: nothing here takes it (and no ancestor walk per notification).
    if (this.regs.size === 0) return;
    const name = EVENT_TYPES[type];
    if (name === undefined) return;
    const event: WatchEvent = { type: name, path };
    const own = this.regs.get(path);
    if (own) {
      if (type === CHILDREN_CHANGED) this.childrenChanged(own, zxid, false);
      else for (const h of [...own.handles]) sinkOf(h).deliver(event);
    }
    if (type !== CHILDREN_CHANGED) {
      const parent = path === '/' ? undefined : parentChecked(path);
      for (let a = parent; a !== undefined; a = a === '/' ? undefined : parentChecked(a)) {
        const reg = this.regs.get(a);
        if (!reg?.recursive) continue;
        for (const h of [...reg.handles]) if (h.recursive) sinkOf(h).deliver(event);
        if (a === parent && (name === 'NODE_CREATED' || name === 'NODE_DELETED')) this.childrenChanged(reg, zxid, true);
      }
    }
    if (own) this.drain(own);
  }

  /**
   * A NODE_CHILDREN_CHANGED of `reg`'s path for its plain handles: sent by the server, or
   * `derived` from a child's event under a recursive registration (then its one-shot child
   * watchers get it too). A 3.9 server may send both for one change: one per zxid.
   */
  private childrenChanged(reg: Registration, zxid: bigint, derived: boolean): void {
    if (zxid > 0n) {
      if (zxid <= reg.lastChildrenZxid) return;
      reg.lastChildrenZxid = zxid;
    }
    const event: WatchEvent = { type: 'NODE_CHILDREN_CHANGED', path: reg.path };
    for (const h of [...reg.handles]) if (!h.recursive) sinkOf(h).deliver(event);
    if (derived) this.io.childrenChanged(reg.path);
  }

  /** Removes `reg` on the server once no handle, pending add, rider or one-shot watcher needs it. */
  private drain(reg: Registration): void {
    const pending = reg.pending > 0 && reg.pendingOn === this.io.connection();
    if (reg.handles.size > 0 || reg.adders > 0 || reg.riders > 0 || pending || this.regs.get(reg.path) !== reg) return;
    if (reg.armed && this.io.hasOneShot(reg.path)) return;
    this.regs.delete(reg.path);
    if (reg.armed) this.io.removeOnServer(reg.path, reg.recursive);
  }
}
