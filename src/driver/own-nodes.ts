/**
 * {@link OwnNodes}: the watches of an acquisition's own nodes. With `watchOwnNode`, the first
 * node's watch tells the handle that its lock was lost; and a grant without a listing rests on
 * every node's watch (grant.ts): set before the nodes we waited on went, its notification comes
 * before the one (or the reply) that granted us; set at the grant, its read is answered after the
 * deletions that granted us. Either way, not fired means our nodes stood when we were granted.
 *
 * @internal
 * @module
 */
import type { WatchEvent } from '../client/types.js';
import { watchSettled } from '../client/session.js';
import { raceAbort } from '../util/abort.js';

/** A watch set on one of our nodes. Wrapped: a promise resolved with a promise would wait for it to fire. */
export interface OwnWatch {
  readonly changed: Promise<WatchEvent>;
  /** Drops the watch (its `changed` rejects with `reason`). */
  stop(reason: unknown): void;
}

const noop = (): void => undefined;

/** {@link OwnNodes.stand} of an acquisition that watched none of its nodes. */
const NOTHING_WATCHED = Object.freeze({ changed: undefined });

/** The watches of one acquisition's nodes, started at most once each. */
export class OwnNodes {
  private first: Promise<OwnWatch> | undefined;
  private rest: Promise<OwnWatch>[] | undefined;

  constructor(
    private readonly paths: readonly string[],
    /** Sets a watch on our node at `path` (rejects to start over if it is gone). */
    private readonly watch: (path: string) => Promise<OwnWatch>,
  ) {}

  /** Whether every node is watched: a grant without a listing may rest on them. */
  get allWatched(): boolean {
    return this.rest !== undefined;
  }

  /** The watches started so far. */
  get started(): Promise<OwnWatch>[] {
    return [...(this.first ? [this.first] : []), ...(this.rest ?? [])];
  }

  /** Watches the first node (the handle's, with `watchOwnNode`), unless it is already. */
  watchFirst(): Promise<OwnWatch> {
    if (!this.first) this.first = this.begin(this.paths[0] as string);
    return this.first;
  }

  /** Watches every node not watched yet; returns the watches it started. */
  watchAll(): Promise<OwnWatch>[] {
    const started = this.first ? [] : [this.watchFirst()];
    if (!this.rest) started.push(...(this.rest = this.paths.slice(1).map((p) => this.begin(p))));
    return started;
  }

  /**
   * Once every watch started is answered: the first node's `changed` (undefined when none was
   * started: the grant came from a listing that showed our nodes; then at once, not a promise),
   * or false if a watch fired (a node of ours was deleted or changed by someone else).
   */
  stand(giveUp: AbortSignal | undefined): Promise<{ changed: Promise<WatchEvent> | undefined } | false> | { changed: undefined } {
    // Nothing to wait for (the grant came from a listing): no promise hops on a grant's path.
    if (!this.first && !this.rest) return NOTHING_WATCHED;
    return this.answered(giveUp);
  }

  private async answered(giveUp: AbortSignal | undefined): Promise<{ changed: Promise<WatchEvent> | undefined } | false> {
    const watches = await raceAbort(Promise.all(this.started), giveUp);
    // Checked synchronously: a notification was handled before the event that granted us, but
    // promise reactions to it may run after.
    if (watches.some((w) => watchSettled(w.changed))) return false;
    return { changed: this.first ? watches[0]?.changed : undefined };
  }

  /**
   * Drops every watch started (those whose read is still on its way, once it is answered):
   * their `changed` rejects with `reason`.
   */
  stop(reason: unknown): void {
    for (const w of this.started) w.then((x) => x.stop(reason), noop);
  }

  private begin(path: string): Promise<OwnWatch> {
    const w = this.watch(path);
    w.catch(noop);
    return w;
  }
}
