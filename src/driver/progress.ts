/**
 * Where a waiting acquisition stands, reported from the driver's listings: the trace's queue
 * position, and each change to `onProgress` and the progress channel with the holder's
 * participant id (one read per holder, only for those listeners).
 *
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { points, type AcquireContext, type AcquireMode, type AcquireProgress, type AcquireRecipe } from '../observability/channels.js';

/** What a report names: the recipe and its mode. */
export interface ProgressOf {
  readonly recipe: AcquireRecipe;
  readonly mode: AcquireMode;
}

/**
 * The driver's `onPlace` for one acquisition, or undefined when nobody would be told (no trace,
 * no `onProgress`, no subscriber of the progress channel): then nothing is read for it.
 */
export function placeReporter(
  session: Pick<ZkSession, 'getData'>,
  of: ProgressOf,
  path: string,
  ctx: AcquireContext | undefined,
  onProgress: ((progress: AcquireProgress) => void) | undefined,
  signal: AbortSignal,
): ((position: number, nodePath: string, headPath: string) => void) | undefined {
  if (!ctx && !onProgress && !points.lockProgress.hasSubscribers) return undefined;
  let last = -1;
  let holder: { path: string; id: Promise<string | undefined> } | undefined;
  return (position, nodePath, headPath) => {
    if (ctx && ctx.queuePosition === undefined) ctx.queuePosition = position;
    if (position === last || position === 0) return;
    last = position;
    if (!onProgress && !points.lockProgress.hasSubscribers) return;
    if (holder?.path !== headPath) {
      holder = {
        path: headPath,
        id: session.getData(headPath, { signal }).then(
          (d) => d.data.toString('utf8'),
          () => undefined,
        ),
      };
    }
    const at = holder;
    void at.id.then((holderId) => {
      if (signal.aborted || position !== last) return;
      const progress: AcquireProgress = { recipe: of.recipe, mode: of.mode, path, nodePath, position, holderPath: at.path, holderId };
      try {
        onProgress?.(progress);
      } catch {
        // a progress listener's throw must not end the wait
      }
      if (points.lockProgress.hasSubscribers) points.lockProgress.publish(progress);
    });
  };
}
