/**
 * Forced expiry of a session known only by its credentials (another process's session).
 *
 * @module
 */
import { ZkSession } from '../../client/session.js';
import { ChaosProxy } from '../proxy.js';
import { MAX_TIMER_MS } from '../../client/validate.js';
import { checkInt, checkName, checkObject, checkOptionalFunction, describe, need, optionKeys } from './validate.js';

/** A session's id, password and timeout, e.g. as a client process reports them. */
export interface SessionTicket {
  /** The session id. */
  sessionId: bigint;
  /** The 16-byte session password. */
  password: Buffer;
  /** The negotiated session timeout, ms. */
  timeoutMs: number;
}

/** Options of {@link expireSessionByTicket}. */
export interface ExpireByTicketOptions {
  /** Bound of the whole operation, ms. Default 20000. */
  timeoutMs?: number;
  /**
   * Awaited once the proxies refuse the owner's traffic and before the session is closed, e.g.
   * to wait until the owner reports `SUSPENDED` (so it is told its locks may be lost before the
   * server deletes its nodes).
   */
  afterCutOff?: () => Promise<void>;
}

/** The keys of {@link ExpireByTicketOptions}. @internal */
export const EXPIRE_BY_TICKET_OPTION_KEYS = optionKeys<ExpireByTicketOptions>({ timeoutMs: true, afterCutOff: true });

/**
 * Expires a session on the server, given its credentials and every proxy its owner connects
 * through (its only routes to the ensemble): the proxies refuse its traffic, a second client
 * joins the session directly at `connectString` and closes it, then the proxies heal and the
 * owner, on reconnecting, is told its session expired. Like {@link expireSession}, for a session
 * that lives in another process (a chaos client, a service under test). Resolves once the
 * session is closed on the server.
 *
 * @throws Error when the join lands in another session (the ticket's session had already ended).
 */
export async function expireSessionByTicket(ticket: SessionTicket, proxies: readonly ChaosProxy[], connectString: string, options: ExpireByTicketOptions = {}): Promise<void> {
  need(ticket !== null && typeof ticket === 'object', `expireSessionByTicket: ticket must be an object, got ${describe(ticket)}`);
  need(typeof ticket.sessionId === 'bigint' && ticket.sessionId > 0n && ticket.sessionId < 2n ** 64n, `expireSessionByTicket: ticket.sessionId must be a bigint session id, got ${describe(ticket.sessionId)}`);
  need(Buffer.isBuffer(ticket.password) && ticket.password.length === 16, `expireSessionByTicket: ticket.password must be a 16-byte Buffer, got ${describe(ticket.password)}`);
  checkInt(ticket.timeoutMs, 'expireSessionByTicket: ticket.timeoutMs', 1, MAX_TIMER_MS);
  need(Array.isArray(proxies) && proxies.length > 0 && proxies.every((p) => p instanceof ChaosProxy), `expireSessionByTicket: proxies must be a non-empty array of ChaosProxy, got ${describe(proxies)}`);
  checkName(connectString, 'expireSessionByTicket: connectString');
  const o = checkObject(options, 'expireSessionByTicket', EXPIRE_BY_TICKET_OPTION_KEYS);
  const timeoutMs = checkInt(o.timeoutMs, 'expireSessionByTicket options.timeoutMs', 1, MAX_TIMER_MS, 20_000);
  checkOptionalFunction(o.afterCutOff, 'expireSessionByTicket options.afterCutOff');
  const id = Buffer.alloc(8);
  id.writeBigUInt64BE(ticket.sessionId);
  for (const p of proxies) {
    p.reject(true);
    p.dropAll();
  }
  try {
    await options.afterCutOff?.();
    const joiner = await ZkSession.connect(connectString, {
      join: { sessionId: id, password: ticket.password },
      sessionTimeoutMs: ticket.timeoutMs,
      renewOnLoss: false,
      connectTimeoutMs: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const joined = joiner.sessionId;
    await joiner.close();
    if (joined !== ticket.sessionId) throw new Error(`joined 0x${joined.toString(16)} instead of 0x${ticket.sessionId.toString(16)}: that session had ended already`);
  } finally {
    for (const p of proxies) {
      p.reject(false);
      p.pass();
    }
  }
}
