/**
 * The shared-count workload: every client increments one {@link SharedCount} with a
 * compare-and-set loop (read the copy, `trySet(seen + 1, seen)`) under the nemesis, and records
 * each attempt and every value its count emitted.
 *
 * @internal
 * @module
 */
import { OutcomeUnknownError } from '../../../errors.js';
import { SharedCount } from '../../../shared/shared-value.js';
import type { WorkloadSpec } from '../history.js';
import { errorText, pause, type Workload } from './common.js';

/** The count's node: under the workload's path, created (4 zero bytes) by the runner before the clients start. */
export function sharedCountPath(spec: WorkloadSpec): string {
  return `${spec.path}/count`;
}

/** Increments until drained; each trySet bounded by 5 s and the stop signal. */
export const sharedCountWorkload: Workload = async (ctx) => {
  const workload = ctx.spec.name;
  const count = new SharedCount(ctx.session, sharedCountPath(ctx.spec), 0);
  count.on('changed', (v) => ctx.recorder.record({ type: 'shared-seen', workload, value: v.value, zxid: String(v.zxid) }));
  try {
    // A start cut short by a fault is tried again (a new instance: one start per instance).
    let started = count;
    let running = false;
    for (let attempt = 0; !ctx.drain.aborted && !ctx.stop.aborted; attempt++) {
      try {
        await started.start({ timeoutMs: 5000, signal: ctx.stop });
        running = true;
        break;
      } catch (err) {
        ctx.recorder.record({ type: 'note', level: 'info', message: `shared count start failed: ${errorText(err)}` });
        await started.close();
        started = new SharedCount(ctx.session, sharedCountPath(ctx.spec), 0);
        started.on('changed', (v) => ctx.recorder.record({ type: 'shared-seen', workload, value: v.value, zxid: String(v.zxid) }));
        await pause(Math.min(2000, 100 * 2 ** attempt), ctx.drain);
      }
    }
    try {
      for (let seq = 0; running && !ctx.drain.aborted && !ctx.stop.aborted; seq++) {
        const seen = started.get();
        const op = `${ctx.name}-s${seq}`;
        const value = seen.value + 1;
        ctx.recorder.record({ type: 'shared-count', phase: 'invoke', workload, op, value });
        try {
          if (await started.trySet(value, seen, { timeoutMs: 5000, signal: ctx.stop })) {
            // Values are unique along the compare-and-set chain: the copy at `value` is our write.
            const now = started.get();
            ctx.recorder.record({ type: 'shared-count', phase: 'ok', workload, op, value, ...(now.value === value && { zxid: String(now.zxid) }) });
          } else {
            ctx.recorder.record({ type: 'shared-count', phase: 'fail', workload, op, value });
          }
        } catch (err) {
          // Only an unknown outcome may have been applied; anything else was refused or never sent.
          ctx.recorder.record({ type: 'shared-count', phase: err instanceof OutcomeUnknownError ? 'info' : 'fail', workload, op, value, error: errorText(err) });
          await pause(ctx.random.int(50, 300), ctx.drain);
        }
        await pause(ctx.random.int(0, 30), ctx.drain);
      }
    } finally {
      await started.close();
    }
  } finally {
    await count.close();
  }
};
