/**
 * Put records: ephemeral nodes under `<queue>/producers/`, one per put in flight, reused from
 * put to put. Each put's transaction bumps its record from the version the producer knows and
 * writes the put's token, so after a lost reply the record says whether the put was applied,
 * whatever consumers did with the items meanwhile. Ephemeral, so a producer that dies leaves
 * nothing: a record lives as long as its session, or until the queue is closed.
 *
 * @internal
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { ZkSession } from '../client/session.js';
import type { Acl } from '../client/types.js';
import { ConnectionLossError, NoNodeError, SessionExpiredError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import { deleteWhileSessionLives, untilAnswered } from './backoff.js';

/** A put record of this producer, and the session it lives in. */
export interface PutRecord {
  /** Full path of the record node. */
  readonly path: string;
  /** Its data version as last known (every applied put bumps it). */
  version: number;
  /** The session owning it. */
  readonly sessionId: bigint;
  /** Aborts when that session ends (the record is gone then). */
  readonly sessionSignal: AbortSignal;
}

/** The put records of one producer: taken by a put, given back once its outcome is known. */
export class RecordPool {
  private readonly free: PutRecord[] = [];
  // Nodes that exist or may exist (a create whose reply we gave up on), and their session.
  private readonly nodes = new Map<string, AbortSignal>();
  private readonly removing = new Set<Promise<void>>();
  private readonly prefix = randomUUID();
  private next = 0;
  private dirReady = false;

  constructor(
    private readonly session: ZkSession,
    private readonly dir: string,
    /** ACL of the nodes created (undefined: the session's provider). */
    private readonly acl: readonly Acl[] | undefined,
  ) {}

  /** A record of the current session whose version is known: a free one, or a new one. */
  async take(signal: AbortSignal): Promise<PutRecord> {
    for (let r = this.free.pop(); r !== undefined; r = this.free.pop()) {
      if (!r.sessionSignal.aborted && r.sessionId === this.session.sessionId) return r;
      this.nodes.delete(r.path); // went with its session
    }
    return this.create(signal);
  }

  /** Gives a record back after a put whose outcome is known. */
  give(record: PutRecord): void {
    if (record.sessionSignal.aborted) this.nodes.delete(record.path);
    else this.free.push(record);
  }

  /** Forgets a record that is gone (its session ended, or it was deleted). */
  drop(record: PutRecord): void {
    this.nodes.delete(record.path);
  }

  /**
   * Retires a record whose version is unknown (a put gave up before its outcome was known):
   * deleted in the background, which also fences the abandoned transaction (it needs the
   * record). Bounded by the record's session.
   */
  discard(record: PutRecord): void {
    this.remove(record.path, record.sessionSignal);
  }

  /** Deletes every record (on close): waits for deletions bounded by each record's session. */
  async close(): Promise<void> {
    this.free.length = 0;
    for (const [path, sessionSignal] of this.nodes) this.remove(path, sessionSignal);
    await Promise.all([...this.removing]);
  }

  private async create(signal: AbortSignal): Promise<PutRecord> {
    if (!this.dirReady) {
      await untilAnswered(this.session, signal, () => raceAbort(this.session.mkdirp(this.dir, { acl: this.acl }), signal));
      this.dirReady = true;
    }
    for (;;) {
      const path = `${this.dir}/${this.prefix}-${this.next++}`;
      const sessionSignal = this.session.signal;
      this.nodes.set(path, sessionSignal);
      try {
        const made = await raceAbort(this.session.createWithStat(path, { mode: 'EPHEMERAL', acl: this.acl }), signal);
        return { path, version: made.stat.version, sessionId: made.stat.ephemeralOwner, sessionSignal };
      } catch (err) {
        if (signal.aborted) {
          this.remove(path, sessionSignal); // it may exist: nothing is left behind
          throw err;
        }
        if (err instanceof NoNodeError) {
          this.nodes.delete(path);
          this.dirReady = false;
          await untilAnswered(this.session, signal, () => raceAbort(this.session.mkdirp(this.dir, { acl: this.acl }), signal));
          this.dirReady = true;
          continue;
        }
        if (err instanceof SessionExpiredError) {
          this.nodes.delete(path);
          if (this.session.signal.aborted) throw err; // not renewed: no session to put in
          await this.session.waitConnected({ signal });
          continue;
        }
        if (!(err instanceof ConnectionLossError)) {
          this.nodes.delete(path);
          throw err;
        }
        // Applied or not: adopt it if it is there and ours, else try a new name.
        await this.session.waitConnected({ signal });
        const stat = await untilAnswered(this.session, signal, async () => {
          await raceAbort(this.session.sync(path), signal);
          return raceAbort(this.session.exists(path), signal);
        });
        if (stat && stat.ephemeralOwner === this.session.sessionId && !sessionSignal.aborted) {
          return { path, version: stat.version, sessionId: stat.ephemeralOwner, sessionSignal };
        }
        if (stat) this.remove(path, sessionSignal);
        else this.nodes.delete(path);
      }
    }
  }

  /** Deletes `path` in the background, retrying through connection loss while its session lives. */
  private remove(path: string, sessionSignal: AbortSignal): void {
    const done = deleteWhileSessionLives(this.session, path, sessionSignal).finally(() => {
      this.nodes.delete(path);
      this.removing.delete(done);
    });
    this.removing.add(done);
  }
}
