/**
 * The HTML report of a chaos run: one self-contained page (inline SVG and CSS, no script, no
 * network): the verdict, tables of the workloads, queues, caches and faults, the violations with the
 * events that show them, and the timeline. Times are seconds from the run's start, tokens hex.
 *
 * @module
 */
import { beliefIntervals } from './checker/beliefs.js';
import type { CheckResult, Violation } from './checker/types.js';
import { hexToken, ms, runSeconds } from './format.js';
import type { ChaosEvent, ChaosHistory, FaultEvent } from './history.js';

const PX_PER_S = 24;
const LANE = 22;
const LEFT = 110;

/** Escapes text for HTML and SVG. */
function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** A bar on a lane. */
interface Bar {
  from: number;
  to: number;
  cls: string;
  title: string;
  /** Offset and height within the lane. */
  y?: number;
  h?: number;
}

/** Spans between an opening event and the next closing one, per key. */
function spans<T extends ChaosEvent>(events: readonly T[], key: (e: T) => string | undefined, opens: (e: T) => boolean, closes: (e: T) => boolean, end: number): { key: string; from: number; to: number; open: T }[] {
  const started = new Map<string, T>();
  const out: { key: string; from: number; to: number; open: T }[] = [];
  for (const e of events) {
    const k = key(e);
    if (k === undefined) continue;
    const o = started.get(k);
    if (o && closes(e)) {
      out.push({ key: k, from: o.t, to: e.t, open: o });
      started.delete(k);
    }
    if (opens(e) && !started.has(k)) started.set(k, e);
  }
  for (const [k, o] of started) out.push({ key: k, from: o.t, to: end, open: o });
  return out;
}

