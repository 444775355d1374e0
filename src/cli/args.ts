/**
 * The command line of `zkr`, parsed into a {@link Command}: options may come before or after the
 * subcommand and its path; the command to run starts at `--` or at the first word after the
 * path that is not an option (as flock(1) and timeout(1) read theirs).
 *
 * @internal
 * @module
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { constants } from 'node:os';
import type { SaslOptions } from '../client/sasl.js';
import type { TlsFiles } from '../client/tls.js';
import type { AuthInfo } from '../client/types.js';

/** What `zkr` holds while its command runs. @internal */
export type Mode = 'lock' | 'semaphore' | 'read' | 'write' | 'elect';

/** The subcommands. @internal */
export type Subcommand = Mode | 'inspect' | 'queue' | 'watch';

/** The operations of `zkr queue`. @internal */
export type QueueOp = 'put' | 'take' | 'size' | 'dead-letters';

/** A usage error: reported in one line with a pointer to `--help`, exit 64. @internal */
export class UsageError extends Error {
  /** The subcommand whose help to point at, if known. */
  readonly subcommand: Subcommand | undefined;
  constructor(message: string, subcommand?: Subcommand) {
    super(message);
    this.name = 'UsageError';
    this.subcommand = subcommand;
  }
}

/** How to reach ZooKeeper; shared by every subcommand. @internal */
export interface ConnectOptions {
  /** The connect string (`--connect`, else `ZK_CONNECT`, else 127.0.0.1:2181). */
  connect: string;
  /** Requested session timeout, ms (`--session-timeout`). */
  sessionTimeoutMs: number;
  /** How long to wait for the first connection, ms (`--connect-timeout`). */
  connectTimeoutMs: number;
  /** Credentials (`--auth`, `--auth-file`); never printed. */
  auth: AuthInfo[];
  /** TLS PEM files (`--tls-ca`, `--tls-cert`, `--tls-key`, `--tls-servername`, else `ZK_TLS_*`); undefined: plain TCP. */
  tls: TlsFiles | undefined;
  /** SASL DIGEST-MD5 (`--sasl-user`, password from `--sasl-password-file` or `ZK_SASL_PASSWORD`); the password is never printed. */
  sasl: SaslOptions | undefined;
  /** Timestamped state changes on stderr. */
  verbose: boolean;
}

/** The ACL of the nodes `zkr` creates (`--acl`): open to all, or all permissions to our identity only. @internal */
export type AclChoice = 'open' | 'creator';

/** `zkr lock|semaphore|read|write|elect PATH [OPTIONS] -- CMD ARGS...` (and `elect --observe`). @internal */
export interface RunCommand extends ConnectOptions {
  /** Which command. */
  kind: 'run';
  /** The ACL of the nodes created (`--acl`). */
  acl: AclChoice;
  /** What to hold. */
  mode: Mode;
  /** The recipe's path. */
  path: string;
  /** How long to wait, ms: 0 = `-n` (exit at once when busy); undefined = without limit. */
  timeoutMs: number | undefined;
  /** The exit code for busy or timed out (`-E`). */
  conflictExitCode: number;
  /** Leases of a semaphore (`--max`). */
  maxLeases: number;
  /** Participant id stored in our node (`--id`); default hostname:pid. */
  id: string | undefined;
  /** Run the command through `/bin/sh -c`. */
  shell: boolean;
  /** Give the child our stdin (else /dev/null). */
  passStdin: boolean;
  /** Between the kill signal and SIGKILL, ms. */
  killGraceMs: number;
  /** The first signal sent to the child's group when it must die. */
  killSignal: NodeJS.Signals;
  /** On SUSPENDED: wait until the deadline of the timing rule, or kill at once. */
  onSuspended: 'wait' | 'kill';
  /** `elect --requeue`: stand again after each term. */
  requeue: boolean;
  /** Where the current state is written (waiting, held, lost, released). */
  statusFile: string | undefined;
  /** The command and its arguments. */
  command: string[];
}

/** `zkr elect PATH --observe`: print each leader change. @internal */
export interface ObserveCommand extends ConnectOptions {
  /** Which command. */
  kind: 'observe';
  /** The election's path. */
  path: string;
  /** One JSON object a line. */
  json: boolean;
}

