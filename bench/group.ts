// Group membership: how soon another member sees a member that starts (bench/anchors/CuratorGroup.java beside it).
import { GroupMember } from '../src/index.js';
import type { BenchContext } from './context.js';
import { since, type Result } from './metrics.js';

/**
 * 2 sessions: an observer member on the first; each round a new member (a new id) starts on the
 * second, and then closes; 100 rounds. Measured: from the new member's `start()` until the
 * observer's view shows it (create, notification, the observer's read). Its leave is awaited
 * (the observer's view without it) before the next round, untimed.
 */
export async function groupJoinVisible(ctx: BenchContext): Promise<Result> {
  const [observerSession, joinerSession] = await ctx.sessionsN(2);
  const path = `${ctx.root}/group`;
  const observer = new GroupMember(observerSession!, path, 'observer');
  await observer.start({ timeoutMs: 30_000 });
  const rounds = 100;
  const times: number[] = [];
  const seen = (id: string, event: 'joined' | 'left'): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`group_join_visible: the observer did not see ${id} ${event} within 30 s`)), 30_000);
      const on = (who: string): void => {
        if (who !== id) return;
        clearTimeout(timer);
        observer.off(event as 'joined', on);
        resolve();
      };
      observer.on(event as 'joined', on);
    });
  const before = await ctx.counters();
  const start = performance.now();
  for (let r = 0; r < rounds; r++) {
    const id = `member-${r}`;
    const joined = seen(id, 'joined');
    const t = performance.now();
    const member = new GroupMember(joinerSession!, path, id, 'payload');
    await member.start({ timeoutMs: 30_000 });
    await joined;
    times.push(since(t));
    const left = seen(id, 'left');
    await member.close();
    await left;
  }
  const seconds = since(start) / 1000;
  const after = await ctx.counters();
  await observer.close();
  return ctx.result(rounds, seconds, times, before, after);
}
