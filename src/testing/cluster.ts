import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidArgumentError } from '../errors.js';
import { checkBoolean, checkDeadline, checkInt, checkOptions, describe, optionKeys } from './check.js';
import { FOUR_LETTER_WORD_OPTION_KEYS, type FourLetterWordOptions } from './four-letter.js';
import { locateZooKeeper, type ZooKeeperInstallation } from './java.js';
import { withSasl } from './jaas.js';
import { checkDelay, linkProxyCount, MemberLinks, partitionPairs, type MemberLink } from './member-links.js';
import { freePorts, LOOPBACK } from './ports.js';
import {
  baseConfig,
  checkTestOptions,
  ZOOKEEPER_TEST_OPTION_KEYS,
  installationFor,
  makeWorkDir,
  removeWorkDir,
  testServerTls,
  type ZooKeeperTestOptions,
} from './server.js';
import { waitFor } from './wait.js';
import { ZooKeeperProcess, ZooKeeperStartError, type RestartOptions } from './zk-process.js';
import type { TestCertificates } from './tls-certs.js';

/** Options of {@link TestingCluster.start}. @group Testing */
export interface TestingClusterOptions extends ZooKeeperTestOptions {
  /** Ticks a follower may take to connect and sync to a leader (default 50: 10 s at 200 ms). */
  initLimit?: number;
  /** Ticks a follower may lag behind the leader (default 25: 5 s at 200 ms). */
  syncLimit?: number;
  /**
   * Routes the traffic between members (replication and election) through a {@link ChaosProxy}
   * per ordered pair of members, so that {@link TestingCluster.isolate},
   * {@link TestingCluster.partition}, {@link TestingCluster.cutLink} and
   * {@link TestingCluster.delayLinks} can cut or slow it while clients stay connected to their
   * member (default false). Needs `reconfigEnabled=false` (ZooKeeper's default), as each member
   * then has its own view of the others' addresses.
   */
  memberLinks?: boolean;
}

/** The keys of {@link TestingClusterOptions}. @internal */
export const TESTING_CLUSTER_OPTION_KEYS = optionKeys<TestingClusterOptions, ZooKeeperTestOptions>({ initLimit: true, syncLimit: true, memberLinks: true }, ZOOKEEPER_TEST_OPTION_KEYS);

/** Options of {@link TestingCluster.waitForQuorum}. @group Testing */
export interface WaitForQuorumOptions {
  /** Deadline in milliseconds (default 30000). */
  timeoutMs?: number;
}

/** The keys of {@link WaitForQuorumOptions}. @internal */
export const WAIT_FOR_QUORUM_OPTION_KEYS = optionKeys<WaitForQuorumOptions>({ timeoutMs: true });

/** Ports and folders of one ensemble member, as {@link TestingCluster.start} plans them. @internal */
export interface ClusterMemberPlan {
  /** Server id. */
  readonly id: number;
  /** Client port. */
  readonly clientPort: number;
  /** Quorum (follower to leader) port. */
  readonly peerPort: number;
  /** Leader election port. */
  readonly electionPort: number;
  /** TLS client port, with the `tls` option. */
  readonly securePort?: number;
  /** The member's own folder (zoo.cfg, data/). */
  readonly workDir: string;
  /** The cluster's folder, holding every member's. */
  readonly clusterDir: string;
}

/**
 * One server of a {@link TestingCluster}: a ZooKeeper JVM with its `id` (myid),
 * client port, and quorum ports. Stop, kill and restart keep ports and data.
 * @group Testing
 */
export class ClusterMember extends ZooKeeperProcess {
  /** Server id (`myid`, the N of `server.N`). */
  readonly id: number;
  /** Port followers use to talk to the leader. */
  readonly peerPort: number;
  /** Port used for leader election. */
  readonly electionPort: number;

  /** Creates a member; {@link TestingCluster.start} does this. @internal */
  constructor(
    installation: ZooKeeperInstallation,
    plan: ClusterMemberPlan,
    config: string,
    options: TestingClusterOptions,
  ) {
    super({
      installation,
      workDir: plan.workDir,
      cleanupDir: plan.clusterDir,
      dataDir: join(plan.workDir, 'data'),
      port: plan.clientPort,
      securePort: plan.securePort,
      config,
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      jvmArgs: options.jvmArgs ?? [],
    });
    this.id = plan.id;
    this.peerPort = plan.peerPort;
    this.electionPort = plan.electionPort;
  }

  /** Stops the member for good (the cluster removes the files). @internal */
  close(): Promise<void> {
    return this.shutdown();
  }
}

