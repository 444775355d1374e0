/**
 * `zkr lock|semaphore|read|write|elect PATH -- CMD`: connect, wait for the grant (bounded by
 * `-w`, ended by a signal), run the child under it ({@link runTerm}), release, and leave nothing
 * behind in ZooKeeper: our node, and the directories this run created if they are empty.
 *
 * @internal
 * @module
 */
import { hostname } from 'node:os';
import type { ZkSession } from '../client/session.js';
import type { LockHandle } from '../driver/handle.js';
import type { LockOptions } from '../driver/lock-recipe.js';
import { LockTimeoutError, NoNodeError, NotEmptyError, NotHeldError } from '../errors.js';
import { LeaderLatch } from '../leader/latch.js';
import { Mutex } from '../mutex/mutex.js';
import { ReadWriteLock } from '../rwlock/rwlock.js';
import { Semaphore } from '../semaphore/semaphore.js';
import type { RunCommand } from './args.js';
import { describeFailure, ExitError, openSession, recipeAcl, SignalStop } from './connect.js';
import { EXIT, signalExitCode } from './exit-codes.js';
import { graceMisfit } from './guard.js';
import { Reporter } from './report.js';
import { SignalRouter } from './signals.js';
import { runTerm, type Grant, type TermEnd } from './term.js';

/** The directories of `path` (itself and its ancestors) that do not exist yet, deepest first. */
async function missingDirs(session: ZkSession, path: string, signal: AbortSignal): Promise<string[]> {
  const missing: string[] = [];
  for (let p = path; p !== '' && p !== '/'; p = p.slice(0, p.lastIndexOf('/'))) {
    if (await session.exists(p, { signal })) break;
    missing.push(p);
  }
  return missing;
}

/** Deletes the directories this run created, deepest first, while they are empty. */
async function removeCreated(session: ZkSession, dirs: readonly string[], reporter: Reporter): Promise<void> {
  for (const dir of dirs) {
    try {
      await session.delete(dir, { version: -1, signal: AbortSignal.timeout(5000) });
      reporter.verbose(`removed ${dir} (created by this run, now empty)`);
    } catch (err) {
      if (err instanceof NoNodeError) continue; // a container the server reaped, or gone with a sibling
      if (err instanceof NotEmptyError) return; // in use by someone else: so are its ancestors
      return; // best effort: the server reaps empty containers anyway
    }
  }
}

/** The participant id of our nodes. */
function participantId(cmd: RunCommand): string {
  return cmd.id ?? `${hostname()}:${process.pid}`;
}

/** Waits for a lock-like grant; null when busy (`-n`). */
async function acquireLock(cmd: RunCommand, session: ZkSession, signal: AbortSignal): Promise<LockHandle | null> {
  const options: LockOptions = { participantId: participantId(cmd), watchOwnNode: true, lossPolicy: 'lost', ...recipeAcl(cmd.acl) };
  const recipe =
    cmd.mode === 'lock'
      ? new Mutex(session, cmd.path, options)
      : cmd.mode === 'semaphore'
        ? new Semaphore(session, cmd.path, { ...options, maxLeases: cmd.maxLeases })
        : cmd.mode === 'read'
          ? new ReadWriteLock(session, cmd.path, options).readLock()
          : new ReadWriteLock(session, cmd.path, options).writeLock();
  if (cmd.timeoutMs === 0) {
    signal.throwIfAborted();
    return recipe.tryAcquire();
  }
  return recipe.acquire({ ...(cmd.timeoutMs !== undefined && { timeoutMs: cmd.timeoutMs }), signal });
}

/** One election term at most: entered, elected (or busy/timed out: null), the latch to close after. */
async function elect(cmd: RunCommand, session: ZkSession, signal: AbortSignal): Promise<{ latch: LeaderLatch; grant: Grant | null }> {
  const id = participantId(cmd);
  const latch = new LeaderLatch(session, cmd.path, { participantId: id, policy: 'lost', watchOwnNode: true, ...recipeAcl(cmd.acl) });
  const deadline = cmd.timeoutMs === undefined || cmd.timeoutMs === 0 ? undefined : performance.now() + cmd.timeoutMs;
  const left = (): { timeoutMs?: number } => (deadline === undefined ? {} : { timeoutMs: Math.max(0, Math.round(deadline - performance.now())) });
  try {
    await latch.start({ signal, ...left() });
    if (cmd.timeoutMs === 0) {
      // Busy unless we lead: the leader is another participant.
      if (!latch.hasLeadership) {
        const leader = await latch.leader();
        if (leader && leader.id !== id) return { latch, grant: null };
        await latch.awaitLeadership({ signal, timeoutMs: 2000 });
      }
    } else {
      await latch.awaitLeadership({ signal, ...left() });
    }
  } catch (err) {
    if (err instanceof LockTimeoutError) return { latch, grant: null };
    await latch.close();
    throw err;
  }
  const leadership = latch.leadershipSignal;
  const token = latch.fencingToken;
  if (!leadership || token === undefined) return { latch, grant: null };
  const ours = (await latch.participants()).find((p) => p.czxid === token);
  return { latch, grant: { signal: leadership, fencingToken: token, nodePath: ours?.path ?? '', sessionId: session.sessionId } };
}

