/**
 * Reports of a chaos run: the summary line, and the JSON and HTML files.
 *
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckResult } from './checker/types.js';
import type { ChaosHistory } from './history.js';
import { renderHtml } from './html.js';
import { checkName, describe, need } from './validate.js';

/**
 * The one-line summary of a run, as `key=value` words: `seed`, `seconds` of faults, `clients`;
 * `grants` of locks, leases and leadership, and how many holders were told they `lost` one;
 * acknowledged counter `increments` and queue `puts`; writes the fenced resource accepted
 * (`fenced-writes-accepted`) and refused for a stale fencing token (`fenced-writes-rejected`:
 * fencing at work, not a violation); with a cache workload, the writers' acknowledged
 * `cache-writes` and the node events the caches emitted (`cache-events`); `faults` injected;
 * overlaps `excused` (shown, not violations); and `violations`, by check.
 */
export function summaryLine(history: ChaosHistory, result: CheckResult): string {
  const s = result.stats;
  const grants = Object.values(s.grants).reduce((a, b) => a + b, 0);
  const lost = Object.values(s.lost).reduce((a, b) => a + b, 0);
  const increments = Object.values(s.increments).reduce((a, b) => a + b, 0);
  const items = Object.values(s.queue).reduce((a, q) => a + q.acked, 0);
  const byCheck = new Map<string, number>();
  for (const v of result.violations) byCheck.set(v.check, (byCheck.get(v.check) ?? 0) + 1);
  const which = byCheck.size === 0 ? '' : ` (${[...byCheck].map(([c, n]) => `${c} ${n}`).join(', ')})`;
  const caches = Object.values(s.cache ?? {});
  const cacheWords =
    caches.length === 0 ? '' : ` cache-writes=${caches.reduce((a, c) => a + c.writes, 0)} cache-events=${caches.reduce((a, c) => a + c.caches.reduce((b, x) => b + x.events, 0), 0)}`;
  return (
    `chaos: seed=${history.meta.seed} seconds=${history.meta.seconds} clients=${history.meta.clients.length} ` +
    `grants=${grants} lost=${lost} increments=${increments} puts=${items} fenced-writes-accepted=${s.resource.accepted} fenced-writes-rejected=${s.resource.rejected}${cacheWords} ` +
    `faults=${s.faults} excused=${result.excused.length} violations=${result.violations.length}${which}`
  );
}

/** Paths of the files {@link writeReport} wrote. */
export interface ReportFiles {
  /** The history and the verdict, as JSON. */
  json: string;
  /** The timeline, one self-contained page. */
  html: string;
}

/** Serializes bigints (none should be left, but a user's history may have some) as strings. */
function replacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Writes `report.json` (history and verdict) and `report.html` (the timeline) into `dir`. */
export async function writeReport(dir: string, history: ChaosHistory, result: CheckResult): Promise<ReportFiles> {
  checkName(dir, 'writeReport: dir');
  need(history !== null && typeof history === 'object' && Array.isArray(history.events), `writeReport: history must be a ChaosHistory, got ${describe(history)}`);
  need(result !== null && typeof result === 'object' && Array.isArray(result.violations), `writeReport: result must be a CheckResult, got ${describe(result)}`);
  await mkdir(dir, { recursive: true });
  const json = join(dir, 'report.json');
  const html = join(dir, 'report.html');
  await writeFile(json, JSON.stringify({ summary: summaryLine(history, result), result, history }, replacer));
  await writeFile(html, renderHtml(history, result));
  return { json, html };
}