const PORT_ATTEMPTS = 5;
/** The largest ensemble the kit starts: each member is a JVM. */
const MAX_MEMBERS = 15;

/**
 * A ZooKeeper ensemble of `size` servers (ids 1..size) on 127.0.0.1 for tests.
 * Members can be stopped, killed and restarted one by one to exercise leader loss,
 * lost quorum and reconnection to another server.
 * @group Testing
 */
export class TestingCluster {
  /** The members, ordered by id. */
  readonly members: readonly ClusterMember[];
  /** Folder holding every member's files; removed by `close()`. */
  readonly workDir: string;
  readonly #links: MemberLinks | undefined;
  #closing: Promise<void> | undefined;
  /** The certificates generated for `tls: true` (`certificates.clientTls` for a session); undefined otherwise. */
  readonly certificates: TestCertificates | undefined;

  private constructor(members: readonly ClusterMember[], workDir: string, links: MemberLinks | undefined, certificates?: TestCertificates) {
    this.members = members;
    this.workDir = workDir;
    this.#links = links;
    this.certificates = certificates;
  }

  /**
   * Starts an ensemble of `size` servers (1 to 15) and resolves once it has a leader and every
   * member serves. Every argument is checked first.
   * @throws InvalidArgumentError for a bad size or option (nothing is started).
   * @throws ZooKeeperNotInstalledError when java or the jars are missing.
   * @throws ZooKeeperStartError when a JVM exits or the ensemble does not form in time.
   */
  static async start(size = 3, options: TestingClusterOptions = {}): Promise<TestingCluster> {
    checkInt(size, 'cluster size', 1, MAX_MEMBERS);
    checkTestOptions(options, 'TestingCluster.start', TESTING_CLUSTER_OPTION_KEYS);
    checkInt(options.initLimit, 'initLimit', 1, 10_000, 50);
    checkInt(options.syncLimit, 'syncLimit', 1, 10_000, 25);
    if (checkBoolean(options.memberLinks, 'memberLinks', false) && options.extraConfig?.some((line) => /^\s*reconfigEnabled\s*=\s*true\s*$/i.test(line))) {
      // Why: a reconfig-enabled follower adopts the leader's config, which lists the others at the leader's proxies.
      throw new InvalidArgumentError('memberLinks needs reconfigEnabled=false: each member lists the others at its own link proxies');
    }
    const installation = installationFor(options);
    for (let attempt = 1; ; attempt++) {
      let cluster: TestingCluster;
      try {
        cluster = await TestingCluster.#create(installation, size, options);
      } catch (error) {
        // A link proxy's port taken by another process between picking and binding: pick again.
        if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < PORT_ATTEMPTS) continue;
        throw error;
      }
      // allSettled: no member may still be launching when we close after a failure.
      const results = await Promise.allSettled(cluster.members.map((m) => m.restart()));
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      try {
        if (failure) throw failure.reason;
        await cluster.waitForQuorum({ timeoutMs: options.startTimeoutMs ?? 30_000 });
        return cluster;
      } catch (error) {
        await cluster.close();
        const busy = results.some(
          (r) => r.status === 'rejected' && r.reason instanceof ZooKeeperStartError && r.reason.portInUse,
        );
        if (!busy || attempt >= PORT_ATTEMPTS) throw error;
      }
    }
  }

  static async #create(
    installation: ZooKeeperInstallation,
    size: number,
    options: TestingClusterOptions,
  ): Promise<TestingCluster> {
    const root = await makeWorkDir('zk-recipes-cluster-');
    // One draw for members and link proxies: no port is given twice.
    const linkPorts = options.memberLinks ? linkProxyCount(size) : 0;
    // TLS ports come last, so that the member and link ports are where they are without TLS.
    const ports = await freePorts(3 * size + linkPorts + (options.tls ? size : 0));
    const plans: ClusterMemberPlan[] = [];
    for (let i = 0; i < size; i++) {
      const port = (k: number): number => ports[3 * i + k] ?? 0;
      const id = i + 1;
      const securePort = options.tls ? ports[3 * size + linkPorts + i] : undefined;
      plans.push({ id, clientPort: port(0), peerPort: port(1), electionPort: port(2), securePort, workDir: join(root, String(id)), clusterDir: root });
    }
    let links: MemberLinks | undefined;
    try {
      if (options.memberLinks) links = await MemberLinks.start(plans, ports.slice(3 * size, 3 * size + linkPorts));
      // One set of certificates for the whole ensemble (its server certificate names 127.0.0.1).
      const tls = await testServerTls(options, join(root, 'tls'));
      return new TestingCluster(await TestingCluster.#members(installation, plans, await withSasl(root, options), links, tls.lines), root, links, tls.certificates);
    } catch (error) {
      await links?.close();
      await removeWorkDir(root);
      throw error;
    }
  }

  /** Writes every member's myid and zoo.cfg. */
  static async #members(
    installation: ZooKeeperInstallation,
    plans: readonly ClusterMemberPlan[],
    options: TestingClusterOptions,
    links: MemberLinks | undefined,
    tlsLines: (securePort: number | undefined) => string[],
  ): Promise<ClusterMember[]> {
    const servers = plans.map((p) => `server.${p.id}=${LOOPBACK}:${p.peerPort}:${p.electionPort}`);
    const members: ClusterMember[] = [];
    for (const plan of plans) {
      const dataDir = join(plan.workDir, 'data');
      await mkdir(dataDir, { recursive: true });
      await writeFile(join(dataDir, 'myid'), `${plan.id}\n`);
      const config = [
        ...baseConfig(options, dataDir, plan.clientPort),
        `initLimit=${options.initLimit ?? 50}`,
        `syncLimit=${options.syncLimit ?? 25}`,
        // Member links: every member has its own view of the others' addresses (see MemberLinks).
        ...(links ? ['reconfigEnabled=false', ...links.serverLines(plan.id, plans)] : servers),
        ...tlsLines(plan.securePort),
        ...(options.extraConfig ?? []),
      ];
      members.push(new ClusterMember(installation, plan, `${config.join('\n')}\n`, options));
    }
    return members;
  }

  /**
   * Comma-separated `127.0.0.1:SECUREPORT` of every member, for a client with the `tls` option.
   * @throws IllegalStateError when the cluster was started without `tls`.
   */
  get secureConnectString(): string {
    return this.members.map((m) => m.secureConnectString).join(',');
  }

  /** Comma-separated `127.0.0.1:PORT` of every member, for a client. */
  get connectString(): string {
    return this.members.map((m) => m.connectString).join(',');
  }

  /** The member with server id `id`. @throws InvalidArgumentError for an unknown id. */
  member(id: number): ClusterMember {
    const member = this.members.find((m) => m.id === id);
    if (!member) throw new InvalidArgumentError(`no member with id ${describe(id)} (ids are 1..${this.members.length})`);
    return member;
  }

  /** SIGKILLs member `id`, like a crash. */
  kill(id: number): Promise<void> {
    return this.member(id).kill();
  }

  /** Stops member `id` gracefully. */
  stop(id: number): Promise<void> {
    return this.member(id).stop();
  }

  /**
   * Restarts member `id` on its ports and data. Waits until it serves unless
   * `waitUntilServing: false` (needed when the others have no quorum yet).
   */
  restart(id: number, options?: RestartOptions): Promise<void> {
    return this.member(id).restart(options);
  }

  /**
   * The link that carries what member `from` sends to member `to`: the proxies in front of
   * `to`'s quorum and election ports that `from`'s zoo.cfg lists, e.g. to read their bytes.
   * @throws InvalidArgumentError without `memberLinks`, for an unknown id or for `from === to`.
   */
  link(from: number, to: number): MemberLink {
    return this.#linksFor('link').link(...this.#pair(from, to));
  }

  /**
   * Cuts member `id` off from every other member, both ways, as a network partition would:
   * nothing is closed (no FIN, no RST), data is held and reads pause until healed. Its client
   * port is untouched: its clients stay connected, and it answers their reads and pings from its
   * own copy until it gives up on the others (a follower after about `syncLimit` x `tickTime`
   * without the leader; a leader after as long without a quorum of followers) and stops serving.
   * Undo with {@link TestingCluster.heal} or {@link TestingCluster.healLink}.
   * @throws InvalidArgumentError without `memberLinks` or for an unknown id.
   */
  isolate(id: number): void {
    const links = this.#linksFor('isolate');
    this.member(id);
    links.set(links.pairsOf(id), { mode: 'blackhole' });
  }

  /**
   * Splits the ensemble into `groups` (e.g. `[[1], [2, 3]]`): every link between members of
   * different groups is cut as by {@link TestingCluster.isolate}, every link inside a group
   * passes (a partition replaces the previous one, delays included). Every member must be in
   * exactly one group.
   * @throws InvalidArgumentError without `memberLinks`, for an empty group, an unknown id, a
   * member in two groups or in none.
   */
  partition(groups: readonly (readonly number[])[]): void {
    const links = this.#linksFor('partition');
    const { cut, keep } = partitionPairs(groups, this.members.map((m) => m.id), (id) => this.member(id));
    links.set(keep, { mode: 'pass' });
    links.set(cut, { mode: 'blackhole' });
  }

  /**
   * Cuts the link between members `a` and `b`, both ways, as {@link TestingCluster.isolate} does.
   * @throws InvalidArgumentError without `memberLinks`, for an unknown id or for `a === b`.
   */
  cutLink(a: number, b: number): void {
    this.#linksFor('cutLink').set([this.#pair(a, b)], { mode: 'blackhole' });
  }

  /**
   * Restores the link between members `a` and `b` to pass mode, both ways; what it held flows on.
   * @throws InvalidArgumentError without `memberLinks`, for an unknown id or for `a === b`.
   */
  healLink(a: number, b: number): void {
    this.#linksFor('healLink').set([this.#pair(a, b)], { mode: 'pass' });
  }

  /**
   * Delays every chunk on every link to and from member `id` by `ms` (0 to 2^31-1; 0 restores
   * pass mode), keeping order: a slow, lagging member. A round trip between `id` and another
   * member takes at least `2 x ms` more. Replaces a cut on those links.
   * @throws InvalidArgumentError without `memberLinks`, for an unknown id or a bad `ms`.
   */
  delayLinks(id: number, ms: number): void {
    const links = this.#linksFor('delayLinks');
    this.member(id);
    const delay = checkDelay(ms);
    links.set(links.pairsOf(id), delay === 0 ? { mode: 'pass' } : { mode: 'latency', ms: delay });
  }

  /**
   * Restores every member-to-member link to pass mode; held data flows on.
   * @throws InvalidArgumentError without `memberLinks`.
   */
  heal(): void {
    const links = this.#linksFor('heal');
    links.set(links.allPairs(), { mode: 'pass' });
  }

  #linksFor(what: string): MemberLinks {
    if (this.#links === undefined) throw new InvalidArgumentError(`${what}: this cluster has no member links; start it with TestingCluster.start(size, { memberLinks: true })`);
    return this.#links;
  }

  #pair(a: number, b: number): [number, number] {
    this.member(a);
    this.member(b);
    if (a === b) throw new InvalidArgumentError(`a link joins two different members, got ${describe(a)} twice`);
    return [a, b];
  }

  /** Id of the running member that reports `Mode: leader` in `srvr`, if any. */
  async leaderId(options: FourLetterWordOptions = { timeoutMs: 2000 }): Promise<number | undefined> {
    checkDeadline(checkOptions(options, 'leaderId', FOUR_LETTER_WORD_OPTION_KEYS).timeoutMs, 'timeoutMs', 2000);
    const modes = await this.#modes(options);
    return modes.find((m) => m.mode === 'leader')?.id;
  }

  /**
   * Waits until a majority of members runs, every running member serves and exactly one
   * is leader; resolves to the leader's id.
   * @throws WaitTimeoutError after `timeoutMs`; InvalidArgumentError for a bad option.
   */
  async waitForQuorum(options: WaitForQuorumOptions = {}): Promise<number> {
    const timeoutMs = checkDeadline(checkOptions(options, 'waitForQuorum', WAIT_FOR_QUORUM_OPTION_KEYS).timeoutMs, 'timeoutMs', 30_000);
    const majority = Math.floor(this.members.length / 2) + 1;
    return waitFor(
      async () => {
        const modes = await this.#modes({ timeoutMs: 1000 });
        if (modes.length < majority || modes.some((m) => m.mode === undefined)) return undefined;
        const leaders = modes.filter((m) => m.mode === 'leader' || m.mode === 'standalone');
        return leaders.length === 1 ? leaders[0]?.id : undefined;
      },
      { timeoutMs, intervalMs: 50, message: 'a quorum with one leader' },
    );
  }

  async #modes(options: FourLetterWordOptions): Promise<{ id: number; mode: string | undefined }[]> {
    const running = this.members.filter((m) => m.running);
    return Promise.all(
      running.map(async (m) => ({ id: m.id, mode: (await m.srvr(options).catch(() => undefined))?.mode })),
    );
  }

  /** Stops every member and removes all their files. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all(this.members.map((m) => m.close()));
      await this.#links?.close();
      await removeWorkDir(this.workDir);
    })();
    return this.#closing;
  }

  /** Same as {@link TestingCluster.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
