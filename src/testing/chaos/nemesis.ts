/**
 * {@link Nemesis}: a seeded schedule of faults against a {@link TestingCluster} and the
 * proxies of its clients, recorded in a chaos history.
 *
 * @module
 */
import type { ZkSession } from '../../client/session.js';
import type { TestingCluster } from '../cluster.js';
import type { ChaosProxy } from '../proxy.js';
import type { FaultKind, HistoryRecorder } from './history.js';
import { HistoryRecorder as Recorder } from './history.js';
import { SeededRandom as Random } from './random.js';
import type { SeededRandom } from './random.js';
import { MAX_TIMER_MS } from '../../client/validate.js';
import { bringBack, firstLine, hasMemberLinks, idle, impairLinks, LINK_FAULTS, type LinkFault } from './nemesis-members.js';
import { checkWaiters, deleteWaiterFault, type WaiterLock } from './waiters.js';
import { checkInt, checkName, checkObject, checkOptionalFunction, checkSignal, checkWeights, describe, need, optionKeys } from './validate.js';

/** A client the nemesis can hurt: its proxies (one per member), and how to expire its session. */
export interface NemesisClient {
  /** The client's name, as in the history. */
  readonly name: string;
  /** Every proxy it connects through (its only routes to the ensemble). */
  readonly proxies: readonly ChaosProxy[];
  /** Forces its current session to expire on the server; resolves to a note for the history. */
  expire?(): Promise<string>;
  /**
   * Freezes the client for `ms` (a long GC pause, a suspended VM): e.g. block its event loop, or
   * SIGSTOP it and SIGCONT it in {@link NemesisClient.resume}.
   */
  pause?(ms: number): void;
  /** Ends a pause early or, for a pause that does not end by itself, at its end. */
  resume?(): void;
}

/** Options of a {@link Nemesis}. */
export interface NemesisOptions {
  /** The ensemble (3 members or more: one member down at a time keeps a quorum). */
  cluster: TestingCluster;
  /** The clients (faults of the client track pick among them). */
  clients: readonly NemesisClient[];
  /** The seeded generator: the same seed gives the same sequence of choices. */
  random: SeededRandom;
  /** Where faults, member states and leader changes are recorded (as client `nemesis`). */
  recorder: HistoryRecorder;
  /** The clients' session timeout T, ms: partitions last 1.3-2.2 T, past it. */
  sessionTimeoutMs: number;
  /** Relative weights of the fault kinds (0 disables one). Default: every kind, members and clients alike. */
  weights?: Partial<Record<FaultKind, number>>;
  /**
   * Since when a client holds something (chaos clock), undefined when it holds nothing:
   * partitions and pauses prefer the client that has held longest (likely in a long hold, so
   * the fault outlasts its session timeout while it holds).
   */
  heldSince?: (client: string) => number | undefined;
  /**
   * The session (`0x...`) of the client's longest-held grant, undefined when it holds nothing:
   * `isolate-follower` cuts off the follower that serves the longest holder's session.
   */
  holderSession?: (client: string) => string | undefined;
  /**
   * An outside session and the locks whose waiting nodes `delete-waiter` may delete (as an
   * operator or Curator's `Revoker` would). Without it, `delete-waiter` is off.
   */
  waiters?: {
    /** The session that lists and deletes (not a client's). */
    session: ZkSession;
    /** The locks. */
    locks: readonly WaiterLock[];
  };
}

/** Options of {@link Nemesis.run}. */
export interface NemesisRunOptions {
  /** How long to inject faults, ms. */
  durationMs: number;
  /** Stops early. */
  signal?: AbortSignal;
}

