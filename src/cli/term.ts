/**
 * One term of `zkr`: a grant (lock, lease, leadership) held while the child runs. Starts the
 * child with the grant in its environment, enforces the timing rule while it runs, forwards
 * signals to its group, and resolves with the exit code once the group is dead.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import type { ConnectionState } from '../client/types.js';
import type { RunCommand } from './args.js';
import { ChildGroup } from './child.js';
import { EXIT } from './exit-codes.js';
import { suspensionDeadline } from './guard.js';
import type { Reporter } from './report.js';
import type { SignalRouter } from './signals.js';

/** What was granted, as the child sees it. @internal */
export interface Grant {
  /** Aborts when the grant is lost (session LOST, our node deleted). */
  signal: AbortSignal;
  /** The grant's fencing token (our node's czxid). */
  fencingToken: bigint;
  /** Our node's full path. */
  nodePath: string;
  /** The session owning our node. */
  sessionId: bigint;
}

/** How a term ended. @internal */
export interface TermEnd {
  /** `zkr`'s exit code for it: the child's, or 75 when the grant was lost meanwhile. */
  code: number;
  /** Whether the grant was lost while the child ran. */
  lost: boolean;
  /** Whether a signal to `zkr` was forwarded during the term. */
  signalled: boolean;
}

/** Runs the child under `grant` until its group is dead. @internal */
export async function runTerm(cmd: RunCommand, session: ZkSession, grant: Grant, reporter: Reporter, signals: SignalRouter): Promise<TermEnd> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ZKR_HELD: '1',
    ZKR_MODE: cmd.mode,
    ZKR_PATH: cmd.path,
    ZKR_NODE_PATH: grant.nodePath,
    ZKR_SESSION_ID: `0x${grant.sessionId.toString(16)}`,
    ZKR_FENCING_TOKEN: grant.fencingToken.toString(),
  };
  let signalled = false;
  // A signal that came before the child started would be lost: hold it for the group.
  const early: NodeJS.Signals[] = [];
  signals.route((s) => {
    signalled = true;
    early.push(s);
  });
  const started = await ChildGroup.start({ command: cmd.command, shell: cmd.shell, passStdin: cmd.passStdin, env });
  if (!(started instanceof ChildGroup)) {
    reporter.error(`cannot run ${cmd.command[0]}: ${started.spawnError}`);
    return { code: started.code, lost: false, signalled };
  }
  const child = started;
  reporter.verbose(`started ${cmd.command[0]} as pid ${child.pid} (its own process group)`);
  signals.route((s) => {
    signalled = true;
    reporter.verbose(`forwarding ${s} to process group ${child.pid}`);
    child.signal(s);
  });
  for (const s of early) child.signal(s);

  let lost = false;
  let deadline: NodeJS.Timeout | undefined;
  const kill = (why: string): void => {
    if (!lost) {
      lost = true;
      reporter.status('lost');
      reporter.error(`${why}: sending ${cmd.killSignal} to process group ${child.pid}, SIGKILL after ${cmd.killGraceMs / 1000}s`);
    }
    void child.kill(cmd.killSignal, cmd.killGraceMs);
  };
  const onState = (state: ConnectionState): void => {
    if (state === 'SUSPENDED') {
      if (cmd.onSuspended === 'kill') return kill(`${cmd.mode} ${cmd.path}: the connection to ZooKeeper was suspended (--on-suspended kill)`);
      const now = performance.now();
      const at = suspensionDeadline(session.lossClock, session.timeoutMs, cmd.killGraceMs, now);
      reporter.verbose(`suspended: the child is killed in ${Math.round(at - now)} ms unless the session is back`);
      clearTimeout(deadline);
      deadline = setTimeout(() => kill(`${cmd.mode} ${cmd.path}: the connection to ZooKeeper stayed suspended too long to outlive the session`), at - now);
    } else if (state === 'RECONNECTED' || state === 'CONNECTED') {
      if (deadline && !lost) reporter.verbose('reconnected: the same session, still held');
      clearTimeout(deadline);
      deadline = undefined;
    } else if (state === 'LOST') {
      kill(`${cmd.mode} ${cmd.path}: the session was lost`);
    }
  };
  session.on('state', onState);
  const onLost = (): void => kill(`${cmd.mode} ${cmd.path} lost: ${(grant.signal.reason as Error | undefined)?.message ?? 'lost'}`);
  grant.signal.addEventListener('abort', onLost, { once: true });
  // Already suspended (or lost) when the child started: apply the rule now.
  if (grant.signal.aborted) onLost();
  else if (session.state !== 'CONNECTED' && session.state !== 'RECONNECTED') onState(session.state);

  const end = await child.ended;
  reporter.verbose(`child ${child.pid} ${end.signal ? `ended by ${end.signal}` : `exited with ${end.code}`}`);
  // Nothing of the group may outlive the grant: what the child left running goes too.
  if (child.alive()) {
    reporter.verbose(`killing what is left of process group ${child.pid}`);
    await child.kill(cmd.killSignal, cmd.killGraceMs);
  } else if (lost) await child.kill(cmd.killSignal, cmd.killGraceMs);
  // (The chaos suite's zkr workload takes this line as the end of the hold: keep it before the release.)
  reporter.verbose(`process group ${child.pid} is gone`);
  clearTimeout(deadline);
  session.off('state', onState);
  grant.signal.removeEventListener('abort', onLost);
  signals.route(() => undefined);
  return { code: lost ? EXIT.lost : end.code, lost, signalled };
}
