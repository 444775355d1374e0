import { connect } from 'node:net';
import { InvalidArgumentError } from '../errors.js';
import { checkDeadline, checkNonEmptyString, checkOptions, checkPort, describe, optionKeys } from './check.js';
import { WaitTimeoutError } from './wait.js';

/** Options of the four-letter-word helpers. @group Testing */
export interface FourLetterWordOptions {
  /** Deadline for connect, send and the whole reply, in milliseconds (default 5000). */
  timeoutMs?: number;
}

/** The keys of {@link FourLetterWordOptions}. @internal */
export const FOUR_LETTER_WORD_OPTION_KEYS = optionKeys<FourLetterWordOptions>({ timeoutMs: true });

/** The text a server sends to most words while it is not serving (electing, starting). @group Testing */
export const NOT_SERVING = 'This ZooKeeper instance is not currently serving requests';

/**
 * Sends a ZooKeeper four-letter word (`ruok`, `srvr`, `mntr`, ...) over raw TCP and
 * resolves to the whole reply, read until the server closes the connection.
 * The server must allow the word (`4lw.commands.whitelist=*`, as the test servers do).
 * @throws WaitTimeoutError when no complete reply arrives within `timeoutMs`;
 *   socket errors (e.g. ECONNREFUSED) as they come.
 * @group Testing
 */
export function fourLetterWord(
  host: string,
  port: number,
  word: string,
  options: FourLetterWordOptions = {},
): Promise<string> {
  let timeoutMs: number;
  try {
    checkAddress(host, port);
    if (typeof word !== 'string' || !/^[a-z]{4}$/.test(word)) throw new InvalidArgumentError(`word must be four lowercase letters (ruok, srvr, mntr, ...), got ${describe(word)}`);
    timeoutMs = checkWordOptions(options);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new WaitTimeoutError(`no reply to '${word}' from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** The checks of a host and port to ask. */
function checkAddress(host: unknown, port: unknown): void {
  checkNonEmptyString(host, 'host');
  checkPort(port, 'port');
}

/** The deadline of a four-letter word, from its options (default 5000 ms). */
function checkWordOptions(options: FourLetterWordOptions | undefined, what = 'fourLetterWord'): number {
  return checkDeadline(checkOptions(options, what, FOUR_LETTER_WORD_OPTION_KEYS).timeoutMs, 'timeoutMs', 5000);
}

/** Throws {@link InvalidArgumentError} unless `text` is a string (a server's reply). */
function checkText(text: unknown): asserts text is string {
  if (typeof text !== 'string') throw new InvalidArgumentError(`text must be a four-letter word's reply (a string), got ${describe(text)}`);
}

/**
 * Asks `ruok`: true when the server answers `imok`, false when it does not or cannot be
 * reached. Bad arguments reject with {@link InvalidArgumentError} (never taken as "not ok").
 * @group Testing
 */
export async function ruok(host: string, port: number, options?: FourLetterWordOptions): Promise<boolean> {
  checkAddress(host, port);
  checkWordOptions(options);
  try {
    return (await fourLetterWord(host, port, 'ruok', options)) === 'imok';
  } catch {
    return false;
  }
}

/** Values of `mntr`: numbers where the value is numeric, strings otherwise. @group Testing */
export type MntrStats = Record<string, string | number>;

/** Parses the tab-separated `mntr` reply; numeric values become numbers. @group Testing */
export function parseMntr(text: string): MntrStats {
  checkText(text);
  const stats: MntrStats = {};
  for (const line of text.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab <= 0) continue;
    const value = line.slice(tab + 1).trim();
    stats[line.slice(0, tab)] = /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  }
  return stats;
}

/** Asks `mntr` and parses it (`zk_server_state`, `zk_znode_count`, `zk_watch_count`, ...). @group Testing */
export async function mntr(host: string, port: number, options?: FourLetterWordOptions): Promise<MntrStats> {
  return parseMntr(await fourLetterWord(host, port, 'mntr', options));
}

/** The role a serving ZooKeeper server reports in `srvr`. @group Testing */
export type ZooKeeperMode = 'leader' | 'follower' | 'observer' | 'standalone' | 'read-only';

/** The parsed reply to `srvr`. @group Testing */
export interface ServerStatus {
  /** Role of the server. */
  readonly mode: ZooKeeperMode;
  /** Last zxid the server saw. */
  readonly zxid: bigint;
  /** Number of znodes. */
  readonly nodeCount: number;
  /** Number of open client connections (this one included). */
  readonly connections: number;
  /** All `Key: value` lines as they came. */
  readonly fields: Readonly<Record<string, string>>;
}

/** Parses a `srvr` reply; undefined when the server is not serving (no `Mode:` line). @group Testing */
export function parseSrvr(text: string): ServerStatus | undefined {
  checkText(text);
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 2).trim();
  }
  const mode = fields.Mode;
  if (mode === undefined) return undefined;
  return {
    mode: mode as ZooKeeperMode,
    zxid: BigInt(fields.Zxid ?? '0'),
    nodeCount: Number(fields['Node count'] ?? 0),
    connections: Number(fields.Connections ?? 0),
    fields,
  };
}

/**
 * Asks `srvr`. Resolves to undefined when the server answers but does not serve
 * (starting, or electing a leader); rejects when it cannot be reached.
 * @group Testing
 */