/** The keys of {@link NemesisOptions}. @internal */
export const NEMESIS_OPTION_KEYS = optionKeys<NemesisOptions>({
  cluster: true,
  clients: true,
  random: true,
  recorder: true,
  sessionTimeoutMs: true,
  weights: true,
  heldSince: true,
  holderSession: true,
  waiters: true,
});
/** The keys of {@link NemesisRunOptions}. @internal */
export const NEMESIS_RUN_OPTION_KEYS = optionKeys<NemesisRunOptions>({ durationMs: true, signal: true });

/** The default weight of every fault kind. */
export const DEFAULT_FAULT_WEIGHTS: Readonly<Record<FaultKind, number>> = {
  'kill-leader': 2,
  'kill-follower': 2,
  'stop-leader': 1,
  'stop-follower': 1,
  partition: 3,
  expire: 2,
  drop: 2,
  latency: 2,
  pause: 1,
  'isolate-follower': 2,
  'minority-partition': 1,
  'slow-follower': 2,
  'delete-waiter': 2,
};

const MEMBER_FAULTS = ['kill-leader', 'kill-follower', 'stop-leader', 'stop-follower'] as const;
const MEMBER_TRACK = [...MEMBER_FAULTS, ...LINK_FAULTS] as const;
const CLIENT_FAULTS = ['partition', 'expire', 'drop', 'latency', 'pause'] as const;
const CLIENT_TRACK = [...CLIENT_FAULTS, 'delete-waiter'] as const;

/**
 * Injects faults on a seeded schedule, in two tracks that run side by side:
 *
 * - **members**: SIGKILL or SIGTERM the leader or a follower, keep it down for 1-4 s, restart
 *   it and wait for a quorum again; or, on a cluster with `memberLinks`, cut a follower off from
 *   the other members while its clients stay connected (`isolate-follower`, aimed at the member
 *   of the longest holder's session), leave the leader alone in a minority
 *   (`minority-partition`), or delay a follower's links (`slow-follower`); one member impaired
 *   at a time, so a quorum always stays;
 * - **clients**: blackhole every proxy of one client past its session timeout (preferring one
 *   that holds a lock: the dangerous case), force its session to expire, drop its connections,
 *   delay its traffic by 50-600 ms for a few seconds, or freeze it past its session timeout
 *   (a long GC pause: a holder that cannot be told; only fencing tokens protect then); and,
 *   given {@link NemesisOptions.waiters}, delete a node that waits in a lock's queue from an
 *   outside session (`delete-waiter`): its owner must never report holding it.
 *
 * Every fault is recorded as a `fault` start and end, member ups and downs as `member` events,
 * and the leader (polled every 250 ms) as `leader` events. The sequence of choices is a function
 * of the seed; the timing, and which member leads, come from the run.
 *
 * @example
 * ```ts
 * import { HistoryRecorder, Nemesis, SeededRandom, type NemesisClient, type TestingCluster } from 'zk-recipes/testing';
 * declare const cluster: TestingCluster; // 3 members
 * declare const clients: NemesisClient[]; // each with its own proxies, one per member
 *
 * const recorder = new HistoryRecorder({ client: 'nemesis' });
 * const nemesis = new Nemesis({ cluster, clients, random: new SeededRandom(7), recorder, sessionTimeoutMs: 4000 });
 * await nemesis.run({ durationMs: 60_000 });   // heals everything before it resolves
 * ```
 */
export class Nemesis {
  readonly #o: NemesisOptions;
  readonly #weights: Record<FaultKind, number>;
  readonly #down = new Set<number>();
  #faults = 0;

