/**
 * The signals `zkr` passes on: TERM, INT, HUP, QUIT, USR1 and USR2. While it waits, the first
 * one ends the wait (the queued node is removed, then `zkr` exits 128 + N); while the child
 * runs, each goes to the child's process group.
 *
 * @internal
 * @module
 */

/** The signals `zkr` handles. @internal */
export const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

/** Routes signals to whatever `zkr` is doing now. @internal */
export class SignalRouter {
  /** The first signal received, if any (decides the exit code when no child ran). */
  first: NodeJS.Signals | undefined;
  private handler: (signal: NodeJS.Signals) => void = () => undefined;
  private readonly listeners = new Map<NodeJS.Signals, () => void>();

  constructor() {
    for (const s of FORWARDED) {
      const l = (): void => {
        this.first ??= s;
        this.handler(s);
      };
      this.listeners.set(s, l);
      process.on(s, l);
    }
  }

  /** What to do with each signal from now on. */
  route(handler: (signal: NodeJS.Signals) => void): void {
    this.handler = handler;
  }

  /** Restores the default dispositions. */
  dispose(): void {
    for (const [s, l] of this.listeners) process.off(s, l);
    this.listeners.clear();
  }
}
