/**
 * What every workload gets, and helpers shared by the lock-like ones.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../../../client/session.js';
import type { LockHandle } from '../../../driver/handle.js';
import { ConnectionLossError, LockLostError, NotHeldError, ZooKeeperError } from '../../../errors.js';
import type { CacheRole, HistoryRecorder, LockMode, MultiLockMember, WorkloadSpec } from '../history.js';
import type { SeededRandom } from '../random.js';
import type { FencedResourceClient } from '../resource.js';

/** What a workload runs with, in its client process. */
export interface WorkloadContext {
  /** The client's name. */
  name: string;
  /** The client's session (through its own proxies); flow `a`'s, and flow `b`'s without {@link WorkloadContext.second}. */
  session: ZkSession;
  /** A second session of the client (same connect string), for flow `b`; absent for one-session clients. */
  second?: ZkSession;
  /** The workload. */
  spec: WorkloadSpec;
  /** For the cache workload: what this client does. */
  role?: CacheRole;
  /** Over TLS: the CA and client certificate as PEM files (the `zkr` workload passes them to `zkr`). */
  tlsFiles?: { ca: string; cert: string; key: string };
  /** The client's random stream (a flow's own, forked from it, in {@link FlowContext}). */
  random: SeededRandom;
  /** Records this client's events. */
  recorder: HistoryRecorder;
  /** The fenced resource. */
  resource: FencedResourceClient;
  /** Aborts when producers should stop (the drain phase). */
  drain: AbortSignal;
  /** Aborts when the workload should release everything and return. */
  stop: AbortSignal;
}

/** A workload: runs until `ctx.stop` aborts, then releases and closes what it opened. */
export type Workload = (ctx: WorkloadContext) => Promise<void>;

/**
 * The flows of a lock or leader client, run at once, each with its own recipe instance: on the
 * client's one session (so two acquisitions of one process queue behind each other and hand
 * over in memory: the driver's local-nodes.ts and heads.ts), or, for a client with two
 * sessions, flow `b` on the second (two sessions of one process and one connect string, on
 * different members: a handoff between them must not skip what the next holder's server has
 * not seen), under the nemesis like the rest.
 */
export const FLOWS = ['a', 'b'] as const;

/** One flow of a client: the client's context with its own random stream, and its label. */
export interface FlowContext extends WorkloadContext {
  /** The flow's label (one of {@link FLOWS}), in its attempts' names. */
  flow: string;
}

/** The name of a flow's `i`-th acquisition (or term): unique per client, as beliefs are keyed. */
export function attemptName(ctx: FlowContext, i: number): string {
  return `${ctx.name}-${ctx.flow}${i}`;
}

/** The participant id a flow's nodes carry: the client and the flow, for a person reading the tree. */
export function participantId(ctx: FlowContext): string {
  return `${ctx.name}-${ctx.flow}`;
}

/**
 * Runs `body` once per flow, concurrently. Each flow draws from a stream forked from the
 * client's seed by its label, so a seed replays each flow's draws whatever the interleaving.
 * Settles once every flow has (none is left holding), with the first failure if any.
 */
export async function inFlows(ctx: WorkloadContext, body: (flow: FlowContext) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(FLOWS.map((flow) => body({ ...ctx, flow, random: ctx.random.fork(`flow-${flow}`), session: flow === 'b' && ctx.second ? ctx.second : ctx.session })));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason as unknown;
}

/** An error as text for the history: its code (or name) and message. */
export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return `${typeof code === 'string' ? code : err.name}: ${err.message}`;
  }
  return String(err);
}

/** Waits `ms`, or less if `signal` aborts; resolves to false when it aborted. Never rejects. */
export function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A belief interval being recorded: ends once, by release or by loss. */
export interface Belief {
  /** Whether the client still believes it holds. */
  readonly active: boolean;
  /** Records the end by release (before calling release), unless it already ended. */
  release(): void;
}

/**
 * Records a grant and, in the same tick, watches `signal`: its abort is recorded as the end of
 * the belief (told lost), unless the belief already ended by release.
 */