/** `zkr inspect PATH [--json]`. @internal */
export interface InspectCommand extends ConnectOptions {
  /** Which command. */
  kind: 'inspect';
  /** The recipe's path. */
  path: string;
  /** One JSON document. */
  json: boolean;
}

/** `zkr queue put|take|size|dead-letters PATH`. @internal */
export interface QueueCommand extends ConnectOptions {
  /** Which command. */
  kind: 'queue';
  /** What to do. */
  op: QueueOp;
  /** The ACL of the nodes created (`--acl`). */
  acl: AclChoice;
  /** The queue's path. */
  path: string;
  /** The item of `put` (else read from stdin). */
  data: string | undefined;
  /** How long `take` waits, ms: 0 = `-n`; undefined = without limit. */
  timeoutMs: number | undefined;
  /** The exit code when `take` got nothing in time (`-E`). */
  conflictExitCode: number;
  /** JSON output. */
  json: boolean;
}

/** `zkr watch PATH [--json]`: print each change under PATH. @internal */
export interface WatchCommand extends ConnectOptions {
  /** Which command. */
  kind: 'watch';
  /** The root of the tree watched. */
  path: string;
  /** One JSON object a line. */
  json: boolean;
}

/** `--help`: print this and exit 0. @internal */
export interface HelpCommand {
  /** Which command. */
  kind: 'help';
  /** Whose help: a subcommand's, or undefined for `zkr`'s. */
  subcommand: Subcommand | undefined;
}

/** A parsed command line. @internal */
export type Command = RunCommand | ObserveCommand | InspectCommand | QueueCommand | WatchCommand | HelpCommand;

const SUBCOMMANDS: readonly Subcommand[] = ['lock', 'semaphore', 'read', 'write', 'elect', 'inspect', 'queue', 'watch'];
const MODES: readonly string[] = ['lock', 'semaphore', 'read', 'write', 'elect'];
const QUEUE_OPS: readonly QueueOp[] = ['put', 'take', 'size', 'dead-letters'];
/** The longest a timer waits, ms. */
const MAX_MS = 2 ** 31 - 1;

interface OptionSpec {
  /** Takes a value. */
  value: boolean;
  /** Where it is allowed (undefined: everywhere). */
  only?: readonly Subcommand[];
}

const OPTIONS: Record<string, OptionSpec> = {
  '--connect': { value: true },
  '--session-timeout': { value: true },
  '--connect-timeout': { value: true },
  '--auth': { value: true },
  '--auth-file': { value: true },
  '--tls-ca': { value: true },
  '--tls-cert': { value: true },
  '--tls-key': { value: true },
  '--tls-servername': { value: true },
  '--sasl-user': { value: true },
  '--sasl-password-file': { value: true },
  '--acl': { value: true, only: ['lock', 'semaphore', 'read', 'write', 'elect', 'queue'] },
  '--verbose': { value: false },
  '--help': { value: false },
  '--timeout': { value: true, only: ['lock', 'semaphore', 'read', 'write', 'elect', 'queue'] },
  '--nonblock': { value: false, only: ['lock', 'semaphore', 'read', 'write', 'elect', 'queue'] },
  '--conflict-exit-code': { value: true, only: ['lock', 'semaphore', 'read', 'write', 'elect', 'queue'] },
  '--max': { value: true, only: ['semaphore'] },
  '--id': { value: true, only: ['lock', 'semaphore', 'read', 'write', 'elect'] },
  '--shell': { value: false, only: ['lock', 'semaphore', 'read', 'write', 'elect'] },
  '--pass-stdin': { value: false, only: ['lock', 'semaphore', 'read', 'write', 'elect'] },
  '--kill-grace': { value: true, only: ['lock', 'semaphore', 'read', 'write', 'elect'] },
  '--kill-signal': { value: true, only: ['lock', 'semaphore', 'read', 'write', 'elect'] },
  '--on-suspended': { value: true, only: ['lock', 'semaphore', 'read', 'write', 'elect'] },
  '--status-file': { value: true, only: ['lock', 'semaphore', 'read', 'write', 'elect'] },
  '--requeue': { value: false, only: ['elect'] },
  '--observe': { value: false, only: ['elect'] },
  '--json': { value: false, only: ['inspect', 'queue', 'watch', 'elect'] },
};

