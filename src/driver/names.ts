/**
 * Curator-compatible lock node names: `_c_<uuid>-<lockName><10-digit sequence>`, ordered by the
 * sequence after the lock name (never by the whole name: the uuid must not affect order).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { describe } from '../client/validate.js';
import { InvalidArgumentError } from '../errors.js';

/** A child of a lock directory that belongs to the recipe, parsed. */
export interface QueueNode {
  /** The child's name (not the full path). */
  readonly name: string;
  /** Which lock name it carries, e.g. `lock-`, `__READ__`, `__WRIT__`. */
  readonly kind: string;
  /** The sequence number as an unsigned 32-bit value (ZooKeeper's counter wraps past 2^31). */
  readonly seq: number;
  /** The protection uuid, if the name is protected. */
  readonly uuid: string | undefined;
}

/** A fresh protection prefix, `_c_<uuid>-`. */
export function protectedPrefix(uuid?: string): string {
  if (uuid === undefined) {
    const prefix = `_c_${randomUUID()}-`;
    // Not a check (the uuid is ours): randomUUID builds its string from a score of pieces, a
    // rope every waiter would keep (about 500 bytes); reading its characters makes it one flat
    // string.
    isProtected(prefix);
    return prefix;
  }
  if (typeof uuid !== 'string' || uuid.length !== UUID_LENGTH || !isUuidAt(uuid, 0)) throw new InvalidArgumentError(`protectedPrefix: uuid must be a UUID (8-4-4-4-12 hex digits), got ${describe(uuid)}`);
  return `_c_${uuid}-`;
}

/**
 * Parses `name` as a node of one of `kinds` (lock names). Returns undefined for children that
 * do not belong to the recipe (they are ignored, not fatal).
 */
export function parseNode(name: string, kinds: readonly string[]): QueueNode | undefined {
  if (typeof name !== 'string') throw new InvalidArgumentError(`parseNode: name must be a string, got ${describe(name)}`);
  checkKinds(kinds);
  return parseChecked(name, kinds);
}

/**
 * {@link parseNode} once its arguments are checked (a listing's names: checked once for all).
 * By character codes, not regular expressions: every listing parses each of its names, on the
 * way from a notification to a grant.
 */
function parseChecked(name: string, kinds: readonly string[]): QueueNode | undefined {
  const prot = isProtected(name);
  const start = prot ? PREFIX_LENGTH : 0;
  // A kind must be all that stands between the (optional) protection prefix and the sequence.
  for (const kind of kinds) {
    if (!name.startsWith(kind, start)) continue;
    const seq = sequenceAt(name, start + kind.length);
    if (seq !== undefined) return { name, kind, seq, uuid: prot ? name.slice(3, PREFIX_LENGTH - 1) : undefined };
  }
  return undefined;
}

/** Length of a UUID's text, 8-4-4-4-12 hex digits. */
const UUID_LENGTH = 36;

/** Length of `_c_<uuid>-`. */
const PREFIX_LENGTH = UUID_LENGTH + 4;

/** Whether `name` begins with `_c_<uuid>-`. */
function isProtected(name: string): boolean {
  return name.length >= PREFIX_LENGTH && name.charCodeAt(0) === 95 && name.charCodeAt(1) === 99 && name.charCodeAt(2) === 95 && name.charCodeAt(PREFIX_LENGTH - 1) === 45 && isUuidAt(name, 3);
}

