/**
 * The chaos suite's public parts: the nemesis, the history recorder, the checker, the fenced
 * resource, the runner and its reports. Re-exported by `zk-recipes/testing`.
 *
 * @module
 */
export { checkHistory, beliefIntervals, type BeliefInterval, type CacheSummary, type CheckName, type CheckOptions, type CheckResult, type CheckStats, type Violation } from './checker/index.js';
export { chaosNow } from './clock.js';
export { expireSessionByTicket, type ExpireByTicketOptions, type SessionTicket } from './expire.js';
export {
  HistoryRecorder,
  type CacheFinalEvent,
  type CacheKind,
  type CacheNodeRecord,
  type CacheObservedEvent,
  type CacheRole,
  type CacheStartEvent,
  type CacheWriteEvent,
  type ChaosEvent,
  type ChaosEventBody,
  type ChaosHistory,
  type AtomicEvent,
  type BarrierEvent,
  type SharedCountEvent,
  type SharedSeenEvent,
  type PersistentNodeEvent,
  type GroupOpEvent,
  type GroupViewEvent,
  type DiscoveryOpEvent,
  type DiscoveryViewEvent,
  type CounterEvent,
  type DeliveryEvent,
  type EndEvent,
  type EventBase,
  type FaultEvent,
  type FaultKind,
  type FinalState,
  type GrantEvent,
  type HistoryRecorderOptions,
  type LeaderEvent,
  type LockMode,
  type MemberEvent,
  type MemberLeftovers,
  type MultiLockMember,
  type NoteEvent,
  type PutEvent,
  type ResourceEvent,
  type RunMeta,
  type SessionEvent,
  type TakeEvent,
  type WaitEvent,
  type WaitFailEvent,
  type WorkloadKind,
  type WorkloadSpec,
} from './history.js';
export { renderHtml } from './html.js';
export { DEFAULT_FAULT_WEIGHTS, Nemesis, type NemesisClient, type NemesisOptions, type NemesisRunOptions } from './nemesis.js';
export { CI_CLIENT_COUNTS, CI_SEED, DEFAULT_CLIENT_COUNTS, type ClientCounts } from './plan.js';
export { SeededRandom } from './random.js';
export { summaryLine, writeReport, type ReportFiles } from './report.js';
export { FencedResource, FencedResourceClient, type RegisterState } from './resource.js';
export { runChaos, type ChaosRunResult, type RunChaosOptions } from './runner.js';
export { waitingNodes, type WaiterLock } from './waiters.js';