const SHORT: Record<string, string> = { '-w': '--timeout', '-n': '--nonblock', '-E': '--conflict-exit-code', '-v': '--verbose', '-h': '--help' };

/** Parses seconds (`1`, `0.5`) into ms. */
function seconds(value: string, option: string, sub: Subcommand | undefined): number {
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value)) throw new UsageError(`${option} takes a number of seconds, got "${value}"`, sub);
  const ms = Math.round(Number(value) * 1000);
  if (ms > MAX_MS) throw new UsageError(`${option} is at most ${Math.floor(MAX_MS / 1000)} seconds, got ${value}`, sub);
  return ms;
}

function integer(value: string, option: string, min: number, max: number, sub: Subcommand | undefined): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`${option} takes an integer from ${min} to ${max}, got "${value}"`, sub);
  return Number(value);
}

/** `TERM`, `SIGTERM` or `15` → `SIGTERM`. */
function signalName(value: string, sub: Subcommand | undefined): NodeJS.Signals {
  const names = Object.keys(constants.signals) as NodeJS.Signals[];
  if (/^\d+$/.test(value)) {
    const byNumber = names.find((n) => constants.signals[n] === Number(value));
    if (byNumber) return byNumber;
  }
  const name = (value.toUpperCase().startsWith('SIG') ? value.toUpperCase() : `SIG${value.toUpperCase()}`) as NodeJS.Signals;
  if (names.includes(name)) return name;
  throw new UsageError(`--kill-signal takes a signal name or number (TERM, INT, HUP, 9...), got "${value}"`, sub);
}

/** `digest:user:password` → `{ scheme, credentials }`; the message never shows the credentials. */
export function parseAuth(value: string, from: string, sub?: Subcommand): AuthInfo {
  const colon = value.indexOf(':');
  if (colon <= 0 || colon === value.length - 1) throw new UsageError(`${from} takes SCHEME:CREDENTIALS (e.g. digest:user:password), got a value without both`, sub);
  return { scheme: value.slice(0, colon), credentials: value.slice(colon + 1) };
}

function authFromFile(file: string, sub: Subcommand | undefined): AuthInfo[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--auth-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`, sub);
  }
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (lines.length === 0) throw new UsageError(`--auth-file ${file} holds no SCHEME:CREDENTIALS line`, sub);
  return lines.map((l) => parseAuth(l, `--auth-file ${file}`, sub));
}

/** The first line of `--sasl-password-file` (its line ending dropped, nothing else). */
function passwordFromFile(file: string, sub: Subcommand | undefined): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--sasl-password-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`, sub);
  }
  const first = text.split(/\r?\n/)[0] ?? '';
  if (first === '') throw new UsageError(`--sasl-password-file ${file}: its first line (the password) is empty`, sub);
  return first;
}

/** `--tls-*` over `ZK_TLS_*`; undefined when neither names a file (plain TCP). */
function tlsFiles(last: (name: string) => string | undefined, env: NodeJS.ProcessEnv, sub: Subcommand | undefined): TlsFiles | undefined {
  const pick = (option: string, variable: string): string | undefined => {
    const v = last(option) ?? (env[variable] || undefined);
    if (v === '') throw new UsageError(`${option} takes a file name, got an empty one`, sub);
    return v;
  };
  const ca = pick('--tls-ca', 'ZK_TLS_CA');
  const cert = pick('--tls-cert', 'ZK_TLS_CERT');
  const key = pick('--tls-key', 'ZK_TLS_KEY');
  const servername = last('--tls-servername');
  if (ca === undefined && cert === undefined && key === undefined && servername === undefined) return undefined;
  if ((cert === undefined) !== (key === undefined)) throw new UsageError('--tls-cert and --tls-key go together: give both (a client certificate and its key) or neither', sub);
  if (servername !== undefined && (servername === '' || isIP(servername) !== 0)) throw new UsageError(`--tls-servername takes a host name (an IP address is checked from --connect), got "${servername}"`, sub);
  return { ...(ca !== undefined && { ca }), ...(cert !== undefined && { cert }), ...(key !== undefined && { key }), ...(servername !== undefined && { servername }) };
}

/**
 * Parses `argv` (without node and the script). `env` supplies `ZK_CONNECT`, `ZK_TLS_CA`,
 * `ZK_TLS_CERT`, `ZK_TLS_KEY` and `ZK_SASL_PASSWORD`.
 * @throws UsageError for anything wrong, before anything is sent.
 */
