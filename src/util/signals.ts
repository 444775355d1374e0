/**
 * Abort listeners that do not pile up on shared signals. Hundreds of waits share one session
 * signal, one recipe's close signal, often one caller's shutdown signal: a listener per wait
 * on them trips Node's `MaxListenersExceededWarning` at 11, and `AbortSignal.any` (Node 20)
 * leaves a reference in every source for each signal it composes, until the source is gone.
 * So each signal carries at most one listener of ours, fanning out to a set of subscribers, and
 * it is removed when the last one unsubscribes.
 *
 * @internal
 * @module
 */

/**
 * An object told when a signal it follows aborts (see {@link follow}): a subscription without
 * closures, for waits that thousands may hold at once.
 */
export interface AbortFollower {
  /** `signal` aborted (read its reason). */
  signalAborted(signal: AbortSignal): void;
}

/** A subscriber: a closure of {@link onAbort}, or an {@link AbortFollower}. */
type Subscriber = (() => void) | AbortFollower;

/** The subscribers of one signal, behind its one listener. */
interface Fan {
  readonly subscribers: Set<Subscriber>;
  readonly listener: () => void;
}

/**
 * Where a signal keeps its fan (and whether it is {@link ownedController}'s): properties of its
 * own, read on every wait's subscription and unsubscription, as fast as a field; a weak map
 * lookup costs several times as much. `undefined` once a fan ends (the shape stays).
 */
const FAN = Symbol('zk-recipes.abortFan');
const KEPT = Symbol('zk-recipes.abortFanKept');

interface Marked {
  [FAN]?: Fan | undefined;
  [KEPT]?: boolean;
}

/** The fans of signals that cannot take a property (a caller sealed its signal). */
const sealedFans = new WeakMap<AbortSignal, Fan>();
/** Whether any signal needed {@link sealedFans} (until then nothing looks there). */
let anySealed = false;

function fanOf(signal: AbortSignal): Fan | undefined {
  return (signal as Marked)[FAN] ?? (anySealed ? sealedFans.get(signal) : undefined);
}

function setFan(signal: AbortSignal, fan: Fan | undefined): void {
  if (Object.isExtensible(signal)) {
    (signal as Marked)[FAN] = fan;
    return;
  }
  anySealed = true;
  if (fan) sealedFans.set(signal, fan);
  else sealedFans.delete(signal);
}

/**
 * An AbortController for the close (or life) of one object, whose signal lives as long as it (a
 * recipe's close signal, a session generation's): the one listener of ours on its signal stays
 * once added, even when nobody is subscribed, so the object's waits, calls and releases do not
 * add and remove a DOM listener each time, at a cost each time.
 */
export function ownedController(): AbortController {
  const controller = new AbortController();
  const marked = controller.signal as Marked;
  marked[KEPT] = true;
  marked[FAN] = undefined;
  return controller;
}

/** How many subscriptions of ours `signal` has now (tests: none may be left once waits end). */
export function subscriberCount(signal: AbortSignal): number {
  return fanOf(signal)?.subscribers.size ?? 0;
}

/**
 * Calls `fn` with the reason once `signal` aborts, and returns a function that unsubscribes (call
 * it when the wait settles; calling it again is harmless). As with `addEventListener`, nothing is
 * called for a signal that has already aborted: check `signal.aborted` first.
 */
export function onAbort(signal: AbortSignal, fn: (reason: unknown) => void): () => void {
  if (signal.aborted) return noop;
  let fan = fanOf(signal);
  if (!fan) fan = subscribe(signal);
  const f = fan;
  // A closure of its own: one function may subscribe twice, and each unsubscribes alone.
  const sub = (): void => fn(signal.reason);
  f.subscribers.add(sub);
  return () => drop(signal, f, sub);
}

/**
 * Tells `follower` once `signal` aborts, like {@link onAbort} (one listener per signal however
 * many follow), with no closure: {@link unfollow} ends it. Following twice is following once.
 */
export function follow(signal: AbortSignal, follower: AbortFollower): void {
  if (signal.aborted) return;
  (fanOf(signal) ?? subscribe(signal)).subscribers.add(follower);
}

/** Ends what {@link follow} began (harmless when it did not, or already ended). */
export function unfollow(signal: AbortSignal, follower: AbortFollower): void {
  const f = fanOf(signal);
  if (f) drop(signal, f, follower);
}

function drop(signal: AbortSignal, f: Fan, sub: Subscriber): void {
  if (!f.subscribers.delete(sub) || f.subscribers.size > 0 || fanOf(signal) !== f || (signal as Marked)[KEPT] === true) return;
  setFan(signal, undefined);
  signal.removeEventListener('abort', f.listener);
}

function subscribe(signal: AbortSignal): Fan {
  const subscribers = new Set<Subscriber>();
  const listener = (): void => {
    setFan(signal, undefined);
    // Live iteration: one that unsubscribes another meanwhile keeps it from being called, as
    // with removeEventListener during dispatch.
    for (const sub of subscribers) {
      subscribers.delete(sub);
      try {
        if (typeof sub === 'function') sub();
        else sub.signalAborted(signal);
      } catch (err) {
        // What EventTarget does with a listener that throws: report it, run the others.
        process.nextTick(() => {
          throw err;
        });
      }
    }
  };
  const fan = { subscribers, listener };
  setFan(signal, fan);
  signal.addEventListener('abort', listener, { once: true });
  return fan;
}

/** A signal of one wait's own, linked to shared ones; see {@link linkSignals}. */
export interface LinkedSignal {
  /** Aborts with the first source's reason, or a `TimeoutError` once the timeout passes. */
  readonly signal: AbortSignal;
  /** Whether it aborted because the timeout passed (before any source aborted). */
  readonly timedOut: boolean;
  /** Unsubscribes from the sources and clears the timer; call it once the wait settled. */
  dispose(): void;
}

/**
 * A fresh signal that aborts when any of `sources` aborts (with its reason) or after `timeoutMs`:
 * `AbortSignal.any` and `AbortSignal.timeout` in one, leaving nothing behind once disposed. A
 * wait puts its own listeners on this signal; each source carries one subscription of it.
 */
export function linkSignals(sources: readonly (AbortSignal | undefined)[], timeoutMs?: number): LinkedSignal {
  const controller = new AbortController();
  const unsubscribe: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const dispose = (): void => {
    clearTimeout(timer);
    for (const u of unsubscribe.splice(0)) u();
  };
  const abort = (reason: unknown): void => {
    dispose();
    controller.abort(reason);
  };
  for (const s of sources) {
    if (!s) continue;
    if (s.aborted) {
      abort(s.reason);
      break;
    }
    unsubscribe.push(onAbort(s, abort));
  }
  if (timeoutMs !== undefined && !controller.signal.aborted) {
    timer = setTimeout(() => {
      timedOut = true;
      abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    }, timeoutMs);
    // As AbortSignal.timeout's: a deadline alone does not keep the process running.
    timer.unref();
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose,
  };
}

const noop = (): void => undefined;
