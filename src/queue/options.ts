/**
 * Options of {@link DistributedQueue} and its calls, their defaults and their validation.
 *
 * @module
 */
import { checkInt, checkOptions, checkSignal, checkTimeout, describe, optionKeys } from '../client/validate.js';
import { InvalidArgumentError } from '../errors.js';
import type { Acl } from '../client/types.js';
import { resolveBackoff, type Backoff } from '../client/retry.js';
import { PRIORITY_RANGE } from './layout.js';

/** Options of a {@link DistributedQueue}. @group Recipes */
export interface QueueOptions {
  /** Shown as the data of this consumer's nodes. Default `hostname:pid`. */
  participantId?: string;
  /**
   * ACL of every node the queue creates: its directories, items, claims, consumer and producer
   * nodes, dead letters; default: the session's `aclProvider` (the open ACL without one). With
   * `CREATOR_ALL_ACL` and digest `auth`, other identities can neither read, take nor delete the
   * items. See [Security](../../docs/security.md).
   */
  acl?: readonly Acl[];
}

/** The bound of a blocking call: every call of a queue takes one. @group Recipes */
export interface QueueCallOptions {
  /** Give up after this many ms with `OperationTimeoutError`. Default: no limit. */
  timeoutMs?: number;
  /** Give up when this aborts, rejecting with its reason. */
  signal?: AbortSignal;
}

/**
 * Options of `put` / `putAll`. A put that gives up (timeout, abort, close) after its transaction
 * was sent may still have been applied: its outcome is unknown, as with any remote write.
 * @group Recipes
 */
export interface PutOptions extends QueueCallOptions {
  /** 0 to 999, lower is served first; FIFO within a priority. Default 500. */
  priority?: number;
}

/** Options of `take`, `poll`, `peek` and `size`. @group Recipes */
export interface TakeOptions extends QueueCallOptions {}

/** Options of `deadLetters`. @group Recipes */
export interface DeadLetterOptions extends QueueCallOptions {
  /** At most this many letters, oldest first. Default 100, at most 10 000. */
  limit?: number;
}

/** The keys of {@link QueueOptions}. @internal */
export const QUEUE_OPTION_KEYS = optionKeys<QueueOptions>({ participantId: true, acl: true });
/** The keys of {@link QueueCallOptions}. @internal */
export const QUEUE_CALL_OPTION_KEYS = optionKeys<QueueCallOptions>({ timeoutMs: true, signal: true });
/** The keys of {@link PutOptions}. @internal */
export const PUT_OPTION_KEYS = optionKeys<PutOptions, QueueCallOptions>({ priority: true }, QUEUE_CALL_OPTION_KEYS);
/** The keys of {@link TakeOptions}. @internal */
export const TAKE_OPTION_KEYS = optionKeys<TakeOptions, QueueCallOptions>({}, QUEUE_CALL_OPTION_KEYS);
/** The keys of {@link DeadLetterOptions}. @internal */
export const DEAD_LETTER_OPTION_KEYS = optionKeys<DeadLetterOptions, QueueCallOptions>({ limit: true }, QUEUE_CALL_OPTION_KEYS);

/** An exponential backoff: the first delay, doubled each time up to the cap; each delay jittered (between half and all of it). @group Recipes */
export interface BackoffOptions {
  /** The first delay, ms. */
  baseDelayMs?: number;
  /** The cap, ms. */
  maxDelayMs?: number;
}

/** What an at-least-once handler is given besides the item's data. @group Recipes */
export interface Delivery {
  /** How many times this item was delivered before (0 the first time). */
  redeliveries: number;
  /** Full path of the item node. */
  path: string;
  /** Aborts if our claim is lost (session lost): stop, the item will be redelivered. */
  signal: AbortSignal;
}

/**
 * An at-least-once handler: resolves when the item is handled (it is then acknowledged), throws
 * when it is not (it is then delivered again, or dead-lettered). Must be idempotent.
 * @group Recipes
 */
export type ConsumeHandler = (data: Buffer, delivery: Delivery) => unknown;