  /** Creates a nemesis; nothing happens until {@link Nemesis.run}. */
  constructor(options: NemesisOptions) {
    need(options !== undefined, 'Nemesis: options are required');
    const o = checkObject(options, 'new Nemesis', NEMESIS_OPTION_KEYS);
    need(typeof o.cluster === 'object' && o.cluster !== null && Array.isArray(o.cluster.members), `Nemesis options.cluster must be a TestingCluster, got ${describe(o.cluster)}`);
    need(o.cluster.members.length >= 3, `the nemesis needs an ensemble of 3 members or more (one may be down), got ${o.cluster.members.length}`);
    need(Array.isArray(o.clients), `Nemesis options.clients must be an array, got ${describe(o.clients)}`);
    o.clients.forEach((c, i) => {
      need(c !== null && typeof c === 'object', `Nemesis options.clients[${i}] must be an object, got ${describe(c)}`);
      checkName(c.name, `Nemesis options.clients[${i}].name`);
      need(Array.isArray(c.proxies), `Nemesis options.clients[${i}].proxies must be an array of ChaosProxy, got ${describe(c.proxies)}`);
      for (const hook of ['expire', 'pause', 'resume'] as const) checkOptionalFunction(c[hook], `Nemesis options.clients[${i}].${hook}`);
    });
    need(o.random instanceof Random, `Nemesis options.random must be a SeededRandom, got ${describe(o.random)}`);
    need(o.recorder instanceof Recorder, `Nemesis options.recorder must be a HistoryRecorder, got ${describe(o.recorder)}`);
    checkInt(o.sessionTimeoutMs, 'Nemesis options.sessionTimeoutMs', 1, MAX_TIMER_MS);
    checkOptionalFunction(o.heldSince, 'Nemesis options.heldSince');
    checkOptionalFunction(o.holderSession, 'Nemesis options.holderSession');
    if (o.waiters !== undefined) checkWaiters(o.waiters, 'Nemesis options.waiters');
    const given = checkWeights(o.weights, Object.keys(DEFAULT_FAULT_WEIGHTS) as FaultKind[], 'Nemesis options.weights');
    // Faults the setup cannot inject are off by default, and refused when asked for.
    const off: FaultKind[] = [...(hasMemberLinks(o.cluster) ? [] : LINK_FAULTS), ...(o.waiters === undefined ? (['delete-waiter'] as const) : [])];
    for (const k of off) {
      const w = given[k];
      need(w === undefined || w === 0, k === 'delete-waiter' ? `Nemesis options.weights.delete-waiter needs options.waiters (a session and the locks)` : `Nemesis options.weights.${k} needs a TestingCluster started with { memberLinks: true }`);
    }
    this.#o = options;
    this.#weights = { ...DEFAULT_FAULT_WEIGHTS, ...Object.fromEntries(off.map((k) => [k, 0])), ...given };
  }

  /** Faults injected so far. */
  get faults(): number {
    return this.#faults;
  }

