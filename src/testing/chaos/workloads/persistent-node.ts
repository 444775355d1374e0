/**
 * The persistent-node workload: every client keeps one {@link PersistentNode} (an ephemeral at
 * `<path>/<client>`) for the whole run, probes the directory (a `sync` and a listing) every
 * 0.3 to 1.2 s, and now and then deletes another client's node, as an operator or a tool might;
 * under the nemesis. The `presence` check reads the probes.
 *
 * @internal
 * @module
 */
import { PersistentNode } from '../../../nodes/persistent-node.js';
import { linkSignals } from '../../../util/signals.js';
import { errorText, pause, type Workload } from './common.js';

/** Bound of one probe or delete, ms: a call cut off by a fault gives up and the loop goes on. */
const CALL_MS = 3000;

/** Keeps the node until stopped; probes and deletes until drained. */
export const persistentNodeWorkload: Workload = async (ctx) => {
  const dir = ctx.spec.path;
  const mine = `${dir}/${ctx.name}`;
  const record = (op: 'created' | 'deleted' | 'closing' | 'probe' | 'delete', node: string, present?: string[]): void => {
    ctx.recorder.record({ type: 'pnode', workload: ctx.spec.name, op, node, ...(present && { present }) });
  };
  const node = new PersistentNode(ctx.session, mine, { data: ctx.name, errorBackoff: { baseDelayMs: 50, maxDelayMs: 1000 } });
  node.on('created', (p) => record('created', p));
  node.on('deleted', (p) => record('deleted', p));
  node.on('error', (err) => ctx.recorder.record({ type: 'note', level: 'info', message: `${ctx.name}: ${errorText(err)}` }));
  node.start();
  try {
    while (!ctx.drain.aborted && !ctx.stop.aborted) {
      if (!(await pause(ctx.random.int(300, 1200), ctx.drain))) break;
      const link = linkSignals([ctx.drain], CALL_MS);
      const signal = link.signal;
      try {
        await ctx.session.sync(dir, { signal });
        const { children } = await ctx.session.getChildren(dir, { signal });
        record('probe', dir, [...children].sort());
        const others = children.filter((c) => c !== ctx.name);
        if (others.length > 0 && ctx.random.int(0, 9) < 2) {
          const victim = `${dir}/${others[ctx.random.int(0, others.length - 1)]}`;
          await ctx.session.delete(victim, { signal });
          record('delete', victim);
        }
      } catch {
        // A probe or delete cut off by a fault proves nothing: only completed probes count.
      } finally {
        link.dispose();
      }
    }
    await pause(1e9, ctx.stop);
  } finally {
    record('closing', mine);
    await node.close({ timeoutMs: 10_000 }).catch((err: unknown) => ctx.recorder.record({ type: 'note', level: 'info', message: `${ctx.name}: close: ${errorText(err)}` }));
  }
};
