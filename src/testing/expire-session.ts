/**
 * Forced, real, server-side session expiry for tests.
 *
 * @module
 */
import { ZkSession } from '../client/session.js';
import { ClosedError, IllegalStateError, InvalidArgumentError } from '../errors.js';
import { checkDeadline, checkNonEmptyString, checkOptions, describe, optionKeys } from './check.js';
import { ChaosProxy } from './proxy.js';
import { WaitTimeoutError } from './wait.js';

/** Options of {@link expireSession}. @group Testing */
export interface ExpireSessionOptions {
  /**
   * Where the second client connects to join the session: a server the victim is *not* routed
   * through. Defaults to the proxy's target.
   */
  connectString?: string;
  /** Bound of the whole operation, ms (1 to 2^31-1). Default 20000. */
  timeoutMs?: number;
}

/** The keys of {@link ExpireSessionOptions}. @internal */
export const EXPIRE_SESSION_OPTION_KEYS = optionKeys<ExpireSessionOptions>({ connectString: true, timeoutMs: true });

/**
 * Expires `victim`'s current session on the server, deterministically. The victim must be
 * connected through `proxy` (its only route to the server). While the proxy refuses the
 * victim's traffic, a second client joins the same session directly (same id and password) and
 * closes it, so the server expires it; then the proxy heals and the victim, on reconnecting, is
 * told its session expired. Resolves once the victim has reported `LOST`.
 *
 * A plain join-and-close without cutting the victim off is racy: the victim reconnects at once
 * and takes the session back before the close arrives. The second client logs in as the victim
 * does (its SASL login, auth and TLS options), so a server that requires SASL, or a TLS port,
 * lets it join.
 *
 * Every argument is checked before anything is done: {@link InvalidArgumentError} for a victim
 * that is not a connected `ZkSession`, a proxy that is not a {@link ChaosProxy}, or a bad
 * option; {@link ClosedError} for a closed victim. Rejects with {@link WaitTimeoutError} when
 * the victim does not report `LOST` within `timeoutMs`.
 * @group Testing
 */
export async function expireSession(victim: ZkSession, proxy: ChaosProxy, options: ExpireSessionOptions = {}): Promise<void> {
  if (!(victim instanceof ZkSession)) throw new InvalidArgumentError(`expireSession: victim must be a ZkSession, got ${describe(victim)}`);
  if (!(proxy instanceof ChaosProxy)) throw new InvalidArgumentError(`expireSession: proxy must be the ChaosProxy the victim connects through, got ${describe(proxy)}`);
  const o = checkOptions(options, 'expireSession', EXPIRE_SESSION_OPTION_KEYS);
  const timeoutMs = checkDeadline(o.timeoutMs, 'timeoutMs', 20_000);
  if (o.connectString !== undefined) checkNonEmptyString(o.connectString, 'connectString');
  if (victim.closed) throw new ClosedError('expireSession: the victim session is closed');
  if (victim.sessionId === 0n) throw new InvalidArgumentError('expireSession: the victim has no session yet; wait for it to connect');
  const deadline = AbortSignal.timeout(timeoutMs);
  const expiredId = victim.sessionId;
  const lost = new Promise<void>((resolve, reject) => {
    const onState = (state: string): void => {
      if (state === 'LOST') {
        victim.off('state', onState);
        resolve();
      }
    };
    victim.on('state', onState);
    deadline.addEventListener('abort', () => {
      victim.off('state', onState);
      reject(new WaitTimeoutError(`expireSession: session 0x${expiredId.toString(16)} was not reported LOST within ${timeoutMs} ms`));
    });
  });
  lost.catch(() => undefined);

  proxy.reject(true);
  proxy.dropAll();
  try {
    const joiner = await ZkSession.connect(o.connectString ?? `${proxy.targetHost}:${proxy.targetPort}`, {
      ...victim.identity(),
      join: victim.credentials(),
      sessionTimeoutMs: victim.timeoutMs,
      renewOnLoss: false,
      connectTimeoutMs: timeoutMs,
      signal: deadline,
    });
    if (joiner.sessionId !== expiredId) {
      await joiner.close();
      throw new IllegalStateError(`expireSession: joined 0x${joiner.sessionId.toString(16)} instead of 0x${expiredId.toString(16)}`);
    }
    await joiner.close();
  } finally {
    proxy.reject(false);
    proxy.pass();
  }
  await lost;
}
