/**
 * The timing rule of `zkr`: the child's process group is dead before the server can expire the
 * session, because the next holder is granted the moment it does.
 *
 * The server expires a session no earlier than one negotiated timeout T after its leader last
 * heard of it, which the session's loss clock bounds from below. The session drops a silent
 * connection (and so turns `SUSPENDED`) once that clock is {@link SUSPEND_FRACTION} T old, its
 * watchdog checking every T/20 (at most 250 ms): so when `SUSPENDED` comes, at least
 * {@link suspensionBudgetMs} remains. At `SUSPENDED` a deadline starts that leaves the kill grace
 * plus {@link killMarginMs} before the earliest expiry; at the deadline the kill signal goes to
 * the group, SIGKILL a grace later. A grace that cannot fit the budget is refused.
 *
 * @internal
 * @module
 */
import { SUSPEND_FRACTION } from '../client/generation.js';

/** How often the session's watchdog looks at the loss clock, ms (as generation.ts runs it). */
function watchdogPeriodMs(timeoutMs: number): number {
  return Math.max(20, Math.min(250, Math.floor(timeoutMs / 20)));
}

/** Time that surely remains between `SUSPENDED` and the earliest expiry of a T ms session, ms. @internal */
export function suspensionBudgetMs(timeoutMs: number): number {
  // (+1e-9: 0.2 x 2000 is 399.99... in floating point)
  return Math.floor(timeoutMs * (1 - SUSPEND_FRACTION) + 1e-9) - watchdogPeriodMs(timeoutMs);
}

/** Slack for timers firing late on a busy machine and for the kill's delivery, ms. @internal */
export function killMarginMs(timeoutMs: number): number {
  return Math.max(100, Math.ceil(timeoutMs / 20));
}

/**
 * Why `graceMs` cannot fit a session of `timeoutMs` (undefined: it fits). Checked against the
 * negotiated timeout, which the server may have clamped.
 */
export function graceMisfit(graceMs: number, timeoutMs: number): string | undefined {
  const room = suspensionBudgetMs(timeoutMs) - killMarginMs(timeoutMs);
  if (graceMs <= room) return undefined;
  let needed = timeoutMs;
  while (suspensionBudgetMs(needed) - killMarginMs(needed) < graceMs) needed += 100;
  return (
    `--kill-grace ${graceMs / 1000}s cannot fit the negotiated session timeout of ${timeoutMs / 1000}s: ` +
    `after a suspension at most ${Math.max(0, room) / 1000}s of grace is left before the server may expire the session ` +
    `and grant the next holder. Use --kill-grace ${Math.max(0, room) / 1000} or less, or a --session-timeout of ${needed / 1000} or more (the server must allow it)`
  );
}

/**
 * When to send the kill signal after a suspension: the grace and the margin before the earliest
 * expiry the loss clock allows (`lossClock` + T), in `performance.now()` ms; never before `now`.
 */
export function suspensionDeadline(lossClock: number, timeoutMs: number, graceMs: number, now: number): number {
  return Math.max(now, lossClock + timeoutMs - graceMs - killMarginMs(timeoutMs));
}