/** Runs a lock-like subcommand to its end; resolves with the exit code. @internal */
export async function runHeld(cmd: RunCommand): Promise<number> {
  const reporter = new Reporter(cmd.verbose, cmd.statusFile);
  const signals = new SignalRouter();
  const stop = new AbortController();
  signals.route((s) => {
    reporter.verbose(`${s} while waiting: giving up`);
    stop.abort(new SignalStop(s));
  });
  let session: ZkSession | undefined;
  let created: string[] = [];
  const what = `${cmd.mode} ${cmd.path}`;
  try {
    reporter.status('waiting');
    session = await openSession(cmd, reporter, stop.signal);
    const s = session;
    const misfit = graceMisfit(cmd.killGraceMs, s.timeoutMs);
    if (misfit) throw new ExitError(EXIT.usage, misfit);
    // A later session (after LOST while waiting) may be granted another timeout.
    s.on('session', (info) => {
      const m = graceMisfit(cmd.killGraceMs, info.timeoutMs);
      if (m) stop.abort(new ExitError(EXIT.usage, m));
    });
    created = await missingDirs(s, cmd.path, stop.signal);
    reporter.verbose(`waiting for ${what}${cmd.timeoutMs === undefined ? '' : cmd.timeoutMs === 0 ? ' (no wait)' : ` (at most ${cmd.timeoutMs / 1000}s)`}`);
    let end: TermEnd | undefined;
    for (;;) {
      if (cmd.mode === 'elect') {
        const { latch, grant } = await elect(cmd, s, stop.signal);
        if (!grant) {
          await latch.close();
          reporter.verbose(`${what}: ${cmd.timeoutMs === 0 ? 'busy' : 'timed out'}`);
          reporter.status('released');
          return cmd.conflictExitCode;
        }
        if (stop.signal.aborted) {
          // Stopped between the grant and the command's start: it never runs.
          await latch.close();
          throw stop.signal.reason;
        }
        end = await holdTerm(cmd, s, grant, reporter, signals);
        await latch.close();
      } else {
        const handle = await acquireLock(cmd, s, stop.signal);
        if (!handle) {
          reporter.verbose(`${what}: busy`);
          reporter.status('released');
          return cmd.conflictExitCode;
        }
        if (stop.signal.aborted) {
          await handle.release().catch(() => undefined);
          throw stop.signal.reason;
        }
        end = await holdTerm(cmd, s, { signal: handle.signal, fencingToken: handle.fencingToken, nodePath: handle.path, sessionId: handle.sessionId }, reporter, signals);
        await handle.release().catch((err: unknown) => {
          if (!(err instanceof NotHeldError)) throw err;
        });
      }
      reporter.verbose(`released ${what}`);
      reporter.status(end.lost ? 'lost' : 'released');
      if (!cmd.requeue || end.signalled || stop.signal.aborted) return end.code;
      // elect --requeue: stand again.
      signals.route((sig) => {
        reporter.verbose(`${sig} while waiting: giving up`);
        stop.abort(new SignalStop(sig));
      });
      if (signals.first) return end.code;
      reporter.status('waiting');
      reporter.verbose(`standing again in ${what}`);
    }
  } catch (err) {
    const reason = stop.signal.aborted ? stop.signal.reason : err;
    if (reason instanceof SignalStop) {
      reporter.status('released');
      return signalExitCode(reason.signal);
    }
    if (err instanceof LockTimeoutError) {
      reporter.verbose(`${what}: timed out`);
      reporter.status('released');
      return cmd.conflictExitCode;
    }
    const failure = describeFailure(reason, what);
    reporter.error(failure.message);
    return failure.code;
  } finally {
    if (session) {
      await removeCreated(session, created, reporter);
      await session.close();
    }
    signals.dispose();
  }
}

async function holdTerm(cmd: RunCommand, session: ZkSession, grant: Grant, reporter: Reporter, signals: SignalRouter): Promise<TermEnd> {
  reporter.status('held');
  reporter.verbose(`holding ${cmd.mode} ${cmd.path}: node ${grant.nodePath}, fencing token ${grant.fencingToken}, session 0x${grant.sessionId.toString(16)}`);
  return runTerm(cmd, session, grant, reporter, signals);
}