/** The bars of every lane: members first, then clients. */
function lanes(history: ChaosHistory): { name: string; bars: Bar[]; marks: { t: number; cls: string; title: string }[] }[] {
  const { meta } = history;
  const end = Math.max(meta.endedAt, ...history.events.map((e) => e.t));
  const events = [...history.events].sort((a, b) => a.t - b.t);
  const out = new Map<string, { name: string; bars: Bar[]; marks: { t: number; cls: string; title: string }[] }>();
  const lane = (name: string): { name: string; bars: Bar[]; marks: { t: number; cls: string; title: string }[] } => {
    let l = out.get(name);
    if (!l) out.set(name, (l = { name, bars: [], marks: [] }));
    return l;
  };
  for (const m of meta.members) lane(`member-${m}`);
  for (const c of meta.clients) lane(c.name);
  const members = events.filter((e) => e.type === 'member');
  for (const s of spans(members, (e) => (e.type === 'member' ? `member-${e.member}` : undefined), (e) => e.type === 'member' && e.state === 'up', (e) => e.type === 'member' && e.state === 'down', end)) {
    lane(s.key).bars.push({ from: s.from, to: s.to, cls: 'up', title: `${s.key} up` });
  }
  const leaders = events.filter((e) => e.type === 'leader');
  leaders.forEach((e, i) => {
    if (e.type !== 'leader' || e.member === null) return;
    const to = leaders[i + 1]?.t ?? end;
    lane(`member-${e.member}`).bars.push({ from: e.t, to, cls: 'leader', title: `member-${e.member} leader`, y: 6, h: 10 });
  });
  const waits = events.filter((e) => e.type === 'wait' || e.type === 'grant' || e.type === 'wait-fail');
  for (const s of spans(waits, (e) => ('attempt' in e ? `${e.client}\u0000${e.attempt}` : undefined), (e) => e.type === 'wait', (e) => e.type !== 'wait', end)) {
    lane(s.open.client).bars.push({ from: s.from, to: s.to, cls: 'wait', title: `${s.open.client} waiting (${'attempt' in s.open ? s.open.attempt : ''})`, y: 8, h: 6 });
  }
  for (const list of beliefIntervals(history).values()) {
    for (const i of list) {
      const lost = i.ended?.why === 'lost';
      lane(i.client).bars.push({ from: i.start, to: i.end, cls: `hold ${i.mode}${lost ? ' lostend' : ''}`, title: `${i.client} (${i.attempt}) holds ${i.workload} ${i.mode}${i.leases > 1 ? ` x${i.leases}` : ''} token ${hexToken(i.token)}${lost ? `; told lost: ${i.ended?.error ?? ''}` : ''}`, y: 3, h: 16 });
      if (lost) lane(i.client).marks.push({ t: i.end, cls: 'lost', title: `told lost: ${i.ended?.error ?? ''}` });
    }
  }
  const sessions = events.filter((e) => e.type === 'session');
  for (const s of spans(sessions, (e) => (e.type === 'session' ? `${e.client} ${e.sessionId}` : undefined), (e) => e.type === 'session' && e.state === 'SUSPENDED', (e) => e.type === 'session' && e.state !== 'SUSPENDED', end)) {
    lane(s.open.client).bars.push({ from: s.from, to: s.to, cls: 'suspended', title: `${s.key} SUSPENDED`, y: 19, h: 3 });
  }
  // A cache from going stale to its next full re-read: a thin band on its client's lane.
  const caches = events.filter((e) => e.type === 'cache' && e.event !== 'added' && e.event !== 'changed' && e.event !== 'removed' && e.event !== 'error');
  for (const s of spans(caches, (e) => (e.type === 'cache' ? e.cache : undefined), (e) => e.type === 'cache' && e.event === 'stale', (e) => e.type === 'cache' && e.event !== 'stale', end)) {
    lane(s.open.client).bars.push({ from: s.from, to: s.to, cls: 'cachestale', title: `cache ${s.key} STALE until re-read`, y: 16, h: 3 });
  }
  for (const e of sessions) if (e.type === 'session' && e.state === 'LOST') lane(e.client).marks.push({ t: e.t, cls: 'sessionlost', title: `session ${e.sessionId} LOST` });
  const faults = events.filter((e) => e.type === 'fault');
  for (const s of spans(faults, (e) => (e.type === 'fault' ? String(e.id) : undefined), (e) => e.type === 'fault' && e.phase === 'start', (e) => e.type === 'fault' && e.phase === 'end', end)) {
    const f = s.open;
    if (f.type !== 'fault') continue;
    const title = `fault #${f.id} ${f.fault}: ${f.detail ?? ''}`;
    lane(f.target).bars.push({ from: s.from, to: Math.max(s.to, s.from + 40), cls: 'fault', title, y: 0, h: 3 });
    // A member cut off or slowed: a band across its lane, beside up/leader.
    if (f.fault === 'isolate-follower' || f.fault === 'minority-partition') lane(f.target).bars.push({ from: s.from, to: s.to, cls: 'isolated', title: `${f.target} isolated: ${title}`, y: 16, h: 5 });
    if (f.fault === 'slow-follower') lane(f.target).bars.push({ from: s.from, to: s.to, cls: 'slow', title: `${f.target} slow: ${title}`, y: 16, h: 5 });
    if (f.fault === 'delete-waiter') lane(f.target).marks.push({ t: s.from, cls: 'deleted', title });
  }
  for (const e of events) {
    if (e.type === 'put' && e.phase === 'ok') lane(e.client).marks.push({ t: e.t, cls: 'put', title: `put ${e.item}` });
    if (e.type === 'take' && e.phase === 'ok') lane(e.client).marks.push({ t: e.t, cls: 'take', title: `took ${e.item ?? ''}` });
    if (e.type === 'handled') lane(e.client).marks.push({ t: e.t, cls: e.outcome === 'resolved' ? 'take' : 'lost', title: `handled ${e.item} (${e.outcome ?? ''})` });
  }
  return [...out.values()];
}

