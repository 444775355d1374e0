// Memory figures: the client's heap after a forced full GC, and the server JVM's live heap.
import { spawnSync } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Why at runtime: `npm run bench` need not pass --expose-gc; a new context then sees `gc`.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The process's memory after a full GC, bytes. */
export interface Memory {
  /** JS heap in use (what the recipes' objects, strings and closures take). */
  heap: number;
  /** Resident set of the whole process. */
  rss: number;
}

/** Forces a full GC (twice: finalizers of the first may free more) and reads the memory. */
export function memoryAfterGc(): Memory {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

/**
 * Live heap of the server's JVM after a full GC, MB (`jcmd GC.run`, then `GC.heap_info`), or
 * undefined without a pid or a jcmd.
 */
export function serverHeapMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const run = (cmd: string): string | undefined => {
    const r = spawnSync('jcmd', [String(pid), cmd], { encoding: 'utf8', timeout: 60_000 });
    return r.status === 0 ? r.stdout : undefined;
  };
  if (run('GC.run') === undefined) return undefined;
  // One line per heap or generation, e.g. "garbage-first heap   total 1048576K, used 523456K"
  // (G1) or "def new generation ..." and "tenured generation ..." (serial, the test servers').
  const used = [...(run('GC.heap_info') ?? '').matchAll(/total \d+K, used (\d+)K/g)].map((m) => Number(m[1]));
  return used.length > 0 ? Math.round(used.reduce((a, b) => a + b, 0) / 1024) : undefined;
}
