import { rmSync } from 'node:fs';

// Why: no JVM or temp dir may outlive the test process. An 'exit' handler runs
// synchronously on normal exit, process.exit() and uncaught errors (not on SIGKILL:
// the bash wrapper covers that case).
const javaPids = new Set<number>();
const dirs = new Set<string>();
let installed = false;

function onExit(): void {
  for (const pid of javaPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort: the killed JVM may still be writing
    }
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', onExit);
}

/** Registers a live java pid to SIGKILL when node exits. @internal */
export function trackPid(pid: number): void {
  install();
  javaPids.add(pid);
}

/** Forgets a java pid that has exited. @internal */
export function untrackPid(pid: number): void {
  javaPids.delete(pid);
}

/** Registers a temp dir to remove when node exits. @internal */
export function trackDir(dir: string): void {
  install();
  dirs.add(dir);
}

/** Forgets a temp dir that has been removed. @internal */
export function untrackDir(dir: string): void {
  dirs.delete(dir);
}