/** Options of `consume`. @group Recipes */
export interface ConsumeOptions {
  /** Items handled at once by this consumer. Default 1. */
  concurrency?: number;
  /** Stops consuming (in-flight handlers finish first). */
  signal?: AbortSignal;
  /**
   * Called when a handler throws (the item is then redelivered, or dead-lettered) and when
   * consuming fails for another reason (`redeliveries` is then -1 and `path` the queue's).
   */
  onError?: (error: unknown, item: { path: string; redeliveries: number }) => void;
  /**
   * Deliveries an item gets before it is moved to the dead letters (`deadLetters()`), with its
   * delivery count and last error, in one transaction with the deletion of the item and its
   * claim. Deliveries that ended without the handler's verdict (a consumer whose session or
   * process ended) count too. Default: no limit.
   */
  maxDeliveries?: number;
  /**
   * The wait before a failed item is delivered again, growing with its delivery count: the
   * claim is kept that long (the item is hidden from every consumer), then released.
   * Default `{ baseDelayMs: 200, maxDelayMs: 30_000 }`.
   */
  redeliveryBackoff?: BackoffOptions;
  /**
   * The wait after consuming fails for any other reason (connection trouble, no permission),
   * growing with each failure in a row. Default `{ baseDelayMs: 100, maxDelayMs: 5000 }`.
   */
  errorBackoff?: BackoffOptions;
}

/** The default {@link ConsumeOptions.redeliveryBackoff}. @group Recipes */
export const DEFAULT_REDELIVERY_BACKOFF: Readonly<Required<BackoffOptions>> = { baseDelayMs: 200, maxDelayMs: 30_000 };
/** The default {@link ConsumeOptions.errorBackoff}. @group Recipes */
export const DEFAULT_ERROR_BACKOFF: Readonly<Required<BackoffOptions>> = { baseDelayMs: 100, maxDelayMs: 5000 };

/** {@link ConsumeOptions}, validated, with defaults filled in. @internal */
export interface ConsumeConfig {
  readonly concurrency: number;
  readonly signal: AbortSignal | undefined;
  readonly onError: ConsumeOptions['onError'];
  readonly maxDeliveries: number | undefined;
  readonly redelivery: Backoff;
  readonly errorBackoff: Backoff;
}

/** The keys of {@link BackoffOptions}. @internal */
export const BACKOFF_OPTION_KEYS = optionKeys<BackoffOptions>({ baseDelayMs: true, maxDelayMs: true });
/** The keys of {@link ConsumeOptions}. @internal */
export const CONSUME_OPTION_KEYS = optionKeys<ConsumeOptions>({ concurrency: true, signal: true, onError: true, maxDeliveries: true, redeliveryBackoff: true, errorBackoff: true });

/** Validates `options` of `consume`. @internal */
export function consumeConfig(options: unknown): ConsumeConfig {
  const o = checkObject(options, 'consume', CONSUME_OPTION_KEYS) as ConsumeOptions;
  if (o.onError !== undefined && typeof o.onError !== 'function') throw new InvalidArgumentError(`onError must be a function, got ${describe(o.onError)}`);
  return {
    concurrency: checkInt(o.concurrency, 'concurrency', 1, 1000, 1),
    signal: checkSignal(o.signal),
    onError: o.onError,
    maxDeliveries: o.maxDeliveries === undefined ? undefined : checkInt(o.maxDeliveries, 'maxDeliveries', 1, 1_000_000),
    redelivery: resolveBackoff(o.redeliveryBackoff, 'redeliveryBackoff', DEFAULT_REDELIVERY_BACKOFF, BACKOFF_OPTION_KEYS),
    errorBackoff: resolveBackoff(o.errorBackoff, 'errorBackoff', DEFAULT_ERROR_BACKOFF, BACKOFF_OPTION_KEYS),
  };
}

/**
 * Validates a call's bound; `what` names the call and `known` the keys its options may have
 * (its bound's and its own). @internal
 */
export function callBound(options: unknown, what: string, known: readonly string[]): { timeoutMs: number | undefined; signal: AbortSignal | undefined } {
  const o = checkObject(options, what, known) as QueueCallOptions;
  return { timeoutMs: checkTimeout(o.timeoutMs), signal: checkSignal(o.signal) };
}

/** Validates a priority (default 500). @internal */
export function checkPriority(value: unknown): number {
  return checkInt(value, 'priority', PRIORITY_RANGE.min, PRIORITY_RANGE.max, PRIORITY_RANGE.default);
}

/** Validates a dead-letter listing limit (default 100). @internal */
export function checkLimit(value: unknown): number {
  return checkInt(value, 'limit', 1, 10_000, 100);
}

function checkObject(options: unknown, what: string, known: readonly string[]): object {
  return checkOptions(options as object | undefined, what, known);
}
