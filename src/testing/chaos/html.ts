/**
 * The HTML timeline of a chaos run (placeholder until the full renderer lands).
 *
 * @module
 */
import type { CheckResult } from './checker/types.js';
import type { ChaosHistory } from './history.js';

/** Renders a self-contained HTML page of the run. */
export function renderHtml(history: ChaosHistory, result: CheckResult): string {
  return `<!doctype html><meta charset="utf-8"><title>chaos ${history.meta.seed}</title><pre>${JSON.stringify(result.stats, null, 2)}</pre>`;
}