export async function srvr(
  host: string,
  port: number,
  options?: FourLetterWordOptions,
): Promise<ServerStatus | undefined> {
  return parseSrvr(await fourLetterWord(host, port, 'srvr', options));
}

/**
 * Parses `wchc` (session id to paths) or `wchp` (path to session ids) into a Map:
 * unindented lines are keys, tab-indented lines below them are values.
 * @group Testing
 */
export function parseWatches(text: string): Map<string, string[]> {
  checkText(text);
  const watches = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (/^\s/.test(line)) {
      current?.push(line.trim());
    } else {
      current = [];
      watches.set(line.trim(), current);
    }
  }
  return watches;
}

/** Asks `wchc`: watched paths by session id (`0x...`). The server lists data watches only (`getData`, `exists`), not child watches. @group Testing */
export async function watchesBySession(
  host: string,
  port: number,
  options?: FourLetterWordOptions,
): Promise<Map<string, string[]>> {
  return parseWatches(await fourLetterWord(host, port, 'wchc', options));
}

/** Asks `wchp`: watching session ids (`0x...`) by path. Data watches only, as `wchc`. @group Testing */
export async function watchesByPath(
  host: string,
  port: number,
  options?: FourLetterWordOptions,
): Promise<Map<string, string[]>> {
  return parseWatches(await fourLetterWord(host, port, 'wchp', options));
}

/** One client connection as listed by `cons`. @group Testing */
export interface ConnectionInfo {
  /** Client address as the server sees it. */
  readonly remoteAddress: string;
  /** Client port as the server sees it. */
  readonly remotePort: number;
  /** Session id (`0x...`), once the session is established. */
  readonly sessionId?: string;
  /** Negotiated session timeout in milliseconds, once established. */
  readonly timeoutMs?: number;
  /** Every `key=value` pair (queued, recved, sent, sid, lop, est, to, lcxid, ...). */
  readonly stats: Readonly<Record<string, string>>;
}

/** Parses a `cons` reply, one {@link ConnectionInfo} per line. @group Testing */
export function parseCons(text: string): ConnectionInfo[] {
  checkText(text);
  const connections: ConnectionInfo[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s*\/?(.+):(\d+)\[\d+\]\((.*)\)\s*$/.exec(line);
    if (!match) continue;
    const [, remoteAddress = '', remotePort = '0', pairs = ''] = match;
    const stats: Record<string, string> = {};
    for (const pair of pairs.split(',')) {
      const eq = pair.indexOf('=');
      if (eq > 0) stats[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    connections.push({
      remoteAddress,
      remotePort: Number(remotePort),
      ...(stats.sid !== undefined && { sessionId: stats.sid }),
      ...(stats.to !== undefined && { timeoutMs: Number(stats.to) }),
      stats,
    });
  }
  return connections;
}

/** Asks `cons`: the server's client connections (the asking one included). @group Testing */
export async function cons(
  host: string,
  port: number,
  options?: FourLetterWordOptions,
): Promise<ConnectionInfo[]> {
  return parseCons(await fourLetterWord(host, port, 'cons', options));
}

/** One session in a `dump`. @group Testing */
export interface TrackedSession {
  /** Its id (`0x...`). */
  readonly sessionId: string;
  /** When the leader expires it unless it is touched (the server's clock, as it prints it). */
  readonly expiresAt: string;
}

/** What the leader's `dump` lists: the sessions it tracks and the ephemerals they own. @group Testing */
export interface SessionDump {
  /** Every session the leader tracks, with when it expires unless touched. */
  readonly sessions: readonly TrackedSession[];
  /** Ephemeral paths by owner session (`0x...`). */
  readonly ephemerals: ReadonlyMap<string, readonly string[]>;
}

/**
 * Parses a `dump` reply. Only the leader tracks sessions: a follower's reply lists its
 * ephemerals and no sessions.
 * @group Testing
 */
export function parseDump(text: string): SessionDump {
  checkText(text);
  const sessions: { sessionId: string; expiresAt: string }[] = [];
  const ephemerals = new Map<string, string[]>();
  let part: 'sessions' | 'ephemerals' | 'other' = 'other';
  let expiresAt = '';
  let owner: string[] | undefined;
  for (const line of text.split('\n')) {
    if (/^Session Sets /.test(line)) part = 'sessions';
    else if (/^Sessions with Ephemerals /.test(line)) part = 'ephemerals';
    else if (/^(Connections dump|ephemeral nodes dump|Connections Sets )/.test(line)) part = 'other';
    else if (part === 'sessions') {
      const bucket = /^\d+ expire at (.+):\s*$/.exec(line);
      if (bucket) expiresAt = bucket[1] ?? '';
      else if (/^\s+0x[0-9a-f]+\s*$/i.test(line)) sessions.push({ sessionId: line.trim(), expiresAt });
    } else if (part === 'ephemerals') {
      const key = /^(0x[0-9a-f]+):\s*$/i.exec(line);
      if (key) {
        owner = [];
        ephemerals.set(key[1] ?? '', owner);
      } else if (/^\s+\//.test(line)) owner?.push(line.trim());
    }
  }
  return { sessions, ephemerals };
}

/** Asks `dump` (meaningful on the leader): tracked sessions and ephemerals. @group Testing */
export async function dump(host: string, port: number, options?: FourLetterWordOptions): Promise<SessionDump> {
  return parseDump(await fourLetterWord(host, port, 'dump', options));
}
