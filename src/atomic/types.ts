/**
 * The options and results of an {@link AtomicNumber}.
 *
 * @module
 */
import { optionKeys } from '../client/validate.js';
import type { Acl } from '../client/types.js';
import type { AtomicNumber } from './atomic-number.js';
import type { Mutex } from '../mutex/mutex.js';
import type { OutcomeUnknownError, RetriesExhaustedError } from '../errors.js';

/** How an {@link AtomicNumber} retries an update that lost the race (Curator's `RetryPolicy` of `DistributedAtomicLong`). @group Recipes */
export interface AtomicRetryOptions {
  /** Attempts after the first one (0 = one attempt only). Default 10, at most 1000. */
  maxRetries?: number;
  /** First backoff between attempts, ms; doubled per attempt, jittered. Default 10. */
  baseDelayMs?: number;
  /** Cap of one backoff, ms. Default 1000. */
  maxDelayMs?: number;
}

/** Promotion of an {@link AtomicNumber} update to a lock (Curator's `PromotedToLock`). @group Recipes */
export interface PromoteToLockOptions {
  /** Path of the {@link Mutex} taken once the optimistic attempts are spent (Curator's `InterProcessMutex` layout). */
  lockPath: string;
  /** How long to wait for the lock, ms; past it the update fails with {@link RetriesExhaustedError}. Default: as long as the call may take. */
  timeoutMs?: number;
}

/** Options of an {@link AtomicNumber}. @group Recipes */
export interface AtomicNumberOptions {
  /** Retries of an update that lost the race; see {@link AtomicRetryOptions}. */
  retry?: AtomicRetryOptions;
  /** Take a mutex, and try again under it, once the optimistic retries are spent. Default: no promotion. */
  promoteToLock?: PromoteToLockOptions;
  /**
   * ACL of the number's node, of the parents it creates and of the promotion mutex's nodes;
   * default: the session's `aclProvider` (the open ACL without one). See
   * [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** Options of every {@link AtomicNumber} call. @group Recipes */
export interface AtomicCallOptions {
  /** Gives up after this many ms: rejects with a `TimeoutError` DOMException (or {@link OutcomeUnknownError} when a write was in flight). */
  timeoutMs?: number;
  /** Gives up when this aborts: rejects with its reason (or {@link OutcomeUnknownError} when a write was in flight). */
  signal?: AbortSignal;
}

/** What one {@link AtomicNumber} call took (Curator's `AtomicStats`). @group Recipes */
export interface AtomicStats {
  /** Optimistic attempts made. */
  readonly optimisticTries: number;
  /** Attempts made under the promoted lock (0 without promotion). */
  readonly promotedTries: number;
  /** Time spent in the optimistic attempts, ms. */
  readonly optimisticTimeMs: number;
  /** Time spent waiting for and under the lock, ms. */
  readonly promotedTimeMs: number;
}

/**
 * The result of an {@link AtomicNumber} call (Curator's `AtomicValue`). `succeeded` is false only
 * for a {@link AtomicNumber.compareAndSet} that found another value; every other call either
 * succeeds or rejects.
 * @group Recipes
 */
export interface AtomicValue {
  /** Whether the value was changed (always true but for a refused compare-and-set). */
  readonly succeeded: boolean;
  /** The value the call found (0 for a node that did not exist). */
  readonly preValue: bigint;
  /** The value after the call: the one written, or `preValue` when nothing was written. */
  readonly postValue: bigint;
  /** What it took. */
  readonly stats: AtomicStats;
}

/** @internal */
export const ATOMIC_NUMBER_OPTION_KEYS = optionKeys<AtomicNumberOptions>({ retry: true, promoteToLock: true, acl: true });
/** @internal */
export const ATOMIC_RETRY_KEYS = optionKeys<AtomicRetryOptions>({ maxRetries: true, baseDelayMs: true, maxDelayMs: true });
/** @internal */
export const PROMOTE_TO_LOCK_KEYS = optionKeys<PromoteToLockOptions>({ lockPath: true, timeoutMs: true });
/** @internal */
export const ATOMIC_CALL_OPTION_KEYS = optionKeys<AtomicCallOptions>({ timeoutMs: true, signal: true });
