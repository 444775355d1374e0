// The chaos reports as people read them: the summary line, the violation messages, and the HTML
// page, opened in real headless Chromium as a user opens report.html. A small doctored history
// (a mutex overlap, a partition, a fault still on at the end, fenced writes, a queue) stamped
// on a monotonic-looking clock far from 0, so any time not counted from the run's start shows.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { checkHistory, renderHtml, summaryLine, writeReport, type ChaosEvent, type ChaosHistory, type WorkloadSpec } from '../../src/testing/index.js';
import { loadInChromium } from '../browser.js';

const T0 = 2_013_775.4; // chaosNow() of a host up for a while
const MUTEX: WorkloadSpec = { name: 'mutex', kind: 'mutex', path: '/c/mutex', maxLeases: 1, register: 'mutex' };
const QUEUE: WorkloadSpec = { name: 'take', kind: 'queue-at-most-once', path: '/c/take', maxLeases: 1 };

function history(): ChaosHistory {
  const at = (s: number): number => T0 + s * 1000;
  const events: ChaosEvent[] = [
    ...[1, 2, 3].map((member): ChaosEvent => ({ type: 'member', t: at(0), client: 'nemesis', member, state: 'up' })),
    { type: 'leader', t: at(0.1), client: 'nemesis', member: 2 },
    { type: 'wait', t: at(0.9), client: 'a', workload: 'mutex', attempt: 'a1', leases: 1, mode: 'exclusive' },
    { type: 'grant', t: at(1), client: 'a', workload: 'mutex', attempt: 'a1', token: '16', leases: 1, mode: 'exclusive', sessionId: '0x1', lostAtGrant: false },
    { type: 'fault', t: at(2), client: 'nemesis', phase: 'start', id: 1, fault: 'partition', target: 'a', detail: 'blackhole 1500 ms' },
    { type: 'wait', t: at(2.5), client: 'b', workload: 'mutex', attempt: 'b1', leases: 1, mode: 'exclusive' },
    { type: 'grant', t: at(3.0004), client: 'b', workload: 'mutex', attempt: 'b1', token: '17', leases: 1, mode: 'exclusive', sessionId: '0x2', lostAtGrant: false },
    { type: 'fault', t: at(3.5), client: 'nemesis', phase: 'end', id: 1, fault: 'partition', target: 'a', detail: 'healed' },
    { type: 'resource', t: at(3.6), client: 'resource', register: 'mutex', writer: 'b', token: '17', value: 1, accepted: true, highest: '-1' },
    { type: 'resource', t: at(3.7), client: 'resource', register: 'mutex', writer: 'a', token: '16', value: 2, accepted: false, highest: '17' },
    { type: 'end', t: at(4.2), client: 'a', workload: 'mutex', attempt: 'a1', why: 'release' },
    { type: 'end', t: at(5), client: 'b', workload: 'mutex', attempt: 'b1', why: 'release' },
    { type: 'put', t: at(5.5), client: 'q', phase: 'invoke', workload: 'take', item: 'item-1' },
    { type: 'put', t: at(5.6), client: 'q', phase: 'ok', workload: 'take', item: 'item-1' },
    { type: 'take', t: at(6), client: 'q', phase: 'ok', workload: 'take', item: 'item-1' },
    { type: 'fault', t: at(8), client: 'nemesis', phase: 'start', id: 2, fault: 'latency', target: 'q', detail: '300 ms' },
  ];
  return {
    version: 1,
    meta: {
      seed: 7,
      seconds: 10,
      startedAt: T0,
      endedAt: at(10),
      sessionTimeoutMs: 4000,
      clients: [
        { name: 'a', workload: 'mutex' },
        { name: 'b', workload: 'mutex' },
        { name: 'q', workload: 'take' },
      ],
      workloads: [MUTEX, QUEUE],
      members: [1, 2, 3],
    },
    events,
    final: {
      counters: {},
      queueItems: { take: [] },
      ephemerals: [],
      members: [1, 2, 3].map((member) => ({ member, watches: 0, clientConnections: [], ephemerals: 0, trackedSessions: member === 2 ? [] : null, globalSessions: member === 2 ? 0 : null })),
    },
  };
}

