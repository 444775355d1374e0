/**
 * Which workloads a chaos run has, with how many clients each.
 *
 * @module
 */
import type { CacheRole, WorkloadKind, WorkloadSpec } from './history.js';

/** Clients per workload kind (0 leaves a workload out). */
export type ClientCounts = Partial<Record<WorkloadKind, number>>;

/** The default mix: 36 clients, every recipe (the caches: 1 writer, 2 readers; a double barrier of 3; 3 persistent nodes; a group of 3; 2 multi-lock clients; 3 discovery clients), and the `zkr` command line tool. */
export const DEFAULT_CLIENT_COUNTS: Readonly<Record<WorkloadKind, number>> = {
  mutex: 3,
  semaphore: 3,
  rwlock: 3,
  latch: 2,
  selector: 2,
  'queue-at-most-once': 2,
  'queue-at-least-once': 2,
  cache: 3,
  zkr: 2,
  'double-barrier': 3,
  // Not in the default mix: its runs under the nemesis are too few yet to call it stable.
  'shared-count': 0,
  'persistent-node': 3,
  // Not yet in the default mix: only when named (--workloads atomic: 4 clients).
  atomic: 0,
  group: 3,
  multilock: 2,
  discovery: 3,
};

/** Clients of a workload left out of the default mix when it is named in `--workloads`. */
export const OPT_IN_CLIENT_COUNTS: Readonly<Partial<Record<WorkloadKind, number>>> = { 'shared-count': 3, atomic: 4 };

/** The CI mix (`--ci`, and the chaos run of `npm test`): 18 clients, every recipe. */
export const CI_CLIENT_COUNTS: Readonly<Record<WorkloadKind, number>> = {
  mutex: 2,
  semaphore: 3,
  rwlock: 2,
  latch: 2,
  selector: 2,
  'queue-at-most-once': 2,
  'queue-at-least-once': 2,
  cache: 3,
  // The zkr command line tool's clients spawn a Node process per hold: only when asked for.
  zkr: 0,
  // Not yet in the CI mix: its rounds have not been run there enough to call them stable.
  'double-barrier': 0,
  'shared-count': 0,
  // Not yet in the CI mix either: run on its own (--workloads persistent-node) until it has
  // been run there enough to call it stable.
  'persistent-node': 0,
  atomic: 0,
  // Not yet in the CI mix either: new, and its end waits a settle bound (2 T + 10 s) more.
  group: 0,
  // Not yet in the CI mix either: new; run it alone (--workloads multilock) until it has been run enough.
  multilock: 0,
  // Not yet in the CI mix either: new, and its end waits a settle bound (2 T + 10 s) more, as the group's.
  discovery: 0,
};

/** The seed of the CI run (`--ci`, and the chaos run of `npm test`). */
export const CI_SEED = 20261201;

/** One client of the plan. */
export interface PlannedClient {
  /** Unique name, e.g. `mutex-1`. */
  name: string;
  /** Its workload. */
  workload: WorkloadSpec;
  /**
   * Its sessions: 2 for every second lock and leader client (flow `b` on a session of its own,
   * same connect string, opened on another member than the first), 1 otherwise (both flows on
   * one session; queue clients run one flow).
   */
  sessions: 1 | 2;
  /** For the cache workload: what the client does (see {@link cacheRole}). */
  role?: CacheRole;
}

/**
 * The role of the `i`-th (from 1) of `n` cache clients: the first of every three writes the
 * subtree (two flows, on two sessions), the others run caches on it; a lone client does both.
 */
export function cacheRole(i: number, n: number): CacheRole {
  if (n === 1) return 'both';
  return (i - 1) % 3 === 0 ? 'writer' : 'reader';
}

/** Short names of the kinds, for client names. */
const SHORT: Readonly<Record<WorkloadKind, string>> = {
  mutex: 'mutex',
  semaphore: 'sem',
  rwlock: 'rw',
  latch: 'latch',
  selector: 'sel',
  'queue-at-most-once': 'take',
  'queue-at-least-once': 'consume',
  cache: 'cache',
  zkr: 'zkr',
  'double-barrier': 'dbar',
  'shared-count': 'scount',
  'persistent-node': 'pnode',
  atomic: 'atomic',
  group: 'group',
  multilock: 'mlock',
  discovery: 'disc',
};

/** How many member lock paths the multilock workload draws its multi-locks from. */
const MULTILOCK_MEMBERS = 4;

/**
 * The fenced register of one member lock of a multilock workload: one per member path, so that
 * each member's tokens are fenced on their own (tokens of different paths are not ordered).
 * @internal
 */
export function memberRegister(spec: WorkloadSpec, memberPath: string): string {
  return `${spec.register ?? spec.name}${memberPath.slice(spec.path.length)}`;
}

/** The workloads (paths under `base`) and their clients. */
export function planWorkloads(base: string, counts: ClientCounts = DEFAULT_CLIENT_COUNTS): { workloads: WorkloadSpec[]; clients: PlannedClient[] } {
  const workloads: WorkloadSpec[] = [];
  const clients: PlannedClient[] = [];
  for (const kind of Object.keys(DEFAULT_CLIENT_COUNTS) as WorkloadKind[]) {
    const n = counts[kind] ?? 0;
    if (n <= 0) continue;
    const name = SHORT[kind];
    const spec: WorkloadSpec = {
      name,
      kind,
      path: `${base}/${name}`,
      maxLeases: kind === 'semaphore' ? 2 : 1,
      ...((kind === 'mutex' || kind === 'rwlock') && { counterPath: `${base}/${name}-counter` }),
      ...((kind === 'mutex' || kind === 'rwlock' || kind === 'latch' || kind === 'selector' || kind === 'multilock') && { register: name }),
      ...(kind === 'multilock' && { members: Array.from({ length: MULTILOCK_MEMBERS }, (_, i) => `${base}/${name}/m${i}`) }),
      ...(kind === 'double-barrier' && { memberCount: n }),
      ...(kind === 'atomic' && { numberPath: `${base}/${name}-number` }),
    };
    workloads.push(spec);
    if (kind === 'cache') {
      // Writers run two flows on two sessions (writes from two members); readers one session.
      for (let i = 1; i <= n; i++) {
        const role = cacheRole(i, n);
        clients.push({ name: `${name}-${i}`, workload: spec, sessions: role === 'reader' ? 1 : 2, role });
      }
      continue;
    }
    const flows = kind !== 'queue-at-most-once' && kind !== 'queue-at-least-once' && kind !== 'zkr' && kind !== 'double-barrier' && kind !== 'shared-count' && kind !== 'persistent-node' && kind !== 'group' && kind !== 'discovery';
    for (let i = 1; i <= n; i++) clients.push({ name: `${name}-${i}`, workload: spec, sessions: flows && i % 2 === 0 ? 2 : 1 });
  }
  return { workloads, clients };
}
