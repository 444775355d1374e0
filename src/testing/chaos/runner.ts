/**
 * {@link runChaos}: a whole chaos run, from starting the ensemble to the checked history.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { AtomicNumber } from '../../atomic/atomic-number.js';
import { ZkSession } from '../../client/session.js';
import type { TlsOptions } from '../../client/tls.js';
import { DistributedQueue } from '../../queue/queue.js';
import { TestingCluster } from '../cluster.js';
import { waitFor } from '../wait.js';
import { checkHistory } from './checker/index.js';
import type { CheckResult } from './checker/types.js';
import { chaosNow } from './clock.js';
import { expireSessionByTicket } from './expire.js';
import { atomicValue, counterValue, ephemeralsUnder, queueItems, settleSessions, settleWatches, sharedCountValue } from './final.js';
import { sharedCountPath } from './workloads/shared.js';
import { ChaosClientProcess } from './fleet.js';
import { HistoryRecorder, type ChaosEvent, type ChaosHistory, type FaultKind, type FinalState, type WorkloadSpec } from './history.js';
import { DEFAULT_FAULT_WEIGHTS, Nemesis } from './nemesis.js';
import { DEFAULT_CLIENT_COUNTS, planWorkloads, type ClientCounts } from './plan.js';
import { checkInt, checkNumber, checkObject, checkOptionalFunction, checkWeights, describe, need, optionKeys } from './validate.js';
import { SeededRandom } from './random.js';
import { FencedResource } from './resource.js';
import type { WaiterLock } from './waiters.js';

/** The ensemble's tickTime, ms. */
const TICK_MS = 200;

/** Options of {@link runChaos}. */
export interface RunChaosOptions {
  /** How long the nemesis injects faults, seconds. Default 60. */
  seconds?: number;
  /** The nemesis seed. Default: random (it is in the result). */
  seed?: number;
  /** The clients' session timeout, ms. Default 4000. */
  sessionTimeoutMs?: number;
  /** Clients per workload kind. Default {@link DEFAULT_CLIENT_COUNTS}. */
  clients?: ClientCounts;
  /** Fault weights (0 disables a kind). Default {@link DEFAULT_FAULT_WEIGHTS}. */
  faults?: Partial<Record<FaultKind, number>>;
  /** Folder for the client processes' log (`clients.log`); default: their output is dropped. */
  logDir?: string;
  /** Progress lines (phases), e.g. `console.error`. */
  log?: (line: string) => void;
  /** Clock slack of the checker, ms (see {@link CheckOptions.slackMs}). Default 0. */
  slackMs?: number;
  /**
   * Run the clients' sessions over TLS (`--tls`): the members serve a `secureClientPort` with
   * generated certificates, and every client's proxies forward to it (the `zkr` workload's
   * `zkr` too, with `--tls-ca`, `--tls-cert` and `--tls-key`). Default false.
   */
  tls?: boolean;
}

/** The keys of {@link RunChaosOptions}. @internal */
export const RUN_CHAOS_OPTION_KEYS = optionKeys<RunChaosOptions>({ seconds: true, seed: true, sessionTimeoutMs: true, clients: true, faults: true, logDir: true, log: true, slackMs: true, tls: true });

/**
 * The locks whose waiters `delete-waiter` may delete, and the fault weights: with no lock in the
 * run (queues or caches alone) `delete-waiter` is off, since it has nothing to delete.
 * @internal
 */
export function lockFaults(workloads: readonly WorkloadSpec[], faults: Partial<Record<FaultKind, number>> | undefined): { locks: WaiterLock[]; weights: Partial<Record<FaultKind, number>> | undefined } {
  const locks = workloads.flatMap((w): WaiterLock[] =>
    w.kind === 'mutex' || w.kind === 'semaphore' || w.kind === 'rwlock' || w.kind === 'latch'
      ? [{ path: w.path, kind: w.kind, maxLeases: w.maxLeases }]
      : // zkr's nodes are a mutex's, and so are those of the atomic workload's promotion lock.
        w.kind === 'zkr' || w.kind === 'atomic'
        ? [{ path: w.path, kind: 'mutex', maxLeases: 1 }]
        : // Each member of a multi-lock is a mutex of its own.
          (w.members ?? []).map((path): WaiterLock => ({ path, kind: 'mutex', maxLeases: 1 })),
  );
  return { locks, weights: locks.length > 0 ? faults : { ...faults, 'delete-waiter': 0 } };
}