describe('chaos reports, as people read them', () => {
  const h = history();
  const result = checkHistory(h);
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the checker finds the overlap, and says when in seconds from the run start, with hex tokens', () => {
    assert.deepEqual(
      result.violations.map((v) => v.check),
      ['exclusion'],
      result.violations.map((v) => v.message).join('\n'),
    );
    const [v] = result.violations;
    assert.equal(v!.message, '2 leases held (at most 1 allowed): a exclusive token 0x10, b exclusive token 0x11 all believed they held for 1200 ms from 3.00 s into the run');
    assert.doesNotMatch(v!.message, /2013/, 'not the monotonic clock');
  });

  it('the summary line names its counts: fenced writes accepted and rejected, not resource=N/M', () => {
    const line = summaryLine(h, result);
    assert.match(line, / fenced-writes-accepted=1 fenced-writes-rejected=1 /);
    assert.doesNotMatch(line, /resource=/);
    assert.match(line, /violations=1 \(exclusion 1\)$/);
  });

  it('the HTML page reads as a report: verdict, tables of workloads, queues and faults; no raw JSON, no long fractions', () => {
    const html = renderHtml(h, result);
    const text = html.replace(/<style>[\s\S]*?<\/style>/, '').replace(/<svg[\s\S]*<\/svg>/, '').replace(/<[^>]+>/g, ' ');
    assert.match(text, /1 violation \(exclusion: 1\)/);
    assert.match(text, /\[exclusion mutex\]\s+at 3\.00 s:/);
    assert.doesNotMatch(text, /\{"|null|undefined|NaN/, 'no raw JSON, null or undefined in the text');
    assert.doesNotMatch(text, /\d\.\d{4,}/, 'no unrounded fraction in the text');
    assert.doesNotMatch(html, /\d\.\d{4,}/, 'nor in the timeline');
  });

  it('report.html in headless Chromium: the violation and the fault table show, and no script error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-recipes-report-'));
    dirs.push(dir);
    const { html } = await writeReport(dir, h, result);
    const { errors, value } = await loadInChromium(
      pathToFileURL(html).href,
      `(() => {
        const shown = (el) => !!el && el.getBoundingClientRect().height > 0 && getComputedStyle(el).visibility !== 'hidden';
        const violation = document.querySelector('#violations details summary');
        const rows = [...document.querySelectorAll('table.faults tr')].slice(1).map((tr) => [...tr.cells].map((c) => c.innerText.trim()));
        return {
          title: document.title,
          verdict: document.querySelector('#verdict')?.innerText ?? null,
          violation: violation?.innerText ?? null,
          violationShown: shown(violation),
          faults: rows,
          faultsShown: shown(document.querySelector('table.faults')),
          workloads: [...document.querySelectorAll('table.workloads tr')].slice(1).map((tr) => [...tr.cells].map((c) => c.innerText.trim())),
          marks: document.querySelectorAll('svg line.violation').length,
          text: document.body.innerText,
        };
      })()`,
    );
    assert.deepEqual(errors, [], 'no script error');
    const page = value as {
      title: string;
      verdict: string;
      violation: string;
      violationShown: boolean;
      faults: string[][];
      faultsShown: boolean;
      workloads: string[][];
      marks: number;
      text: string;
    };
    assert.equal(page.title, 'zk-recipes chaos run, seed 7');
    assert.match(page.verdict, /^1 violation \(exclusion: 1\)\./);
    assert.ok(page.violationShown, 'the violation is on the page, not only in a tooltip');
    assert.match(page.violation, /^\[exclusion mutex\] at 3\.00 s: 2 leases held .* token 0x10, .* token 0x11 .* for 1200 ms from 3\.00 s into the run$/);
    assert.equal(page.marks, 1, 'one violation marked on the timeline');
    assert.ok(page.faultsShown, 'the faults are in a table');
    assert.deepEqual(page.faults, [
      ['1', 'partition', 'a', '2.00 s', '3.50 s', '1.50 s', 'blackhole 1500 ms; healed'],
      ['2', 'latency', 'q', '8.00 s', 'still on at the end', '2.00 s', '300 ms'],
    ]);
    assert.deepEqual(page.workloads, [['mutex', 'mutex', '2', '2', '0', 'no loss was followed by a grant', '', '1 accepted, 1 rejected']]);
    assert.doesNotMatch(page.text, /\{"|\bnull\b|undefined|NaN|\d\.\d{4,}/);
  });
});
