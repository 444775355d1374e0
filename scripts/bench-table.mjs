// The markdown table of scripts/bench-compare.mjs: per workload the median of each impl over the
// rounds with the rounds' spread (ops/s; for the latency lines p50 / p99 ms), the ratio of
// zk-recipes (and of zk-recipes --apart) ÷ the better anchor (for latency the better anchor's
// p50 and p99 ÷ ours: above 1 is ahead everywhere), taken in each round and given as the median
// of the rounds with their spread, requests/op of each, and the correctness figures summed.

const ANCHORS = ['curator', 'kazoo'];
const LABELS = { curator: 'Curator', 'zk-recipes-apart': 'zk-recipes --apart' };
/** Our two modes: one process, and every session as if in a process of its own. */
const OURS = ['zk-recipes', 'zk-recipes-apart'];
/** zk-recipes workloads without a namesake in the anchors, and what they are compared with. */
const ANCHOR_WORKLOAD = { semaphore_curator_v2: 'semaphore' };
const UNITS = { raw_seq: 'pairs/s', raw_pipelined: 'ops/s', raw_pipelined_traced: 'ops/s', mutex_uncontended: 'cycles/s', mutex_uncontended_traced: 'cycles/s', mutex_contended: 'acq/s', semaphore: 'leases/s', semaphore_curator_v2: 'leases/s', rwlock: 'acq/s', leader_failover: 'ms p50 / p99', queue: 'items/s', queue_at_least_once: 'items/s', queue_200k: 'items/s', cache_load: 'nodes/s', cache_latency: 'ms p50 / p99', cache_events: 'events/s', barrier_round_trip: 'rounds/s', multilock_cycle: 'cycles/s', shared_count_notify: 'ms p50 / p99', atomic_increment: 'increments/s', persistent_node_recreate: 'ms p50 / p99', group_join_visible: 'ms p50 / p99', discovery_lookup: 'lookups/s', discovery_register_visible: 'ms p50 / p99' };
/** Workloads whose figure is a latency (p50 / p99 ms; lower is better) rather than a rate. */
const LATENCY = new Set(['leader_failover', 'cache_latency', 'shared_count_notify', 'persistent_node_recreate', 'group_join_visible', 'discovery_register_visible']);

/** The median of `xs` (the mean of the middle two for an even count); undefined for none. */
export function median(xs) {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const fmt = (v, digits = 2) => (v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits));

/** Medians of one impl on one workload; deadlocked runs are counted, not averaged in. */
function summary(lines) {
  const ok = lines.filter((l) => !l.deadlocked);
  return {
    runs: lines.length,
    deadlocked: lines.length - ok.length,
    rates: ok.map((l) => l.ops_per_s),
    p50s: ok.map((l) => l.p50_ms),
    p99: median(ok.map((l) => l.p99_ms)),
    requests: median(ok.map((l) => l.requests_per_op).filter((v) => v !== undefined)),
    faults: lines.reduce((n, l) => n + (l.violations ?? 0) + (l.lost ?? 0) + (l.duplicated ?? 0), 0),
  };
}

/** The median of `xs` and, with more than one, their spread in brackets: a ratio inside it is not a result. */
function withSpread(xs, digits = 2) {
  return `${fmt(median(xs), digits)}${xs.length > 1 ? ` (${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)})` : ''}`;
}

function cell(s, latency) {
  if (!s || s.runs === 0) return '–';
  if (s.deadlocked === s.runs) return `deadlocks (${s.deadlocked}/${s.runs})`;
  const v = latency ? `${withSpread(s.p50s)} / ${fmt(s.p99)}` : withSpread(s.rates, 0);
  return s.deadlocked ? `${v} (deadlocks ${s.deadlocked}/${s.runs})` : v;
}

/**
 * Per round in which `ours` and an anchor both ran `w` (the anchors `aw`): ours ÷ the round's
 * better anchor, as [rate] or, for latency, [p50, p99] (theirs ÷ ours). Deadlocked runs do not count.
 */
function pairedRatios(lines, ours, w, aw, latency) {
  const rounds = [...new Set(lines.map((l) => l.round))];
  const out = [];
  for (const r of rounds) {
    const us = lines.find((l) => l.impl === ours && l.workload === w && l.round === r && !l.deadlocked);
    const them = lines.filter((l) => ANCHORS.includes(l.impl) && l.workload === aw && l.round === r && !l.deadlocked);
    if (!us || them.length === 0) continue;
    if (latency) out.push([Math.min(...them.map((t) => t.p50_ms)) / us.p50_ms, Math.min(...them.map((t) => t.p99_ms)) / us.p99_ms]);
    else out.push([us.ops_per_s / Math.max(...them.map((t) => t.ops_per_s))]);
  }
  return out;
}

/** The table of `lines` (JSON lines of the harnesses) for the impls named in `shown`, in that order. */
export function table(lines, shown) {
  const of = (impl, w) => lines.filter((l) => l.impl === impl && l.workload === w);
  const names = [...new Set([...lines.filter((l) => OURS.includes(l.impl)), ...lines].map((l) => l.workload))];
  const ours = OURS.filter((o) => shown.includes(o));
  const rows = [
    `| workload | ${shown.map((i) => LABELS[i] ?? i).join(' | ')} | ${ours.map((o) => (o === 'zk-recipes' ? 'ratio' : 'ratio --apart')).join(' | ')} | requests/op ${shown.map((i) => LABELS[i] ?? i).join(' / ')} | violations, lost, duplicated |`,
    `| --- |${shown.map(() => ' --- |').join('')}${ours.map(() => ' --- |').join('')} --- | --- |`,
  ];
  for (const w of names) {
    const aw = ANCHOR_WORKLOAD[w] ?? w;
    const s = Object.fromEntries(shown.map((i) => [i, summary(of(i, ANCHORS.includes(i) ? aw : w))]));
    const latency = LATENCY.has(w);
    const anchors = ANCHORS.map((a) => s[a]).filter((x) => x && x.runs > x.deadlocked);
    const ratios = ours.map((o) => {
      const us = s[o];
      if (!us || us.runs === us.deadlocked || anchors.length === 0) return '–';
      // Above 1 is ahead: our rate over the better anchor's; for latency theirs over ours.
      // Paired by round (the figures measured minutes apart), then the median of the rounds' ratios.
      const paired = pairedRatios(lines, o, w, aw, latency);
      const first = withSpread(paired.map((p) => p[0]));
      return latency ? `${first} / ${fmt(median(paired.map((p) => p[1])))}` : first;
    });
    const faults = shown.filter((i) => s[i].faults > 0).map((i) => `${i} ${s[i].faults}`).join(', ') || (shown.some((i) => s[i].runs) ? '0' : '–');
    const label = `${w} (${UNITS[w] ?? 'ops/s'})${aw !== w ? `, anchors: ${aw}` : ''}`;
    rows.push(`| ${label} | ${shown.map((i) => cell(s[i], latency)).join(' | ')} | ${ratios.join(' | ')} | ${shown.map((i) => fmt(s[i].requests)).join(' / ')} | ${faults} |`);
  }
  return rows.join('\n');
}
