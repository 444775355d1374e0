/**
 * The diagnostics channels the recipes publish on (see `docs/observability.md`).
 *
 * @module
 */
export { CHANNELS, TRACING_CHANNELS } from './channels.js';
export type {
  AcquireContext,
  AcquireMode,
  AcquireOutcome,
  AcquireProgress,
  AcquireRecipe,
  CacheStateMessage,
  DeadLetterMessage,
  HeldLockMessage,
  LeaderElectedMessage,
  LeaderRevokedMessage,
  LockGrantedMessage,
  LockMessageBase,
  LockLossReason,
  LockLostMessage,
  LockMissMessage,
  LockReleasedMessage,
  QueueHandleContext,
  QueuePutContext,
  QueueTakeContext,
  SessionRequestContext,
  SessionStateMessage,
} from './channels.js';