export function believe(
  ctx: WorkloadContext,
  fields: { attempt: string; token: bigint; leases: number; mode: LockMode; sessionId: bigint; downgradeOf?: string; members?: MultiLockMember[] },
  signal: AbortSignal,
): Belief {
  const { attempt } = fields;
  const lostAtGrant = signal.aborted;
  ctx.recorder.record({
    type: 'grant',
    workload: ctx.spec.name,
    attempt,
    token: String(fields.token),
    leases: fields.leases,
    mode: fields.mode,
    sessionId: `0x${fields.sessionId.toString(16)}`,
    lostAtGrant,
    ...(fields.downgradeOf !== undefined && { downgradeOf: fields.downgradeOf }),
    ...(fields.members !== undefined && { members: fields.members }),
  });
  let active = !lostAtGrant;
  const end = (why: 'release' | 'lost', error?: string): void => {
    if (!active) return;
    active = false;
    signal.removeEventListener('abort', onAbort);
    ctx.recorder.record({ type: 'end', workload: ctx.spec.name, attempt, why, ...(error !== undefined && { error }) });
  };
  const onAbort = (): void => end('lost', errorText(signal.reason));
  if (lostAtGrant) ctx.recorder.record({ type: 'end', workload: ctx.spec.name, attempt, why: 'lost', error: errorText(signal.reason) });
  else signal.addEventListener('abort', onAbort, { once: true });
  return {
    get active() {
      return active;
    },
    release: () => end('release'),
  };
}

/**
 * Whether a failed transaction certainly was not applied: the server answered with an error of
 * one of its ops, the check of our lock node failed, or it was never sent.
 */
export function certainlyNotApplied(err: unknown): boolean {
  if (err instanceof LockLostError || err instanceof NotHeldError) return true;
  if (err instanceof ConnectionLossError) return !err.sent;
  return err instanceof ZooKeeperError && err.opIndex !== undefined;
}

/**
 * Increments the workload's counter under `handle` (read, then `handle.multi` with the new
 * value, no version: a second holder would lose an update, which the counter check sees) and
 * writes the value to the fenced register with the handle's token. `seq` numbers the client's
 * counter ops (an op's id is unique per client) and the values written without a counter: one
 * per client, shared by its flows (taken in one synchronous step, so two flows never share one).
 */
export async function incrementAndFence(ctx: WorkloadContext, attempt: string, handle: LockHandle, belief: Belief, seq: { n: number }): Promise<void> {
  const { counterPath, register, name: workload } = ctx.spec;
  if (counterPath !== undefined && belief.active) {
    const { data } = await ctx.session.getData(counterPath, { signal: handle.signal });
    const value = Number(data.toString('utf8')) + 1;
    const op = `${ctx.name}-c${seq.n++}`;
    ctx.recorder.record({ type: 'counter', phase: 'invoke', workload, attempt, op, value });
    try {
      await handle.multi([{ type: 'setData', path: counterPath, data: String(value) }]);
      ctx.recorder.record({ type: 'counter', phase: 'ok', workload, attempt, op, value });
    } catch (err) {
      ctx.recorder.record({ type: 'counter', phase: certainlyNotApplied(err) ? 'fail' : 'info', workload, attempt, op, value, error: errorText(err) });
      return;
    }
    if (register !== undefined && belief.active) await ctx.resource.write(register, handle.fencingToken, value);
  } else if (register !== undefined && belief.active) {
    await ctx.resource.write(register, handle.fencingToken, seq.n++);
  }
}

/**
 * Writes the register once more at the end of a hold, if still believed: a holder that was
 * frozen (paused) meanwhile wakes up believing, writes here with its old token, and the
 * resource must refuse it once a newer holder has written.
 */
export async function fenceAgain(ctx: WorkloadContext, token: bigint, belief: Belief, seq: { n: number }): Promise<void> {
  if (ctx.spec.register !== undefined && belief.active) await ctx.resource.write(ctx.spec.register, token, seq.n++).catch(() => undefined);
}

/**
 * Ends a hold with a read of the lock's path, as a holder finishing its work with ZooKeeper
 * would: cut off by a partition, it waits here, still holding, until the reply comes or its
 * lock is lost (the handle's signal aborts the read).
 */
export async function checkIn(ctx: WorkloadContext, signal: AbortSignal): Promise<void> {
  if (!signal.aborted) await ctx.session.exists(ctx.spec.path, { signal }).catch(() => undefined);
}

/**
 * While the session is SUSPENDED, a holder goes on holding (its work is not done, and a release
 * could not reach the server anyway) until the session is back or the lock is lost: so a
 * partition of a holder that outlasts the session timeout ends with the holder told LOST while
 * it still believes it holds. Bounded by three session timeouts.
 */
export function holdThroughSuspension(ctx: WorkloadContext, signal: AbortSignal): Promise<void> {
  if (ctx.session.state !== 'SUSPENDED' || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      ctx.session.off('state', onState);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const onState = (state: string): void => {
      if (state !== 'SUSPENDED') done();
    };
    const timer = setTimeout(done, 3 * ctx.session.timeoutMs);
    ctx.session.on('state', onState);
    signal.addEventListener('abort', done, { once: true });
  });
}
