/**
 * The links between ensemble members of a {@link TestingCluster} started with `memberLinks`:
 * a {@link ChaosProxy} per ordered pair of members and port (quorum, election), so tests can
 * partition or slow replication and election traffic while clients stay connected.
 *
 * @internal
 * @module
 */
import { InvalidArgumentError } from '../errors.js';
import { checkTimeout, describe } from './check.js';
import { LOOPBACK } from './ports.js';
import { ChaosProxy, type ChaosProxyOptions } from './proxy.js';

/**
 * The two proxies that carry what member `from` sends to member `to`: `from`'s zoo.cfg lists
 * `server.<to>` at their ports. Member `from` opens its connections to `to` through them (a
 * follower's connection to its leader, election connections), and the answers come back
 * through the same connections.
 * @group Testing
 */
export interface MemberLink {
  /** The member that connects through this link. */
  readonly from: number;
  /** The member it reaches. */
  readonly to: number;
  /** Proxy in front of `to`'s quorum port (follower to leader traffic). */
  readonly peer: ChaosProxy;
  /** Proxy in front of `to`'s election port. */
  readonly election: ChaosProxy;
}

/** Ports of one member, as the links need them. */
interface MemberPorts {
  readonly id: number;
  readonly peerPort: number;
  readonly electionPort: number;
}

/** What a link does with its traffic. */
type LinkState = { readonly mode: 'pass' } | { readonly mode: 'blackhole' } | { readonly mode: 'latency'; readonly ms: number };

/** Longest advertised election address list we rewrite (a handshake is a few dozen bytes). */
const MAX_ADDRESS_BYTES = 4096;

/**
 * Rewrites the election handshake (`InitialMessage`: version, sid, length, `host:port[|...]`)
 * in `head` so that it advertises `address`; undefined while `head` is too short to tell. Why: a
 * member with the larger id answers a connection from a smaller one by connecting back to the
 * address *advertised in the handshake*, not to the one in its own zoo.cfg; the advertised one
 * is the sender's real port, which would bypass the proxies. `address` is the proxy the
 * receiver must connect back through.
 */
export function rewriteElectionHead(head: Buffer, address: string): Buffer | undefined {
  if (head.length < 8) return undefined;
  if (head.readBigInt64BE(0) >= 0n) return head; // pre-3.5 handshake: the sid alone
  if (head.length < 20) return undefined;
  const length = head.readInt32BE(16);
  if (length < 0 || length > MAX_ADDRESS_BYTES) return head; // not a handshake we know: as is
  if (head.length < 20 + length) return undefined;
  const advertised = Buffer.from(address, 'latin1');
  const size = Buffer.alloc(4);
  size.writeInt32BE(advertised.length);
  return Buffer.concat([head.subarray(0, 16), size, advertised, head.subarray(20 + length)]);
}

/**
 * How long a follower's connection to a member not listening on its quorum port is held and
 * retried (see ChaosProxyOptions.retryRefusedMs): a new leader listens within moments of being
 * elected, and a follower that connected before would have retried a refused connection.
 */
const PEER_RETRY_REFUSED_MS = 5000;

/** Number of proxies {@link MemberLinks.start} needs for `size` members. */
export function linkProxyCount(size: number): number {
  return 2 * size * (size - 1);
}

/** Every member-to-member link of a cluster. @internal */
export class MemberLinks {
  readonly #links = new Map<string, MemberLink>();
  readonly #ids: readonly number[];

  private constructor(ids: readonly number[]) {
    this.#ids = ids;
  }