/** What {@link runChaos} resolves to. */
export interface ChaosRunResult {
  /** The whole history, with its final state. */
  history: ChaosHistory;
  /** The checker's verdict. */
  result: CheckResult;
}

/**
 * Runs the chaos suite: a 3-member {@link TestingCluster}, one process per client (each with its
 * own session, through its own {@link ChaosProxy} per member), the {@link Nemesis} for
 * `seconds`, then a drain (producers and the caches' writers stop, consumers empty the queues),
 * a stop (the caches' writers first; then every cache, once SYNCED, compares its copy with a
 * fresh read of the server; every client releases and closes its recipes), and the final state
 * (counters, queue items, ephemerals, watches and sessions on every member). Resolves to the history and {@link checkHistory}'s
 * result; everything it started is stopped, whatever happens.
 */
export async function runChaos(options: RunChaosOptions = {}): Promise<ChaosRunResult> {
  const o = checkObject(options, 'runChaos', RUN_CHAOS_OPTION_KEYS);
  const seconds = checkInt(o.seconds, 'runChaos options.seconds', 1, 86_400, 60);
  const seed = checkInt(o.seed, 'runChaos options.seed', 0, 2 ** 32 - 1, randomBytes(4).readUInt32BE());
  // The test servers grant 400 ms (2 ticks) to 60 s.
  const T = checkInt(o.sessionTimeoutMs, 'runChaos options.sessionTimeoutMs', 400, 60_000, 4000);
  const counts = checkObject(o.clients, 'runChaos options.clients', Object.keys(DEFAULT_CLIENT_COUNTS));
  for (const [k, n] of Object.entries(counts)) checkInt(n, `runChaos options.clients.${k}`, 0, 50);
  checkWeights(o.faults, Object.keys(DEFAULT_FAULT_WEIGHTS) as FaultKind[], 'runChaos options.faults');
  need(o.logDir === undefined || (typeof o.logDir === 'string' && o.logDir !== ''), `runChaos options.logDir must be a non-empty string, got ${describe(o.logDir)}`);
  const log = checkOptionalFunction(o.log, 'runChaos options.log') ?? (() => undefined);
  const slackMs = o.slackMs === undefined ? 0 : checkNumber(o.slackMs, 'runChaos options.slackMs', 0);
  need(o.tls === undefined || typeof o.tls === 'boolean', `runChaos options.tls must be a boolean, got ${describe(o.tls)}`);
  const random = new SeededRandom(seed);
  // The runner follows grants and ends to aim partitions at holders (and isolations at their
  // sessions' members), and each session's state (by client and session id) for forced expiry.
  const held = new Map<string, Map<string, { t: number; sessionId: string }>>();
  const states = new Map<string, string>();
  const follow = (e: ChaosEvent): void => {
    if (e.type === 'grant' && !e.lostAtGrant) held.set(e.client, (held.get(e.client) ?? new Map<string, { t: number; sessionId: string }>()).set(e.attempt, { t: e.t, sessionId: e.sessionId }));
    if (e.type === 'end') held.get(e.client)?.delete(e.attempt);
    if (e.type === 'session') states.set(`${e.client} ${e.sessionId}`, e.state);
  };
  const longestHeld = (name: string): { t: number; sessionId: string } | undefined => [...(held.get(name)?.values() ?? [])].sort((a, b) => a.t - b.t)[0];
  const recorder = new HistoryRecorder({ client: 'runner', onEvent: follow });
  const nemesisRecorder = new HistoryRecorder({
    client: 'nemesis',
    keep: false,
    onEvent: (e) => {
      recorder.add(e);
      if (e.type === 'fault') log(`chaos: ${e.phase === 'start' ? 'fault' : 'healed'} #${e.id} ${e.fault} ${e.target}${e.detail ? `: ${e.detail}` : ''}`);
      if (e.type === 'note') log(`chaos: nemesis note: ${e.message}`);
    },
  });
  const base = `/chaos/run-${seed}-${randomBytes(3).toString('hex')}`;
  const { workloads, clients: planned } = planWorkloads(base, options.clients);
  const history: ChaosHistory = {
    version: 1,
    meta: { seed, seconds, startedAt: chaosNow(), endedAt: 0, sessionTimeoutMs: T, clients: planned.map((c) => ({ name: c.name, workload: c.workload.name, sessions: c.sessions, ...(c.role !== undefined && { role: c.role }) })), workloads, members: [] },
    events: recorder.events,
  };
  let logFd: number | 'ignore' = 'ignore';
  if (options.logDir) {
    mkdirSync(options.logDir, { recursive: true });
    logFd = openSync(join(options.logDir, 'clients.log'), 'a');
  }
  let cluster: TestingCluster | undefined;
  let resource: FencedResource | undefined;
  let observer: ZkSession | undefined;
  const fleet: ChaosClientProcess[] = [];
  try {
    log(`chaos: starting a 3-member ensemble (seed ${seed}, ${seconds} s, ${planned.length} clients)`);
    // Member links let the nemesis cut or slow members apart. A follower cut off from the
    // leader serves its clients for syncLimit x tickTime: that must outlast T (by half) for its
    // holders' sessions to expire on the leader while they still hear from the follower.
    cluster = await TestingCluster.start(3, { memberLinks: true, syncLimit: Math.max(25, Math.ceil((1.6 * T) / TICK_MS)), tickTime: TICK_MS, ...(o.tls && { tls: true }) });
    const clientTls = cluster.certificates && pemTexts(cluster.certificates.clientTls);
    const certs = cluster.certificates;
    const clientTlsFiles = certs && { ca: certs.ca.cert, cert: certs.client.cert, key: certs.client.key };
    const ensemble = cluster;
    history.meta.members = ensemble.members.map((m) => m.id);
    resource = await FencedResource.start((e) => recorder.add(e));
    const session = await ZkSession.connect(ensemble.connectString, { sessionTimeoutMs: 30_000 });
    observer = session;
    // A renewed observer session leaves its predecessor tracked for up to 30 s: the harness's, not a leftover.
    const harnessSessions = new Set([`0x${session.sessionId.toString(16)}`]);
    session.on('session', (info) => {
      harnessSessions.add(`0x${info.sessionId.toString(16)}`);
      recorder.record({ type: 'note', level: 'info', message: `the harness's session was renewed (now 0x${info.sessionId.toString(16)})` });
    });
    for (const w of workloads) {
      await session.mkdirp(w.path);
      for (const m of w.members ?? []) await session.mkdirp(m);
      if (w.counterPath !== undefined) await session.create(w.counterPath, { data: '0' });
      if (w.kind === 'shared-count') await session.create(sharedCountPath(w), { data: Buffer.alloc(4) });
      if (w.numberPath !== undefined) await new AtomicNumber(session, w.numberPath).initialize(0);
      if (w.kind === 'cache') {
        // The caches' root is the runner's write: its state is one the caches may report.
        const stat = await session.exists(w.path);
        if (stat) recorder.record({ type: 'cache-write', phase: 'ok', workload: w.name, op: 'root', kind: 'create', path: w.path, data: '', czxid: String(stat.czxid), mzxid: String(stat.mzxid), version: stat.version });
      }
    }
    log('chaos: starting the clients');
    for (const plan of planned) {
      fleet.push(await ChaosClientProcess.spawn(plan, { cluster: ensemble, recorder, sessionTimeoutMs: T, resourcePort: resource.port, seed: random.fork(plan.name).seed, logFd, ...(clientTls && { tls: clientTls }), ...(clientTlsFiles && { tlsFiles: clientTlsFiles }) }));
    }
    for (const c of fleet) c.send({ cmd: 'start' });
    const { locks, weights } = lockFaults(workloads, options.faults);
    const nemesis = new Nemesis({
      cluster: ensemble,
      random,
      recorder: nemesisRecorder,
      sessionTimeoutMs: T,
      heldSince: (name) => longestHeld(name)?.t,
      holderSession: (name) => longestHeld(name)?.sessionId,
      ...(locks.length > 0 && { waiters: { session, locks } }),
      ...(weights && { weights }),
      clients: fleet.map((c) => ({
        name: c.name,
        proxies: c.proxies,
        pause: (ms: number) => c.send({ cmd: 'pause', ms }),
        expire: async () => {
          const ticket = await c.credentials();
          if (typeof ticket === 'string') return `skipped: ${ticket}`;
          // The victim is told SUSPENDED (its locks may be lost) before its session is closed.
          const key = `${c.name} 0x${ticket.sessionId.toString(16)}`;
          const afterCutOff = (): Promise<void> =>
            waitFor(() => states.has(key) && states.get(key) !== 'CONNECTED' && states.get(key) !== 'RECONNECTED', { timeoutMs: 5000, intervalMs: 5, message: `${c.name} SUSPENDED` }).then(() => undefined);
          await expireSessionByTicket(ticket, c.proxies, ensemble.connectString, { timeoutMs: 8000, afterCutOff });
          return `expired 0x${ticket.sessionId.toString(16)}`;
        },
      })),
    });
    log(`chaos: nemesis running for ${seconds} s`);
    // A nemesis that cannot heal (a member that will not rejoin) is a harness error, noted; the
    // run goes on with the quorum it has, so the history is still checked and reported.
    await nemesis.run({ durationMs: seconds * 1000 }).catch((err: unknown) => {
      recorder.record({ type: 'note', level: 'error', message: `nemesis: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` });
    });
    // Drain, stop and collect what is left; a failure here is noted and the history still checked.
    const finish = async (): Promise<void> => {
      recorder.record({ type: 'note', level: 'info', message: 'nemesis done, everything healed: draining' });
      log('chaos: draining the queues');
      for (const c of fleet) c.send({ cmd: 'drain' });
      const queues = workloads.filter((w) => w.kind.startsWith('queue'));
      // Producers stop; consumers empty the queues (sessions lost in the last faults recover first).
      await waitFor(async () => (await Promise.all(queues.map((w) => new DistributedQueue(session, w.path).size()))).every((n) => n === 0), {
        timeoutMs: 15_000 + 2 * T,
        intervalMs: 250,
        message: 'queues drained',
      }).catch(() => recorder.record({ type: 'note', level: 'info', message: 'queues not drained within the deadline' }));
      log('chaos: stopping the clients');
      recorder.record({ type: 'note', level: 'info', message: 'stopping the clients' });
      // The caches' writers first: each cache then compares its copy with the server's, still.
      const writers = fleet.filter((c) => c.role === 'writer');
      const stopped = await Promise.allSettled(writers.map((c) => c.stop(60_000)));
      stopped.push(...(await Promise.allSettled(fleet.filter((c) => c.role !== 'writer').map((c) => c.stop(60_000)))));
      for (const r of stopped) if (r.status === 'rejected') recorder.record({ type: 'note', level: 'error', message: String(r.reason) });
      const final: FinalState = { counters: {}, queueItems: {}, ephemerals: [], members: [] };
      for (const w of workloads) if (w.counterPath !== undefined) final.counters[w.name] = await counterValue(session, w.counterPath);
      for (const w of workloads) if (w.kind === 'shared-count') final.counters[w.name] = await sharedCountValue(session, sharedCountPath(w));
      for (const w of workloads) if (w.numberPath !== undefined) (final.numbers ??= {})[w.name] = await atomicValue(session, w.numberPath);
      for (const w of queues) final.queueItems[w.name] = await queueItems(session, w);
      const watches = await settleWatches(ensemble, 10_000);
      log('chaos: closing the clients');
      const exits = await Promise.all(fleet.map((c) => c.exit(15_000)));
      exits.forEach((clean, i) => {
        if (!clean) recorder.record({ type: 'note', level: 'error', message: `client ${fleet[i]?.name} did not exit when told; killed` });
      });
      const clientSessions = new Set(fleet.flatMap((c) => [...c.sessionIds]));
      // Sessions lost by a client (partitioned) expire on the server up to T after: wait for them.
      final.members = await settleSessions(ensemble, clientSessions, watches, harnessSessions, 2 * T + 10_000);
      for (const m of final.members) {
        if (m.globalSessions !== null && m.trackedSessions !== null && m.globalSessions > m.trackedSessions.length) {
          recorder.record({ type: 'note', level: 'info', message: `the leader (member ${m.member}) counts ${m.globalSessions} sessions in its data tree besides the harness's, and tracks ${m.trackedSessions.length}: the server keeps sessions it no longer expires` });
        }
      }
      final.ephemerals = await ephemeralsUnder(session, base);
      history.final = final;
      await session.deleteRecursive(base).catch(() => undefined);
    };
    await finish().catch((err: unknown) => {
      recorder.record({ type: 'note', level: 'error', message: `the run could not finish: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` });
    });
  } finally {
    history.meta.endedAt = chaosNow();
    for (const c of fleet) c.child.kill('SIGKILL');
    await Promise.all(fleet.map((c) => Promise.all(c.proxies.map((p) => p.close()))));
    await observer?.close();
    await resource?.close();
    await cluster?.close();
    if (typeof logFd === 'number') closeSync(logFd);
  }
  const result = checkHistory(history, { slackMs });
  return { history, result };
}

/** The client options of generated certificates as PEM text (sent to the client processes as JSON). */
function pemTexts(tls: TlsOptions): { ca: string; cert: string; key: string } {
  const text = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
  return { ca: text(tls.ca), cert: text(tls.cert), key: text(tls.key) };
}