export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Command {
  const values = new Map<string, string[]>();
  const positional: string[] = [];
  let command: string[] | undefined;
  let sub: Subcommand | undefined;
  const seen: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      command = argv.slice(i + 1);
      break;
    }
    // A run mode's command starts at the first word after its path.
    if (!arg.startsWith('-') || arg === '-') {
      if (sub !== undefined && MODES.includes(sub) && positional.length === 2 && !values.has('--observe')) {
        command = argv.slice(i);
        break;
      }
      positional.push(arg);
      if (positional.length === 1) {
        if (!(SUBCOMMANDS as readonly string[]).includes(arg)) throw new UsageError(`unknown subcommand "${arg}" (one of ${SUBCOMMANDS.join(', ')})`);
        sub = arg as Subcommand;
      }
      continue;
    }
    let name = arg;
    let value: string | undefined;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      name = arg.slice(0, eq);
      value = arg.slice(eq + 1);
    } else if (!arg.startsWith('--') && arg.length > 2 && SHORT[arg.slice(0, 2)]) {
      // -w5, -E3
      name = arg.slice(0, 2);
      value = arg.slice(2);
    }
    name = SHORT[name] ?? name;
    const spec = OPTIONS[name];
    if (!spec) throw new UsageError(`unknown option ${arg}`, sub);
    if (spec.value) {
      if (value === undefined) {
        if (i + 1 >= argv.length) throw new UsageError(`${name} needs a value`, sub);
        value = argv[++i] as string;
      }
    } else if (value !== undefined) throw new UsageError(`${name} takes no value`, sub);
    seen.push(name);
    values.set(name, [...(values.get(name) ?? []), value ?? '']);
  }
  if (values.has('--help')) return { kind: 'help', subcommand: sub };
  if (sub === undefined) throw new UsageError('no subcommand given');
  for (const name of seen) {
    const only = OPTIONS[name]?.only;
    if (only && !only.includes(sub)) throw new UsageError(`${name} is not an option of zkr ${sub}`, sub);
  }
  const last = (name: string): string | undefined => values.get(name)?.at(-1);
  const has = (name: string): boolean => values.has(name);

  const auth: AuthInfo[] = [];
  for (const a of values.get('--auth') ?? []) auth.push(parseAuth(a, '--auth', sub));
  for (const f of values.get('--auth-file') ?? []) auth.push(...authFromFile(f, sub));
  const connect = last('--connect') ?? (env.ZK_CONNECT || '127.0.0.1:2181');
  if (connect.trim() === '') throw new UsageError('--connect takes HOST:PORT[,HOST:PORT...][/chroot]', sub);
  const sessionTimeoutMs = has('--session-timeout') ? seconds(last('--session-timeout') as string, '--session-timeout', sub) : 10_000;
  if (sessionTimeoutMs < 100) throw new UsageError('--session-timeout must be at least 0.1 seconds', sub);
  const connectTimeoutMs = has('--connect-timeout') ? seconds(last('--connect-timeout') as string, '--connect-timeout', sub) : 15_000;
  const tls = tlsFiles(last, env, sub);
  let sasl: SaslOptions | undefined;
  const saslUser = last('--sasl-user');
  if (saslUser !== undefined) {
    if (saslUser === '') throw new UsageError('--sasl-user must not be empty', sub);
    const file = last('--sasl-password-file');
    const password = file !== undefined ? passwordFromFile(file, sub) : env.ZK_SASL_PASSWORD;
    if (password === undefined || password === '') throw new UsageError('--sasl-user needs a password: --sasl-password-file FILE (its first line) or ZK_SASL_PASSWORD (never on the command line)', sub);
    sasl = { mechanism: 'DIGEST-MD5', username: saslUser, password };
  } else if (has('--sasl-password-file')) {
    throw new UsageError('--sasl-password-file goes with --sasl-user NAME', sub);
  }
  const common: ConnectOptions = { connect, sessionTimeoutMs, connectTimeoutMs, auth, tls, sasl, verbose: has('--verbose') };
  const acl = (last('--acl') ?? 'open') as AclChoice;
  if (acl !== 'open' && acl !== 'creator') throw new UsageError(`--acl takes open or creator, got "${acl}"`, sub);
  if (acl === 'creator' && auth.length === 0 && sasl === undefined) throw new UsageError('--acl creator needs an identity to grant: give --auth, --auth-file or --sasl-user', sub);

  let timeoutMs: number | undefined = has('--timeout') ? seconds(last('--timeout') as string, '--timeout', sub) : undefined;
  if (has('--nonblock')) {
    if (timeoutMs !== undefined && timeoutMs !== 0) throw new UsageError('-n/--nonblock and -w/--timeout exclude each other (-w 0 is -n)', sub);
    timeoutMs = 0;
  }
  const conflictExitCode = has('--conflict-exit-code') ? integer(last('--conflict-exit-code') as string, '-E/--conflict-exit-code', 0, 255, sub) : 1;

  const path = positional[1];
  const needPath = (): string => {
    if (path === undefined) throw new UsageError(`zkr ${sub} needs a PATH`, sub);
    if (!path.startsWith('/') || path === '/' || path.endsWith('/') || path.includes('//')) throw new UsageError(`PATH must be an absolute ZooKeeper path other than /, got "${path}"`, sub);
    return path;
  };

  if (sub === 'queue') {
    const op = positional[1] as QueueOp | undefined;
    if (op === undefined || !QUEUE_OPS.includes(op)) throw new UsageError(`zkr queue takes one of ${QUEUE_OPS.join(', ')}, then a PATH`, sub);
    const qpath = positional[2];
    if (qpath === undefined || !qpath.startsWith('/') || qpath === '/' || qpath.endsWith('/')) throw new UsageError(`zkr queue ${op} needs an absolute PATH`, sub);
    const extra = positional.slice(op === 'put' ? 4 : 3);
    if (extra.length > 0 || command !== undefined) throw new UsageError(`unexpected argument "${extra[0] ?? '--'}"`, sub);
    return { kind: 'queue', ...common, op, acl, path: qpath, data: op === 'put' ? positional[3] : undefined, timeoutMs, conflictExitCode, json: has('--json') };
  }
  if (sub === 'inspect' || sub === 'watch' || (sub === 'elect' && has('--observe'))) {
    const p = needPath();
    if (positional.length > 2 || command !== undefined) throw new UsageError(`zkr ${sub}${sub === 'elect' ? ' --observe' : ''} runs no command`, sub);
    if (sub === 'elect') {
      const runOnly = seen.find((n) => n !== '--observe' && n !== '--json' && OPTIONS[n]?.only !== undefined);
      if (runOnly) throw new UsageError(`${runOnly} is not an option of zkr elect --observe (it runs no command)`, sub);
      return { kind: 'observe', ...common, path: p, json: has('--json') };
    }
    return { kind: sub, ...common, path: p, json: has('--json') };
  }
  const mode = sub as Mode;
  const p = needPath();
  if (has('--json')) throw new UsageError('--json is an option of zkr elect --observe only', sub);
  if (command === undefined || command.length === 0) throw new UsageError(`zkr ${sub} needs a command to run: zkr ${sub} PATH [OPTIONS] -- CMD [ARGS...]`, sub);
  let maxLeases = 1;
  if (mode === 'semaphore') {
    if (!has('--max')) throw new UsageError('zkr semaphore needs --max N (the number of leases)', sub);
    maxLeases = integer(last('--max') as string, '--max', 1, 1_000_000, sub);
  }
  const onSuspended = last('--on-suspended') ?? 'wait';
  if (onSuspended !== 'wait' && onSuspended !== 'kill') throw new UsageError(`--on-suspended takes wait or kill, got "${onSuspended}"`, sub);
  const id = last('--id');
  if (id !== undefined && id === '') throw new UsageError('--id must not be empty', sub);
  return {
    kind: 'run',
    ...common,
    acl,
    mode,
    path: p,
    timeoutMs,
    conflictExitCode,
    maxLeases,
    id,
    shell: has('--shell'),
    passStdin: has('--pass-stdin'),
    killGraceMs: has('--kill-grace') ? seconds(last('--kill-grace') as string, '--kill-grace', sub) : 1000,
    killSignal: has('--kill-signal') ? signalName(last('--kill-signal') as string, sub) : 'SIGTERM',
    onSuspended,
    requeue: has('--requeue'),
    statusFile: last('--status-file'),
    command,
  };
}
