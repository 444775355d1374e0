/**
 * `zkr watch PATH [--json]`: a {@link TreeCache} of PATH printed as it changes, one line per
 * event (`added`, `changed`, `removed`; `initialized` once the first read is done; `stale` and
 * `resynced` around a disconnect), until a signal stops it (exit 0).
 *
 * @internal
 * @module
 */
import { TreeCache } from '../cache/tree-cache.js';
import type { CachedNode } from '../cache/types.js';
import type { WatchCommand } from './args.js';
import { out, withSession } from './with-session.js';

const PREVIEW = 200;

/** Runs `zkr watch`. @internal */
export function runWatch(cmd: WatchCommand): Promise<number> {
  return withSession(
    cmd,
    `watch ${cmd.path}`,
    async (session, signal, reporter) => {
      const cache = new TreeCache(session, cmd.path);
      // Printed in event order: each line is queued behind the one before.
      let queue = Promise.resolve();
      const print = (event: string, node?: CachedNode, extra: Record<string, unknown> = {}): void => {
        const at = new Date().toISOString();
        const data = node?.data === undefined ? undefined : node.data.toString('utf8');
        const line = cmd.json
          ? `${JSON.stringify({ at, event, ...(node && { path: node.path, version: node.stat.version, data }), ...extra })}\n`
          : `${at} ${event}${node ? ` ${node.path} version ${node.stat.version}${data === undefined ? '' : ` ${JSON.stringify(data.length > PREVIEW ? `${data.slice(0, PREVIEW)}...` : data)}`}` : ''}${Object.entries(extra)
              .map(([k, v]) => ` ${k} ${String(v)}`)
              .join('')}\n`;
        queue = queue.then(() => out(line));
      };
      cache.on('added', (n) => print('added', n));
      cache.on('changed', (n) => print('changed', n));
      cache.on('removed', (n) => print('removed', n));
      cache.on('initialized', () => print('initialized', undefined, { nodes: cache.size }));
      cache.on('stale', () => print('stale'));
      cache.on('resynced', () => print('resynced'));
      let closedForGood: (() => void) | undefined;
      let failure: Error | undefined;
      cache.on('error', (err) => {
        reporter.error(`watch ${cmd.path}: ${err.message}`);
        // A limit crossed or a request the server refuses closes the cache: then zkr ends too.
        setImmediate(() => {
          if (cache.state === 'CLOSED') {
            failure = err;
            closedForGood?.();
          }
        });
      });
      try {
        await cache.start({ signal });
        // Until a signal stops it, or the cache closes for good.
        await new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => resolve(), { once: true });
          closedForGood = resolve;
        });
        signal.throwIfAborted();
        if (failure) throw failure;
        return 0;
      } finally {
        await cache.close();
        await queue;
      }
    },
    () => 0,
  );
}
