/**
 * Backoff of the queue's retries and background loops: jittered, capped, and always on a timer
 * (a loop never retries synchronously).
 *
 * @internal
 * @module
 */
import { backoffDelay, type Backoff } from '../client/retry.js';
import type { ZkSession } from '../client/session.js';
import { ClosedError, ConnectionLossError, NoNodeError, SessionExpiredError } from '../errors.js';
import { delay } from '../util/abort.js';

/** Retries of one request after a connection loss: 50 ms, doubling, at most 2 s. */
export const LOSS_BACKOFF: Backoff = { baseDelayMs: 50, maxDelayMs: 2000 };

/**
 * Runs `fn` until it settles with something other than a {@link ConnectionLossError}: after
 * each loss, backs off (jittered) and waits to be connected again, all bounded by `signal`
 * (rejects with its reason). For requests that are safe to send again, reads above all.
 */
export async function untilAnswered<T>(session: ZkSession, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ConnectionLossError)) throw err;
    }
    await delay(backoffDelay(LOSS_BACKOFF, attempt), signal);
    await session.waitConnected({ signal });
  }
}

/**
 * Deletes `path`, an ephemeral node of the session `sessionSignal` belongs to, retrying through
 * connection loss (backing off) while that session lives: once it ends, the node went with it.
 * Never rejects; gives up on any other refusal (e.g. no permission: it goes with the session).
 */
export async function deleteWhileSessionLives(session: ZkSession, path: string, sessionSignal: AbortSignal): Promise<void> {
  for (let attempt = 0; !sessionSignal.aborted; attempt++) {
    try {
      await session.delete(path);
      return;
    } catch (err) {
      if (err instanceof NoNodeError || err instanceof SessionExpiredError || err instanceof ClosedError) return;
      if (!(err instanceof ConnectionLossError)) return;
    }
    try {
      await delay(backoffDelay(LOSS_BACKOFF, attempt), sessionSignal);
      await session.waitConnected({ signal: sessionSignal });
    } catch {
      return;
    }
  }
}
