/**
 * Small AbortSignal and timer helpers shared by every layer.
 *
 * @internal
 * @module
 */
import { onAbort } from './signals.js';

/**
 * Resolves after `ms`, or rejects with the reason of the first of `signals` to abort (at once if
 * one has). Subscribes through {@link onAbort}: one listener per signal however many wait.
 */
export function delay(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = signals.find((s) => s?.aborted);
    if (aborted) return reject(aborted.reason);
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      for (const u of unsubscribe) u();
      settle();
    };
    const timer = setTimeout(() => finish(resolve), ms);
    const unsubscribe = signals.flatMap((s) => (s ? [onAbort(s, (reason) => finish(() => reject(reason)))] : []));
  });
}

/**
 * Settles like `promise`, or rejects with the abort reason as soon as `signal` aborts, even if
 * `promise` has not settled. Its subscription to `signal` ends when it settles.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    // Nobody else waits for it: its failure must not become an unhandled rejection.
    promise.catch(noop);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const unsubscribe = onAbort(signal, reject);
    promise.then(
      (v) => {
        unsubscribe();
        resolve(v);
      },
      (e) => {
        unsubscribe();
        reject(e);
      },
    );
  });
}

/** A promise with its resolve and reject exposed. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

/** Creates a {@link Deferred}. Its promise never causes an unhandled-rejection warning by itself. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * Waits for `promise` for at most `ms` (never rejects): for work the caller would like to see
 * finished but must not be held up by, e.g. a cleanup during an outage.
 */
export async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  if (ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise.then(noop, noop), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Like {@link raceAbort}, for a request already sent whose outcome matters to the caller (an
 * item it took, a node it created): when `signal` aborts first, waits `graceMs()` more for the
 * reply and resolves with it if it arrives, else rejects with the abort reason.
 */
export async function raceAbortAfterSent<T>(promise: Promise<T>, signal: AbortSignal | undefined, graceMs: () => number): Promise<T> {
  try {
    return await raceAbort(promise, signal);
  } catch (err) {
    if (!signal?.aborted) throw err;
    let late: { value: T } | undefined;
    await within(
      promise.then((value) => {
        late = { value };
      }),
      graceMs(),
    );
    if (late) return late.value;
    throw err;
  }
}

/**
 * Work left running after its caller was answered (deleting a node whose create reply was lost,
 * after the caller gave up). Each piece must end on its own (at the latest with its session);
 * `idle()` lets `close()` wait for them.
 */
export class Background {
  private readonly running = new Set<Promise<void>>();

  /** Runs `work` in the background; its failure is dropped (cleanup is best effort). */
  track(work: Promise<unknown>): Promise<void> {
    const tracked: Promise<void> = work.then(noop, noop).finally(() => this.running.delete(tracked));
    this.running.add(tracked);
    return tracked;
  }

  /** Resolves once nothing tracked is running (including work tracked meanwhile). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}

const noop = (): void => undefined;