/** Whether a UUID's 8-4-4-4-12 hex digits stand in `s` from `at` (`s` holds at least 36 more). */
function isUuidAt(s: string, at: number): boolean {
  for (let i = 0; i < UUID_LENGTH; i++) {
    const c = s.charCodeAt(at + i);
    // Dashes between the groups, hex digits elsewhere.
    if (i === 8 || i === 13 || i === 18 || i === 23 ? c !== 45 : !isHex(c)) return false;
  }
  return true;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/**
 * The sequence from `at` to the end of `name` as an unsigned 32-bit value, or undefined unless
 * it is ZooKeeper's: the parent's int32 cversion as `%010d`, which past 2^31 turns negative
 * with the sign counted in the width (`-000000001`, `-2147483648`): 10 digits, or a sign and
 * 9 or 10. The sign is only read right after the lock name.
 */
function sequenceAt(name: string, at: number): number | undefined {
  const negative = name.charCodeAt(at) === 45;
  const from = negative ? at + 1 : at;
  const digits = name.length - from;
  if (negative ? digits !== 9 && digits !== 10 : digits !== 10) return undefined;
  let v = 0;
  for (let i = from; i < name.length; i++) {
    const d = name.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return undefined;
    v = v * 10 + d;
  }
  return (negative ? -v : v) >>> 0;
}

/** Formats a sequence number the way ZooKeeper does (`%010d` of the signed 32-bit value). */
export function formatSeq(seq: number): string {
  const signed = seq | 0;
  return signed < 0 ? `-${String(-signed).padStart(9, '0')}` : String(signed).padStart(10, '0');
}

/**
 * Compares two sequence numbers with serial-number arithmetic (RFC 1982) over 2^32, so order is
 * right across the wrap-around as long as live nodes span less than 2^31 sequence numbers.
 */
export function compareSeq(a: number, b: number): number {
  if (a === b) return 0;
  if (!Number.isInteger(a) || !Number.isInteger(b)) throw new InvalidArgumentError(`compareSeq: sequence numbers must be integers, got ${describe(a)} and ${describe(b)}`);
  return ((b - a) >>> 0) < 0x80000000 ? -1 : 1;
}

/**
 * Parses, filters and sorts a directory listing. Nodes with equal sequence numbers (a read node
 * created for a downgrade carries the write node's sequence) sort in `kinds` order, then by name.
 */
export function sortChildren(children: readonly string[], kinds: readonly string[]): QueueNode[] {
  if (!Array.isArray(children)) throw new InvalidArgumentError(`sortChildren: children must be an array of names, got ${describe(children)}`);
  checkKinds(kinds);
  const nodes: QueueNode[] = [];
  for (const c of children) {
    if (typeof c !== 'string') throw new InvalidArgumentError(`sortChildren: children must be an array of names, got ${describe(c)} among them`);
    const n = parseChecked(c, kinds);
    if (n) nodes.push(n);
  }
  const order = (x: QueueNode, y: QueueNode): number => compareSeq(x.seq, y.seq) || kinds.indexOf(x.kind) - kinds.indexOf(y.kind) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);
  if (nodes.length > INSERTION_SORT_MAX) return nodes.sort(order);
  // A short listing (an election, a lock's few waiters): sorted in place here, without the
  // built-in sort's setup; on a grant's path between processes.
  for (let i = 1; i < nodes.length; i++) {
    const n = nodes[i] as QueueNode;
    let j = i - 1;
    while (j >= 0 && order(nodes[j] as QueueNode, n) > 0) {
      nodes[j + 1] = nodes[j] as QueueNode;
      j--;
    }
    nodes[j + 1] = n;
  }
  return nodes;
}

/** Up to this many nodes a listing is sorted by insertion (stable, as the built-in sort). */
const INSERTION_SORT_MAX = 12;

/** Below this many children a listing's sort and positions are computed by each reader. */
const SHARED_MIN_CHILDREN = 32;

/**
 * `compute` of a listing and a key, computed once per pair and kept as long as the listing is:
 * the waits of one burst share one listing (see `QueueEntry`), so N waits cost one computation,
 * not N. @internal
 */
export function perListing<K, V>(compute: (children: readonly string[], key: K) => V): (children: readonly string[], key: K) => V {
  const memo = new WeakMap<readonly string[], Map<K, V>>();
  return (children, key) => {
    // A short listing costs less to compute again than to remember (a weak map entry each).
    if (children.length < SHARED_MIN_CHILDREN) return compute(children, key);
    let byKey = memo.get(children);
    if (byKey === undefined) {
      byKey = new Map();
      memo.set(children, byKey);
    }
    if (!byKey.has(key)) byKey.set(key, compute(children, key));
    return byKey.get(key) as V;
  };
}

/** {@link sortChildren} of a listing many waits read: sorted once, frozen and shared. @internal */
export const sortChildrenShared: (children: readonly string[], kinds: readonly string[]) => readonly QueueNode[] = perListing((children, kinds) => {
  const queue = sortChildren(children, kinds);
  // Frozen only where readers share it (a short listing's queue has one reader).
  return children.length < SHARED_MIN_CHILDREN ? queue : Object.freeze(queue);
});

/** Positions of names in shared sorted queues (see {@link positionIn}). */
const positions = new WeakMap<readonly QueueNode[], Map<string, number>>();

/**
 * The position of `name` in a sorted `queue` (-1 when absent), from an index built once per
 * queue: the waits of one burst share one queue, and each looks itself up in it. @internal
 */
export function positionIn(queue: readonly QueueNode[], name: string): number {
  if (queue.length < SHARED_MIN_CHILDREN) return queue.findIndex((n) => n.name === name);
  let index = positions.get(queue);
  if (index === undefined) {
    index = new Map(queue.map((n, i) => [n.name, i]));
    positions.set(queue, index);
  }
  return index.get(name) ?? -1;
}

function checkKinds(kinds: unknown): void {
  if (!Array.isArray(kinds) || kinds.some((k) => typeof k !== 'string' || k === '')) throw new InvalidArgumentError(`kinds must be an array of non-empty lock names, got ${describe(kinds)}`);
}
