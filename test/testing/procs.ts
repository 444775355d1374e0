// Process checks for the kit's tests: is a pid alive, which JVMs carry the test marker.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** True while `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Pids whose command line carries the test servers' marker (`-Dzkrecipes.testing=1`). */
export function markedPids(): number[] {
  try {
    return execFileSync('pgrep', ['-f', 'zkrecipes.testing'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}