  /**
   * Starts the proxies of every ordered pair of `members`, in pass mode, on `ports` (2 per pair,
   * picked with the members' own so that none is given twice).
   * @throws Error with code EADDRINUSE when another process took one of `ports` meanwhile.
   */
  static async start(members: readonly MemberPorts[], ports: readonly number[]): Promise<MemberLinks> {
    const links = new MemberLinks(members.map((m) => m.id));
    const started: ChaosProxy[] = [];
    const begin = async (options: ChaosProxyOptions): Promise<ChaosProxy> => {
      const proxy = await ChaosProxy.start({ ...options, port: ports[started.length] });
      started.push(proxy);
      return proxy;
    };
    // Where `to` connects back to `from`: the reverse link's election proxy, known once all listen.
    const back = new Map<string, string>();
    try {
      for (const from of members) {
        for (const to of members) {
          if (from.id === to.id) continue;
          const k = key(from.id, to.id);
          const election = await begin({ targetPort: to.electionPort, rewriteHead: (head) => rewriteElectionHead(head, back.get(k) ?? '') });
          // A new leader's followers may connect before it listens: retried, as a refusal is.
          const peer = await begin({ targetPort: to.peerPort, retryRefusedMs: PEER_RETRY_REFUSED_MS });
          links.#links.set(k, { from: from.id, to: to.id, peer, election });
        }
      }
      for (const link of links.#links.values()) back.set(key(link.from, link.to), links.link(link.to, link.from).election.connectString);
      return links;
    } catch (error) {
      await Promise.all(started.map((p) => p.close()));
      throw error;
    }
  }

  /** The `server.N` lines of member `id`'s zoo.cfg: its own at its real ports, every other one at the link proxies. */
  serverLines(id: number, members: readonly MemberPorts[]): string[] {
    return members.map((m) => {
      if (m.id === id) return `server.${m.id}=${LOOPBACK}:${m.peerPort}:${m.electionPort}`;
      const link = this.link(id, m.id);
      return `server.${m.id}=${LOOPBACK}:${link.peer.port}:${link.election.port}`;
    });
  }

  /** The link from `from` to `to` (ids already checked). */
  link(from: number, to: number): MemberLink {
    const link = this.#links.get(key(from, to));
    if (!link) throw new InvalidArgumentError(`no link from member ${describe(from)} to member ${describe(to)}`);
    return link;
  }

  /** Sets both directions of every pair in `pairs`. */
  set(pairs: readonly (readonly [number, number])[], state: LinkState): void {
    for (const [a, b] of pairs) {
      for (const link of [this.link(a, b), this.link(b, a)]) {
        for (const proxy of [link.peer, link.election]) {
          if (state.mode === 'pass') proxy.pass();
          else if (state.mode === 'blackhole') proxy.blackhole();
          else proxy.latency(state.ms);
        }
      }
    }
  }

  /** Every unordered pair of members, once. */
  allPairs(): [number, number][] {
    return this.#ids.flatMap((a) => this.#ids.filter((b) => b > a).map((b): [number, number] => [a, b]));
  }

  /** The pairs between member `id` and every other one. */
  pairsOf(id: number): [number, number][] {
    return this.#ids.filter((other) => other !== id).map((other): [number, number] => [id, other]);
  }

  /** Closes every proxy. Idempotent. */
  async close(): Promise<void> {
    const proxies = [...this.#links.values()].flatMap((l) => [l.peer, l.election]);
    await Promise.all(proxies.map((p) => p.close()));
  }
}

function key(from: number, to: number): string {
  return `${from}>${to}`;
}

/**
 * Checks `groups` of {@link TestingCluster.partition}: arrays of known ids, none empty, every
 * member in exactly one. Returns the pairs of members in different groups and those in one group.
 */
export function partitionPairs(groups: unknown, ids: readonly number[], checkId: (id: number) => void): { cut: [number, number][]; keep: [number, number][] } {
  if (!Array.isArray(groups) || groups.length === 0) throw new InvalidArgumentError(`partition needs a non-empty array of groups of member ids, e.g. [[1], [2, 3]]; got ${describe(groups)}`);
  const groupOf = new Map<number, number>();
  for (const [g, group] of (groups as unknown[]).entries()) {
    if (!Array.isArray(group) || group.length === 0) throw new InvalidArgumentError(`partition: group ${g} must be a non-empty array of member ids, got ${describe(group)}`);
    for (const id of group as unknown[]) {
      checkId(id as number);
      const seen = groupOf.get(id as number);
      if (seen !== undefined) throw new InvalidArgumentError(`partition: member ${describe(id)} is in group ${seen} and group ${g}; a member belongs to one group`);
      groupOf.set(id as number, g);
    }
  }
  const missing = ids.filter((id) => !groupOf.has(id));
  if (missing.length > 0) throw new InvalidArgumentError(`partition: member(s) ${missing.join(', ')} in no group; list every member (ids are ${ids.join(', ')})`);
  const cut: [number, number][] = [];
  const keep: [number, number][] = [];
  for (const a of ids) for (const b of ids) if (a < b) (groupOf.get(a) === groupOf.get(b) ? keep : cut).push([a, b]);
  return { cut, keep };
}

/** Checks a link delay: 0 to 2^31-1 ms. */
export function checkDelay(ms: unknown): number {
  if (ms === undefined) throw new InvalidArgumentError('delayLinks needs a number of ms');
  return checkTimeout(ms, 'delayLinks ms') as number;
}