  /** Runs both tracks for `durationMs`, then heals every fault and waits for a quorum. */
  async run(options: NemesisRunOptions): Promise<void> {
    need(options !== undefined, 'Nemesis.run: options are required ({ durationMs })');
    const o = checkObject(options, 'Nemesis.run', NEMESIS_RUN_OPTION_KEYS);
    checkInt(o.durationMs, 'Nemesis.run options.durationMs', 0, MAX_TIMER_MS);
    checkSignal(o.signal, 'Nemesis.run options.signal');
    // A plain controller and timer: a composite of AbortSignal.timeout can be collected early.
    const over = new AbortController();
    const timer = setTimeout(() => over.abort(), options.durationMs);
    const onAbort = (): void => over.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const stop = over.signal;
    const leaders = new AbortController();
    for (const m of this.#o.cluster.members) this.#o.recorder.record({ type: 'member', member: m.id, state: m.running ? 'up' : 'down' });
    const watching = this.#watchLeader(leaders.signal);
    try {
      await Promise.all([this.#memberTrack(stop), this.#clientTrack(stop)]);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      try {
        await this.heal();
      } finally {
        leaders.abort();
        await watching;
      }
    }
  }

  /** Ends every fault: proxies back to pass, stopped members restarted, a quorum awaited. */
  async heal(): Promise<void> {
    if (hasMemberLinks(this.#o.cluster)) this.#o.cluster.heal();
    for (const c of this.#o.clients) {
      c.resume?.();
      for (const p of c.proxies) {
        p.reject(false);
        p.pass();
      }
    }
    await this.#restartStopped(3);
    await this.#o.cluster.waitForQuorum({ timeoutMs: 60_000 });
  }

  #enabled<K extends FaultKind>(kinds: readonly K[]): Partial<Record<K, number>> {
    const out: Partial<Record<K, number>> = {};
    for (const k of kinds) if (this.#weights[k] > 0) out[k] = this.#weights[k];
    return out;
  }

  async #memberTrack(stop: AbortSignal): Promise<void> {
    const random = this.#o.random.fork('members');
    const weights = this.#enabled(MEMBER_TRACK);
    if (Object.keys(weights).length === 0) return;
    while (!stop.aborted) {
      await idle(random.int(1000, 4000), stop);
      if (stop.aborted) return;
      const kind = random.weighted(weights as Record<(typeof MEMBER_TRACK)[number], number>);
      const downMs = random.int(1000, 4000);
      const pickIndex = random.next();
      try {
        if ((LINK_FAULTS as readonly string[]).includes(kind)) await this.impairMember(kind as LinkFault, (downMs - 1000) / 3001, pickIndex);
        else await this.crashMember(kind as (typeof MEMBER_FAULTS)[number], downMs, pickIndex);
      } catch (err) {
        this.#o.recorder.record({ type: 'note', level: 'error', message: `member track: ${firstLine(err)}; no member faults until every member serves again` });
        // A quorum stays with one member down: keep trying to bring it back, fault nothing else.
        while (!stop.aborted && this.#o.cluster.members.some((m) => !m.running)) {
          await idle(5000, stop);
          await this.#restartStopped(1);
        }
      }
    }
  }

  /** Restarts every member that is not running (`attempts` each); failures are noted, not thrown. */
  async #restartStopped(attempts: number): Promise<void> {
    for (const m of this.#o.cluster.members) {
      if (m.running) continue;
      try {
        await this.#bringBack(m.id, attempts);
        this.#down.delete(m.id);
        this.#o.recorder.record({ type: 'member', member: m.id, state: 'up' });
      } catch (err) {
        this.#o.recorder.record({ type: 'note', level: 'error', message: `member ${m.id} could not be restarted: ${firstLine(err)}` });
      }
    }
  }

  /**
   * Crashes one member: `kill-*` with SIGKILL, `stop-*` with SIGTERM, the leader or a follower
   * (`pick` in [0, 1) chooses among followers); keeps it down `downMs`, restarts it and waits
   * for a quorum. Resolves to the member's id.
   */
  async crashMember(kind: (typeof MEMBER_FAULTS)[number], downMs: number, pick = 0): Promise<number> {
    need((MEMBER_FAULTS as readonly string[]).includes(kind), `crashMember: kind must be one of ${MEMBER_FAULTS.join(', ')}, got ${describe(kind)}`);
    checkInt(downMs, 'crashMember: downMs', 0, MAX_TIMER_MS);
    need(typeof pick === 'number' && pick >= 0 && pick < 1, `crashMember: pick must be in [0, 1), got ${describe(pick)}`);
    const { cluster, recorder } = this.#o;
    const leader = await cluster.waitForQuorum({ timeoutMs: 60_000 });
    const followers = cluster.members.filter((m) => m.id !== leader && m.running).map((m) => m.id);
    const target = kind.endsWith('leader') ? leader : (followers[Math.floor(pick * followers.length)] ?? leader);
    const id = ++this.#faults;
    const how = kind.startsWith('kill') ? 'SIGKILL' : 'SIGTERM';
    recorder.record({ type: 'fault', phase: 'start', id, fault: kind, target: `member-${target}`, detail: `${how}, down ${downMs} ms` });
    this.#down.add(target);
    if (how === 'SIGKILL') await cluster.kill(target);
    else await cluster.stop(target);
    recorder.record({ type: 'member', member: target, state: 'down' });
    await new Promise((r) => setTimeout(r, downMs));
    let restarted: string;
    try {
      restarted = await this.#bringBack(target, 3);
    } catch (err) {
      recorder.record({ type: 'fault', phase: 'end', id, fault: kind, target: `member-${target}`, detail: `did not come back: ${firstLine(err)}` });
      throw err;
    }
    this.#down.delete(target);
    recorder.record({ type: 'member', member: target, state: 'up' });
    await cluster.waitForQuorum({ timeoutMs: 60_000 });
    recorder.record({ type: 'fault', phase: 'end', id, fault: kind, target: `member-${target}`, detail: restarted });
    return target;
  }

  /**
   * Impairs the links between members (a cluster with `memberLinks`): `isolate-follower`,
   * `minority-partition` or `slow-follower`; heals, waits for a quorum and resolves to the
   * impaired member. `amount` in [0, 1) scales the duration, `pick` in [0, 1) chooses a follower
   * when the longest holder's member does not.
   */
  async impairMember(kind: LinkFault, amount = 0.5, pick = 0): Promise<number> {
    need((LINK_FAULTS as readonly string[]).includes(kind), `impairMember: kind must be one of ${LINK_FAULTS.join(', ')}, got ${describe(kind)}`);
    need(typeof amount === 'number' && amount >= 0 && amount < 1, `impairMember: amount must be in [0, 1), got ${describe(amount)}`);
    need(typeof pick === 'number' && pick >= 0 && pick < 1, `impairMember: pick must be in [0, 1), got ${describe(pick)}`);
    need(hasMemberLinks(this.#o.cluster), `impairMember: ${kind} needs a TestingCluster started with { memberLinks: true }`);
    const { cluster, recorder, sessionTimeoutMs } = this.#o;
    const longest = this.#longestHolder();
    const holderSession = longest === undefined ? undefined : this.#o.holderSession?.(longest.name);
    return impairLinks({ cluster, recorder, sessionTimeoutMs, id: ++this.#faults, holderSession }, kind, amount, pick);
  }

  /** The client that has held something longest, if any holds. */
  #longestHolder(): NemesisClient | undefined {
    const since = (c: NemesisClient): number => this.#o.heldSince?.(c.name) ?? Infinity;
    const longest = [...this.#o.clients].sort((a, b) => since(a) - since(b))[0];
    return longest !== undefined && since(longest) < Infinity ? longest : undefined;
  }

  /** Restarts a member, up to `attempts` attempts (see {@link bringBack}). */
  #bringBack(member: number, attempts: number): Promise<string> {
    return bringBack(this.#o.cluster, this.#o.recorder, member, attempts);
  }

  async #clientTrack(stop: AbortSignal): Promise<void> {
    const random = this.#o.random.fork('clients');
    const weights = this.#enabled(CLIENT_TRACK);
    if (Object.keys(weights).length === 0 || this.#o.clients.length === 0) return;
    while (!stop.aborted) {
      await idle(random.int(500, 2500), stop);
      if (stop.aborted) return;
      const kind = random.weighted(weights as Record<(typeof CLIENT_TRACK)[number], number>);
      const preferHolder = random.chance(0.75);
      const pick = random.next();
      const amount = random.next();
      if (kind === 'delete-waiter') {
        await this.deleteWaiter(pick, amount);
        continue;
      }
      const longest = this.#longestHolder();
      const aimed = (kind === 'partition' || kind === 'pause') && preferHolder && longest !== undefined;
      const target = aimed ? longest : this.#o.clients[Math.floor(pick * this.#o.clients.length)];
      if (target) await this.hurtClient(kind, target, amount);
    }
  }

  /**
   * Deletes one waiting node of one of {@link NemesisOptions.waiters}' locks (`lockPick` in
   * [0, 1) chooses the lock, `nodePick` the node among those that certainly wait), from the
   * outside session. Recorded as a `delete-waiter` fault aimed at the node's client (its owner's
   * participant id without the flow), or at the lock's path when no waiter was found.
   */
  async deleteWaiter(lockPick = 0, nodePick = 0): Promise<void> {
    need(this.#o.waiters !== undefined, 'deleteWaiter: needs options.waiters (a session and the locks)');
    await deleteWaiterFault({ ...this.#o.waiters, recorder: this.#o.recorder, id: ++this.#faults, clients: this.#o.clients.map((c) => c.name) }, lockPick, nodePick);
  }

  /**
   * Injects one client fault; `amount` in [0, 1) scales its duration (partition and pause:
   * 1.3-2.2 T; latency: 50-600 ms for 1-4 s).
   */
  async hurtClient(kind: (typeof CLIENT_FAULTS)[number], client: NemesisClient, amount = 0.5): Promise<void> {
    need((CLIENT_FAULTS as readonly string[]).includes(kind), `hurtClient: kind must be one of ${CLIENT_FAULTS.join(', ')}, got ${describe(kind)}`);
    need(client !== null && typeof client === 'object' && Array.isArray(client.proxies), `hurtClient: client must be a NemesisClient, got ${describe(client)}`);
    need(typeof amount === 'number' && amount >= 0 && amount < 1, `hurtClient: amount must be in [0, 1), got ${describe(amount)}`);
    const { recorder, sessionTimeoutMs: T } = this.#o;
    const id = ++this.#faults;
    const start = (detail: string): void => void recorder.record({ type: 'fault', phase: 'start', id, fault: kind, target: client.name, detail });
    const end = (detail: string): void => void recorder.record({ type: 'fault', phase: 'end', id, fault: kind, target: client.name, detail });
    switch (kind) {
      case 'partition': {
        const ms = Math.round(T * (1.3 + 0.9 * amount));
        start(`blackhole every proxy for ${ms} ms (${(ms / T).toFixed(2)} x the session timeout)`);
        for (const p of client.proxies) p.blackhole();
        await new Promise((r) => setTimeout(r, ms));
        for (const p of client.proxies) p.pass();
        end('healed');
        return;
      }
      case 'pause': {
        const ms = Math.round(T * (1.3 + 0.9 * amount));
        if (!client.pause) {
          start('no pause hook');
          end('skipped');
          return;
        }
        start(`frozen for ${ms} ms (${(ms / T).toFixed(2)} x the session timeout)`);
        client.pause(ms);
        await new Promise((r) => setTimeout(r, ms));
        client.resume?.();
        end('resumed');
        return;
      }
      case 'latency': {
        const ms = Math.round(50 + 550 * amount);
        const forMs = Math.round(1000 + 3000 * amount);
        start(`${ms} ms each way for ${forMs} ms`);
        for (const p of client.proxies) p.latency(ms);
        await new Promise((r) => setTimeout(r, forMs));
        for (const p of client.proxies) p.pass();
        end('healed');
        return;
      }
      case 'drop': {
        start('every open connection destroyed');
        for (const p of client.proxies) p.dropAll();
        end('dropped');
        return;
      }
      case 'expire': {
        start('join the session with its credentials and close it');
        let detail: string;
        try {
          detail = client.expire ? await client.expire() : 'no expire hook: skipped';
        } catch (err) {
          detail = `not expired: ${err instanceof Error ? err.message : String(err)}`;
        }
        end(detail);
        return;
      }
    }
  }

  async #watchLeader(signal: AbortSignal): Promise<void> {
    let last: number | null | undefined;
    while (!signal.aborted) {
      const leader = (await this.#o.cluster.leaderId({ timeoutMs: 1000 }).catch(() => undefined)) ?? null;
      if (leader !== last) {
        last = leader;
        this.#o.recorder.record({ type: 'leader', member: leader });
      }
      await idle(250, signal);
    }
  }
}
