/**
 * Removal of empty lock directories from the client, when asked (`reapParentAfterMs`): lock
 * directories are containers, which the server deletes itself; this deletes one sooner, only
 * after it has stayed unused for a grace period, not on every release (a hot lock path would
 * otherwise pay a parent delete and re-create per cycle).
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { raceAbort, within } from '../util/abort.js';
import { graceFor } from './grace.js';

/** Schedules best-effort deletion of empty directories after a grace period. */
export class ParentReaper {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly session: ZkSession,
    private readonly graceMs: number,
  ) {}

  /** Called after each release: (re)starts the grace period of `dir`. */
  touch(dir: string): void {
    if (!Number.isFinite(this.graceMs)) return;
    clearTimeout(this.timers.get(dir));
    const timer = setTimeout(() => {
      this.timers.delete(dir);
      // Fails with NotEmpty while anyone uses it, NoNode if already gone: both fine. A
      // participant racing us gets NoNode on create and re-creates the parent.
      this.session.delete(dir, { version: -1 }).catch(() => undefined);
    }, this.graceMs);
    timer.unref();
    this.timers.set(dir, timer);
  }

  /** Called before each acquisition: the directory is in use again. */
  cancel(dir: string): void {
    clearTimeout(this.timers.get(dir));
    this.timers.delete(dir);
  }

  /**
   * Deletes `dir` now if it is empty (on close), best effort: only while connected, and without
   * waiting more than a moment for the reply (never for an outage to end).
   */
  async removeNow(dir: string): Promise<void> {
    const grace = graceFor(this.session);
    if (this.session.closed || grace === 0) return;
    await within(raceAbort(this.session.delete(dir, { version: -1 }), this.session.signal), grace);
  }

  /** Drops every pending removal (on close). */
  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
