/**
 * `zkr inspect PATH [--json]`: the holders and waiters of whatever recipe uses PATH, read the
 * way the recipes decide who holds: a mutex, a semaphore (its `maxLeases` from the directory's
 * data; Curator's V2 layout with `leases/` and `locks/`), a read-write lock, a leader latch or
 * selector; a queue's item count. One line per node, or one JSON document.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { parseRecord } from '../driver/layouts.js';
import { sortChildren, type QueueNode } from '../driver/names.js';
import { NoNodeError } from '../errors.js';
import { DistributedQueue } from '../queue/queue.js';
import type { InspectCommand } from './args.js';
import { out, withSession } from './with-session.js';

/** One node of a recipe, as `zkr inspect` reports it. @internal */
export interface InspectedNode {
  /** `holder` (or leader) or `waiter`. */
  role: 'holder' | 'waiter';
  /** What the node is: `lock`, `lease`, `read`, `write`, `latch`. */
  kind: string;
  /** The participant id stored in it. */
  participant: string;
  /** Its czxid, the fencing token of its grant (decimal). */
  fencingToken: string;
  /** Since its creation, ms (by the server's clock against ours). */
  ageMs: number;
  /** The session owning it, `0x…`. */
  sessionId: string;
  /** Its full path. */
  path: string;
}

/** What `zkr inspect` finds on a path. @internal */
export interface Inspection {
  /** The path inspected. */
  path: string;
  /** The recipe its nodes belong to, `empty` (no recipe node), or `absent` (no such path). */
  recipe: 'mutex' | 'semaphore' | 'semaphore-v2' | 'rwlock' | 'leader' | 'queue' | 'empty' | 'absent';
  /** A semaphore's limit, as recorded on the path. */
  maxLeases?: number;
  /** A queue's items (claimed ones included). */
  items?: number;
  /** Its nodes in queue order. */
  nodes: InspectedNode[];
}

async function describeNodes(session: ZkSession, dir: string, nodes: readonly { node: QueueNode; role: 'holder' | 'waiter'; kind: string }[]): Promise<InspectedNode[]> {
  const now = Date.now();
  const read = await Promise.all(
    nodes.map(async ({ node, role, kind }) => {
      const path = `${dir}/${node.name}`;
      try {
        const { data, stat } = await session.getData(path);
        return { role, kind, participant: data.toString('utf8'), fencingToken: stat.czxid.toString(), ageMs: Math.max(0, now - stat.ctime), sessionId: `0x${stat.ephemeralOwner.toString(16)}`, path };
      } catch (err) {
        if (err instanceof NoNodeError) return undefined; // gone meanwhile
        throw err;
      }
    }),
  );
  return read.filter((n): n is InspectedNode => n !== undefined);
}

/** Reads who holds and who waits on `path`. @internal */
export async function inspect(session: ZkSession, path: string): Promise<Inspection> {
  let data: Buffer;
  let children: string[];
  try {
    data = (await session.getData(path)).data;
    children = (await session.getChildren(path)).children;
  } catch (err) {
    if (err instanceof NoNodeError) return { path, recipe: 'absent', nodes: [] };
    throw err;
  }
  if (children.includes('items')) {
    const queue = new DistributedQueue(session, path);
    try {
      return { path, recipe: 'queue', items: await queue.size(), nodes: [] };
    } finally {
      await queue.close();
    }
  }
  const record = parseRecord(data);
  if (children.includes('leases') || children.includes('locks')) {
    const list = async (dir: string): Promise<string[]> => (await session.getChildren(dir).catch(() => ({ children: [] as string[] }))).children;
    const leases = sortChildren(await list(`${path}/leases`), ['lease-']);
    const locks = sortChildren(await list(`${path}/locks`), ['lock-']);
    const nodes = [...(await describeNodes(session, `${path}/leases`, leases.map((node) => ({ node, role: 'holder' as const, kind: 'lease' })))), ...(await describeNodes(session, `${path}/locks`, locks.map((node) => ({ node, role: 'waiter' as const, kind: 'lock' }))))];
    return { path, recipe: 'semaphore-v2', ...(record.kind === 'leases' && { maxLeases: record.maxLeases }), nodes };
  }
  const rw = sortChildren(children, ['__WRIT__', '__READ__']);
  if (rw.length > 0) {
    const firstWrite = rw.findIndex((n) => n.kind === '__WRIT__');
    const marked = rw.map((node, i) => ({ node, kind: node.kind === '__WRIT__' ? 'write' : 'read', role: (node.kind === '__WRIT__' ? i === 0 : firstWrite < 0 || i < firstWrite) ? ('holder' as const) : ('waiter' as const) }));
    return { path, recipe: 'rwlock', nodes: await describeNodes(session, path, marked) };
  }
  const latch = sortChildren(children, ['latch-']);
  if (latch.length > 0) {
    return { path, recipe: 'leader', nodes: await describeNodes(session, path, latch.map((node, i) => ({ node, kind: 'latch', role: i === 0 ? ('holder' as const) : ('waiter' as const) }))) };
  }
  const locks = sortChildren(children, ['lock-']);
  const max = record.kind === 'leases' ? record.maxLeases : 1;
  const recipe = record.kind === 'leases' ? 'semaphore' : locks.length > 0 ? 'mutex' : 'empty';
  const nodes = await describeNodes(session, path, locks.map((node, i) => ({ node, kind: 'lock', role: i < max ? ('holder' as const) : ('waiter' as const) })));
  return { path, recipe, ...(record.kind === 'leases' && { maxLeases: max }), nodes };
}

function formatAge(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : ms < 3_600_000 ? `${Math.floor(ms / 60_000)}m${Math.floor((ms % 60_000) / 1000)}s` : `${Math.floor(ms / 3_600_000)}h${Math.floor((ms % 3_600_000) / 60_000)}m`;
}

/** The text `zkr inspect` prints. @internal */
export function formatInspection(i: Inspection): string {
  if (i.recipe === 'absent') return `${i.path}: no such node\n`;
  const holders = i.nodes.filter((n) => n.role === 'holder').length;
  const head =
    i.recipe === 'queue'
      ? `${i.path}: queue, ${i.items} item${i.items === 1 ? '' : 's'}`
      : `${i.path}: ${i.recipe}${i.maxLeases !== undefined ? ` (max ${i.maxLeases})` : ''}, ${holders} ${i.recipe === 'leader' ? 'leader' : `holder${holders === 1 ? '' : 's'}`}, ${i.nodes.length - holders} waiting`;
  const lines = i.nodes.map((n) => `  ${(i.recipe === 'leader' && n.role === 'holder' ? 'leader' : n.role).padEnd(7)} ${n.kind.padEnd(5)} ${n.participant}  token ${n.fencingToken}  age ${formatAge(n.ageMs)}  session ${n.sessionId}  ${n.path}`);
  return `${[head, ...lines].join('\n')}\n`;
}

/** Runs `zkr inspect`. @internal */
export function runInspect(cmd: InspectCommand): Promise<number> {
  return withSession(cmd, `inspect ${cmd.path}`, async (session) => {
    const found = await inspect(session, cmd.path);
    await out(cmd.json ? `${JSON.stringify(found, null, 2)}\n` : formatInspection(found));
    return 0;
  });
}