/** An event's fields, for reading: `key=value`, tokens in hex, fractions rounded. */
function fields(e: ChaosEvent): string {
  const { t: _t, client: _c, type: _type, ...rest } = e;
  return Object.entries(rest)
    .map(([k, v]) => {
      if ((k === 'token' || k === 'highest') && typeof v === 'string') return `${k}=${hexToken(v)}`;
      if (typeof v === 'number' && !Number.isInteger(v)) return `${k}=${v.toFixed(1)}`;
      return `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
    })
    .join(' ');
}

/** A table of a violation's events. */
function excerptTable(v: Violation, t0: number): string {
  const rows = v.events.map((e) => `<tr><td class="num">${((e.t - t0) / 1000).toFixed(3)}</td><td>${esc(e.client)}</td><td>${esc(e.type)}</td><td><code>${esc(fields(e))}</code></td></tr>`);
  return rows.length === 0 ? '' : `<table><tr><th>t (s)</th><th>client</th><th>event</th><th>details</th></tr>${rows.join('')}</table>`;
}

/** `1 fault`, `2 faults`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A table: a header row, then rows of cells (already HTML). */
function table(cls: string, head: readonly string[], rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const tr = (cells: readonly string[], tag: 'td' | 'th'): string => `<tr>${cells.map((c) => `<${tag}>${c}</${tag}>`).join('')}</tr>`;
  return `<table class="${cls}">${tr(head, 'th')}${rows.map((r) => tr(r, 'td')).join('')}</table>`;
}

/** One row per lock-like workload: grants, losses, the closest loss-to-grant margin, counter, fenced writes. */
function workloadRows(history: ChaosHistory, result: CheckResult): string[][] {
  const s = result.stats;
  return history.meta.workloads
    .filter((w) => w.name in s.grants)
    .map((w) => {
      const writes = history.events.filter((e) => e.type === 'resource' && w.register !== undefined && e.register === w.register);
      const accepted = writes.filter((e) => e.type === 'resource' && e.accepted).length;
      const margin = s.lossMarginMs[w.name];
      return [
        esc(w.name),
        esc(w.kind) + (w.maxLeases > 1 ? ` (${w.maxLeases} leases)` : ''),
        String(history.meta.clients.filter((c) => c.workload === w.name).length),
        String(s.grants[w.name] ?? 0),
        String(s.lost[w.name] ?? 0),
        margin === undefined ? '' : margin === null ? 'no loss was followed by a grant' : ms(margin),
        s.increments[w.name] === undefined ? '' : String(s.increments[w.name]),
        w.register === undefined ? '' : `${accepted} accepted, ${writes.length - accepted} rejected`,
      ];
    });
}

/** One row per queue workload. */
function queueRows(history: ChaosHistory, result: CheckResult): string[][] {
  return history.meta.workloads
    .filter((w) => w.name in result.stats.queue)
    .map((w) => {
      const q = result.stats.queue[w.name]!;
      return [esc(w.name), esc(w.kind), String(q.acked), String(q.taken), String(q.handled), String(q.remaining)];
    });
}

/** One row per cache of a cache workload: what it is, what it went through, how it ended. */
function cacheRows(history: ChaosHistory, result: CheckResult): string[][] {
  const rows: string[][] = [];
  for (const [workload, c] of Object.entries(result.stats.cache)) {
    for (const x of c.caches) {
      const start = history.events.find((e) => e.type === 'cache-start' && e.workload === workload && e.cache === x.cache && e.phase === 'invoke');
      const resolved = history.events.find((e) => e.type === 'cache-start' && e.workload === workload && e.cache === x.cache && e.phase === 'ok');
      const mode = start?.type === 'cache-start' ? `${start.watchMode}${resolved?.type === 'cache-start' && resolved.resolvedWatchMode ? ` (${resolved.resolvedWatchMode})` : ''}${start.cacheData ? '' : ', stats only'}` : '';
      rows.push([
        esc(x.cache),
        start?.type === 'cache-start' ? `${esc(start.kind)} on <code>${esc(start.root)}</code>` : '',
        esc(mode),
        String(x.events),
        String(x.stale),
        String(x.resyncs),
        x.finalState === undefined ? 'no final state' : `${esc(x.finalState)}, ${x.finalNodes ?? 0} nodes`,
      ]);
    }
  }
  return rows;
}

/** One row per fault: its number, kind, target, when it started and ended, and what it did. */
function faultRows(history: ChaosHistory, t0: number, end: number): string[][] {
  const faults = history.events.filter((e): e is FaultEvent => e.type === 'fault').sort((a, b) => a.t - b.t);
  const ends = new Map<number, FaultEvent>();
  for (const f of faults) if (f.phase === 'end') ends.set(f.id, f);
  return faults
    .filter((f) => f.phase === 'start')
    .map((f) => {
      const e = ends.get(f.id);
      const details = [f.detail, e?.detail].filter((d) => d !== undefined && d !== '').join('; ');
      return [
        `<span id="fault-${f.id}">${f.id}</span>`,
        esc(f.fault),
        esc(f.target),
        `<span class="num">${runSeconds(f.t, t0)}</span>`,
        e ? `<span class="num">${runSeconds(e.t, t0)}</span>` : 'still on at the end',
        `<span class="num">${((((e?.t ?? end) - f.t) / 1000)).toFixed(2)} s</span>`,
        esc(details),
      ];
    });
}

/** Renders the run as a self-contained HTML page: summary, violations, and the timeline. */
export function renderHtml(history: ChaosHistory, result: CheckResult): string {
  const t0 = history.meta.startedAt;
  const end = Math.max(history.meta.endedAt, ...history.events.map((e) => e.t));
  const x = (t: number): number => LEFT + ((t - t0) / 1000) * PX_PER_S;
  const all = lanes(history);
  const width = Math.ceil(x(end)) + 20;
  const height = all.length * LANE + 30;
  const svg: string[] = [];
  for (let s = 0; s <= (end - t0) / 1000; s += 5) svg.push(`<line class="tick" x1="${x(t0 + s * 1000).toFixed(1)}" x2="${x(t0 + s * 1000).toFixed(1)}" y1="0" y2="${height - 20}"/><text class="axis" x="${(x(t0 + s * 1000) + 2).toFixed(1)}" y="${height - 6}">${s}s</text>`);
  all.forEach((l, i) => {
    const y = i * LANE;
    svg.push(`<text class="name" x="4" y="${y + 15}">${esc(l.name)}</text><line class="sep" x1="${LEFT}" x2="${width}" y1="${y + LANE}" y2="${y + LANE}"/>`);
    for (const b of l.bars) svg.push(`<rect class="${b.cls}" x="${x(b.from).toFixed(1)}" y="${y + (b.y ?? 2)}" width="${Math.max(1, x(b.to) - x(b.from)).toFixed(1)}" height="${b.h ?? 18}"><title>${esc(b.title)}</title></rect>`);
    for (const m of l.marks) svg.push(`<rect class="${m.cls}" x="${(x(m.t) - 1).toFixed(1)}" y="${y + 1}" width="2" height="${LANE - 2}"><title>${esc(m.title)}</title></rect>`);
  });
  for (const v of result.excused) if (v.t !== undefined) svg.push(`<line class="excused" x1="${x(v.t).toFixed(1)}" x2="${x(v.t).toFixed(1)}" y1="0" y2="${height - 20}"><title>${esc(v.message)}</title></line>`);
  for (const v of result.violations) if (v.t !== undefined) svg.push(`<line class="violation" x1="${x(v.t).toFixed(1)}" x2="${x(v.t).toFixed(1)}" y1="0" y2="${height - 20}"><title>${esc(v.message)}</title></line>`);
  const list = (vs: readonly Violation[]): string =>
    vs
      .map((v) => `<details class="violation"><summary><b>[${esc(v.check)}${v.workload ? ` ${esc(v.workload)}` : ''}]</b>${v.t === undefined ? '' : ` at ${runSeconds(v.t, t0)}:`} ${esc(v.message)}</summary>${excerptTable(v, t0)}</details>`)
      .join('');
  const m = history.meta;
  const r = result;
  const byCheck = new Map<string, number>();
  for (const v of r.violations) byCheck.set(v.check, (byCheck.get(v.check) ?? 0) + 1);
  const verdict =
    r.violations.length === 0
      ? 'No violations: every promise checked held.'
      : `${count(r.violations.length, 'violation')} (${[...byCheck].map(([c, n]) => `${esc(c)}: ${n}`).join(', ')}).`;
  const faults = faultRows(history, t0, end);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>zk-recipes chaos run, seed ${m.seed}</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px} h2{font-size:15px;margin-top:20px} .ok{color:#176b2c} .bad{color:#b00020}
.scroll{overflow-x:auto;border:1px solid #ccc} table{border-collapse:collapse;margin:6px 0} td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top} th{background:#f6f6f6} code{font-size:11px} .num{font-variant-numeric:tabular-nums;white-space:nowrap}
details.violation{margin:4px 0} details.violation summary{cursor:pointer}
svg text.name{font-size:11px} svg text.axis{font-size:10px;fill:#666}
.tick{stroke:#eee} .sep{stroke:#f2f2f2}
.up{fill:#cfe8cf} .leader{fill:#e0b100} .wait{fill:#cfcfcf}
.hold{fill:#2f6fd6} .hold.read{fill:#7fb0f0} .hold.write{fill:#173f8a} .hold.lease{fill:#4f8fe6} .hold.lostend{stroke:#d00;stroke-width:1}
.suspended{fill:#f09a00} .fault{fill:#8e44ad} .isolated{fill:#c0392b} .slow{fill:#e67e22} .deleted{fill:#8e44ad} .lost{fill:#d00} .sessionlost{fill:#600} .cachestale{fill:#6c757d} .put{fill:#2a9d8f} .take{fill:#264653}
line.violation{stroke:#ff0033;stroke-width:2;stroke-dasharray:4 2} line.excused{stroke:#f09a00;stroke-width:1;stroke-dasharray:2 3}
.legend span{display:inline-block;width:12px;height:10px;margin:0 4px 0 12px;vertical-align:middle}
</style></head><body>
<h1>Chaos run: seed ${m.seed}, ${m.seconds} s of faults, ${m.clients.length} clients, session timeout ${m.sessionTimeoutMs} ms</h1>
<p id="verdict"><b class="${r.violations.length === 0 ? 'ok' : 'bad'}">${verdict}</b> ${count(r.excused.length, 'excused overlap')} (shown, not violations); ${count(r.stats.faults, 'fault')} injected during the ${((end - t0) / 1000).toFixed(1)} s run, on a ${m.members.length}-member ensemble.
Fenced resource: ${count(r.stats.resource.accepted, 'write')} accepted, ${r.stats.resource.rejected} rejected for a stale fencing token (fencing at work, not a violation). Times are seconds from the run's start, as on the timeline; fencing tokens are hex.</p>
${r.violations.length > 0 ? `<h2>Violations</h2><div id="violations">${list(r.violations)}</div>` : ''}
${r.excused.length > 0 ? `<h2>Excused overlaps</h2><div id="excused">${list(r.excused)}</div>` : ''}
<h2>Locks, leases and leadership</h2>
${table('workloads', ['workload', 'recipe', 'clients', 'grants', 'told lost', 'closest loss to next grant', 'counter increments', 'fenced writes'], workloadRows(history, r)) || '<p>None in this run.</p>'}
${queueRows(history, r).length > 0 ? `<h2>Queues</h2>${table('queues', ['workload', 'delivery', 'puts acknowledged', 'taken', 'handled', 'left in the queue'], queueRows(history, r))}` : ''}
${cacheRows(history, r).length > 0 ? `<h2>Caches</h2><p>${Object.entries(r.stats.cache).map(([w, c]) => `${esc(w)}: ${count(c.writes, 'acknowledged write')}, ${c.unknownWrites} of unknown outcome.`).join(' ')}</p>${table('caches', ['cache', 'kind', 'watch mode', 'node events', 'went stale', 're-read', 'at the end'], cacheRows(history, r))}` : ''}
<h2>Faults</h2>
${faults.length > 0 ? table('faults', ['#', 'fault', 'target', 'from', 'to', 'lasted', 'details'], faults) : '<p>No fault was injected.</p>'}
<h2>Timeline</h2>
<div class="legend">members: <span class="up" style="background:#cfe8cf"></span>up <span style="background:#e0b100"></span>leader <span style="background:#c0392b"></span>cut off from the others <span style="background:#e67e22"></span>links slowed;
clients: <span style="background:#cfcfcf"></span>waiting <span style="background:#2f6fd6"></span>holding (exclusive/lease) <span style="background:#7fb0f0"></span>read <span style="background:#173f8a"></span>write
<span style="background:#d00"></span>told lost <span style="background:#f09a00"></span>SUSPENDED <span style="background:#600"></span>session LOST <span style="background:#6c757d"></span>a cache STALE (thin) <span style="background:#8e44ad"></span>fault (a tick: its waiting node deleted) <span style="background:#2a9d8f"></span>put <span style="background:#264653"></span>taken/handled;
<span style="background:#ff0033"></span>violation <span style="background:#f09a00"></span>excused overlap (dashed). Hover a bar for its details; the faults are also listed above.</div>
<div class="scroll"><svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${svg.join('')}</svg></div>
</body></html>
`;
}
