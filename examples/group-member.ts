// One instance of a service that registers itself in a group and keeps a live list of its
// peers: its id and address are its member node, and it is told of every peer that joins,
// moves or leaves (closed, crashed, or cut off for longer than its session timeout).
// Run it in several terminals with different ids; stop one (Ctrl-C) and the others see it go.
//   node build/examples/group-member.js ID [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { pathToFileURL } from 'node:url';
import { GroupMember, ZkSession, type GroupView } from 'zk-recipes';

export interface GroupExampleOptions {
  /** The group: every instance of the service uses the same path. */
  path?: string;
  /** Where this instance can be reached: its payload. */
  address?: string;
  /** Called with each new view of the group (member id to address). */
  onView?: (view: ReadonlyMap<string, string>) => void;
  /** Shutdown: the instance leaves the group. */
  signal?: AbortSignal;
}

/** Runs one instance `id` until `signal` aborts; resolves to the last view it had. */
export async function main(connectString: string, id: string, options: GroupExampleOptions = {}): Promise<ReadonlyMap<string, string>> {
  const { path = '/examples/services/api', address = `http://${id}.local:8080`, onView = print, signal } = options;
  const session = await ZkSession.connect(connectString);
  try {
    await using member = new GroupMember(session, path, id, address);
    member.on('joined', (peer, payload) => console.log(`${id}: ${peer} joined at ${payload.toString()}`));
    member.on('changed', (peer, payload) => console.log(`${id}: ${peer} moved to ${payload.toString()}`));
    member.on('left', (peer) => console.log(`${id}: ${peer} left`));
    member.on('stale', () => console.log(`${id}: disconnected, the list may be behind`));
    member.on('error', (err) => console.error(`${id}: ${err.message} (retried)`));
    await member.start({ timeoutMs: 30_000, signal });
    let last = addresses(member.currentMembers());
    // Each new view of the group until shutdown (a slow consumer skips to the latest).
    const views = member.views();
    signal?.addEventListener('abort', () => void views.return?.(), { once: true });
    for await (const view of views) {
      last = addresses(view);
      onView(last);
    }
    return last; // leaving the block closes the member: our node is deleted
  } catch (err) {
    if (signal?.aborted) return new Map();
    throw err;
  } finally {
    await session.close();
  }
}

function addresses(view: GroupView): ReadonlyMap<string, string> {
  return new Map([...view].map(([peer, payload]) => [peer, payload.toString()]));
}

function print(view: ReadonlyMap<string, string>): void {
  console.log(`members: ${[...view.keys()].sort().join(', ')}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const shutdown = new AbortController();
  process.once('SIGINT', () => shutdown.abort());
  process.once('SIGTERM', () => shutdown.abort());
  await main(process.argv[3] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181', process.argv[2] ?? `instance-${process.pid}`, { signal: shutdown.signal });
}
