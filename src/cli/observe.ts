/**
 * `zkr elect PATH --observe [--json]`: prints the election's leader, then a line at each
 * change, until a signal stops it (exit 0). It stands in no election: it only lists PATH (a
 * child watch on it, or an existence watch while it is absent). The leader is the first
 * `latch-` node (Curator's LeaderLatch, `zkr elect`), else the first `lock-` node (a
 * LeaderSelector).
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { WatchEvent } from '../client/types.js';
import { sortChildren } from '../driver/names.js';
import { NoNodeError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import type { ObserveCommand } from './args.js';
import { out, withSession } from './with-session.js';

interface Leader {
  participant: string;
  fencingToken: string;
  sessionId: string;
  path: string;
}

/** The current leader of `path` (undefined: none), and a watch that fires on the next change. */
async function look(session: ZkSession, path: string, signal: AbortSignal): Promise<{ leader: Leader | undefined; changed: Promise<WatchEvent> }> {
  for (;;) {
    let children: string[];
    let changed: Promise<WatchEvent>;
    try {
      const w = await session.getChildrenWatch(path, { signal });
      children = w.result.children;
      changed = w.changed;
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      const e = await session.existsWatch(path, { signal });
      if (e.result) {
        e.changed.catch(() => undefined);
        continue; // created meanwhile: list it
      }
      return { leader: undefined, changed: e.changed };
    }
    changed.catch(() => undefined);
    const latch = sortChildren(children, ['latch-']);
    const first = latch[0] ?? sortChildren(children, ['lock-'])[0];
    if (!first) return { leader: undefined, changed };
    try {
      const { data, stat } = await session.getData(`${path}/${first.name}`);
      return { leader: { participant: data.toString('utf8'), fencingToken: stat.czxid.toString(), sessionId: `0x${stat.ephemeralOwner.toString(16)}`, path: `${path}/${first.name}` }, changed };
    } catch (err) {
      if (!(err instanceof NoNodeError)) throw err;
      // Gone before we read it: the watch has fired (or will); look again.
      await raceAbort(changed, signal).catch(() => undefined);
    }
  }
}

/** Runs `zkr elect --observe`. @internal */
export function runObserve(cmd: ObserveCommand): Promise<number> {
  return withSession(
    cmd,
    `elect --observe ${cmd.path}`,
    async (session, signal) => {
      let last: string | undefined | null = null;
      for (;;) {
        const { leader, changed } = await look(session, cmd.path, signal);
        const key = leader?.path;
        if (key !== last) {
          last = key;
          const at = new Date().toISOString();
          await out(
            cmd.json
              ? `${JSON.stringify({ at, leader: leader ?? null })}\n`
              : leader
                ? `${at} leader ${leader.participant} token ${leader.fencingToken} session ${leader.sessionId} ${leader.path}\n`
                : `${at} no leader\n`,
          );
        }
        // A session lost (its watches with it) or a reconnect that could not re-set them: look again.
        await raceAbort(changed, signal).catch((err: unknown) => {
          if (signal.aborted) throw err;
        });
      }
    },
    () => 0,
  );
}
