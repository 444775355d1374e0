/**
 * The loss clock: the earliest instant at which the ensemble's *leader* may have last touched
 * our session, so the earliest it may expire it is one session timeout after. Its rule, and
 * the ensemble model it assumes, are written down in docs/sessions.md ("The loss clock on an
 * ensemble"); in short:
 *
 * - Only the leader expires sessions. A follower answers reads and pings from its own copy and
 *   tells the leader which sessions it saw in its answer to the leader's ping, which the leader
 *   sends every tickTime/2. So an answer from a follower proves the follower saw us, not that
 *   the leader did; a follower cut off from the leader keeps answering for syncLimit ticks.
 * - A `sync` or a write is forwarded to the leader on the follower's link, behind every ping
 *   answer the follower sent before. When such a request sent at `s` is answered, the follower
 *   had answered a ping in the last ping period before it forwarded the request (its link to
 *   the leader worked), and that ping answer carried every session the follower had seen by
 *   then: every request of ours answered (so seen) at least one ping period before `s`.
 * - The server grants a timeout T of at least 2 tickTime, so a ping period is at most T/4;
 *   {@link relayMargin} adds jitter of the leader's ping schedule.
 * - The reconnect handshake of an existing session is revalidated by the leader itself (and a
 *   new session is created by it): its send time counts, once the connection worked (see
 *   `Generation`'s `worked`).
 *
 * Nothing else moves the clock: notifications, late replies and a cut-off follower's answers
 * prove nothing about the session. The clock is conservative on a standalone server or when
 * connected to the leader (which touch at once): `LOST` may come earlier than needed there,
 * never later.
 *
 * @internal
 * @module
 */

/**
 * How long before a leader-proving request's send time an answered request must have been
 * answered for the leader to surely know of it: one ping period (tickTime/2, at most T/4
 * since T >= 2 tickTime) plus the schedule's jitter.
 */
export function relayMargin(timeoutMs: number): number {
  return timeoutMs / 4 + Math.max(20, timeoutMs / 40);
}

/** An answered request: when it was sent and when its answer came, monotonic ms. */
interface Touch {
  sent: number;
  answered: number;
  /** Answer time of the first request merged into this entry (bounds merging). */
  since: number;
}

/** Answers closer together than this fraction of T share one log entry (bounded memory). */
const MERGE_FRACTION = 1 / 200;

/** The loss clock of one connection's session (see the module documentation). */
export class LossClock {
  /** Lower bound of the leader's latest touch of the session, monotonic ms. */
  heard: number;
  /** Send time of the latest answered request only the leader can answer (a sync, a write). */
  proven: number;
  /** Answered requests not yet known to have reached the leader, oldest first. */
  private readonly touches: Touch[] = [];

  constructor(now: number) {
    this.heard = now;
    this.proven = now;
  }

  /** A handshake sent at `sentAt` was answered: the leader validated (or created) the session. */
  handshake(sentAt: number): void {
    // Touches of an earlier connection's member are older than the handshake: drop them.
    this.touches.length = 0;
    this.advance(sentAt);
    if (sentAt > this.proven) this.proven = sentAt;
  }

  /**
   * The server answered a request sent at `sentAt` (now is `answeredAt`); `viaLeader` when only
   * the leader could have answered it (a sync or a write that succeeded).
   */
  answered(sentAt: number, answeredAt: number, viaLeader: boolean, timeoutMs: number): void {
    this.record(sentAt, answeredAt, timeoutMs);
    if (!viaLeader) return;
    if (sentAt > this.proven) this.proven = sentAt;
    const cutoff = sentAt - relayMargin(timeoutMs);
    let head = this.touches[0];
    while (head !== undefined && head.answered <= cutoff) {
      this.advance(head.sent);
      this.touches.shift();
      head = this.touches[0];
    }
  }

  /** The connection dropped: what its member saw may never reach the leader. */
  disconnected(): void {
    this.touches.length = 0;
  }

  /** Entries kept (for tests: the log stays small under any load). */
  get pending(): number {
    return this.touches.length;
  }

  private record(sentAt: number, answeredAt: number, timeoutMs: number): void {
    const last = this.touches.at(-1);
    // Merging keeps the later send and answer: the entry qualifies later, never earlier.
    if (last !== undefined && answeredAt - last.since < timeoutMs * MERGE_FRACTION) {
      if (sentAt > last.sent) last.sent = sentAt;
      if (answeredAt > last.answered) last.answered = answeredAt;
      return;
    }
    this.touches.push({ sent: sentAt, answered: answeredAt, since: answeredAt });
  }

  private advance(to: number): void {
    if (to > this.heard) this.heard = to;
  }
}
