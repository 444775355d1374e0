#!/usr/bin/env node
// node scripts/failover-timeline.mjs [--connect HOST:PORT] [--warm N] [--failovers N] [--only ours,apart,curator] [--placed]   (after npm run build:test)
// Where a leader failover's time goes, step by step, in zk-recipes (one process, and --apart:
// every session as if in a process of its own) and in Curator (bench/anchors/CuratorFailoverTimeline.java),
// on one server: bench's leader_failover loop (five participants, settled rounds), `--warm`
// unmeasured failovers (default 4 000, as bench:compare warms: after 800 the JIT still makes the
// tail), then `--failovers` measured (default 600). Prints each step's µs from close(), p50 and
// p90, and for the failovers over 2 ms how many there were, the p99, and each step's p50 gap:
// - deletion: ours when its frame is written to the socket; Curator's when it is handed to
//   ZooKeeper's client (its I/O thread writes it then);
// - notified: the next leader's notification, ours as it is read from the socket, Curator's
//   when the watcher runs on ZooKeeper's event thread;
// - relist: the next leader's listing, ours written, Curator's handed over (none when ours
//   grants without one: a handoff known in this process);
// - relisted: its reply, ours read, Curator's callback;
// - elected: `elected` emitted, Curator's isLeader().
// Marks in ours hook the session's socket (internals, for this diagnostic only). Without
// --connect it starts the bench's server (bench/server.ts). --placed: each round also waits
// until the rejoined participant is placed (its watch-setting reads answered), not only entered
// (its node created) as bench does: what the rejoin's last steps cost the next failover.
import { spawnSync } from 'node:child_process';
import { parseArgsOrExit } from '../build/bench/args.js';
import { apartSpelling } from '../build/bench/context.js';
import { percentile } from '../build/bench/metrics.js';
import { startBenchServer } from '../build/bench/server.js';
import { curatorHarness } from './bench-harnesses.mjs';

const USAGE = 'usage: node scripts/failover-timeline.mjs [--connect HOST:PORT] [--warm N] [--failovers N] [--only ours,apart,curator] [--placed]';
const { values } = parseArgsOrExit('failover-timeline', { options: { connect: { type: 'string' }, warm: { type: 'string', default: '4000' }, failovers: { type: 'string', default: '600' }, only: { type: 'string', default: 'ours,apart,curator' }, placed: { type: 'boolean', default: false } } }, USAGE);
const warm = Number(values.warm);
const failovers = Number(values.failovers);
const only = values.only.split(',');
if (!Number.isInteger(warm) || warm < 0 || !Number.isInteger(failovers) || failovers < 10 || only.some((o) => !['ours', 'apart', 'curator'].includes(o))) {
  console.error(USAGE);
  process.exit(2);
}
const STEPS = ['deletion', 'notified', 'relist', 'relisted', 'elected'];

/** Ours: bench's loop with a mark at each step, µs from close(), one array per step. */
async function ours(connectString, apart) {
  const { ZkSession, LeaderLatch } = await import('../build/src/index.js');
  const sessions = await Promise.all(Array.from({ length: 5 }, (_, k) => ZkSession.connect(apart ? apartSpelling(connectString, k) : connectString, { sessionTimeoutMs: 10000 })));
  const path = `/failover-timeline/${process.hrtime.bigint().toString(16)}/election`;
  let m; // the failover being measured: { t0, leader, winner, marks }
  const mark = (step) => {
    if (m && m.marks[step] === undefined) m.marks[step] = Math.round((performance.now() - m.t0) * 10000) / 10;
  };
  const replies = sessions.map(() => 0); // replies read per session (for --placed)
  sessions.forEach((s, i) => {
    const sock = s.gen.raw.connectionManager.socket;
    const emit = sock.emit;
    sock.emit = function (event, ...a) {
      if (event === 'data' && a[0].length >= 8 && a[0].readInt32BE(4) !== -1) replies[i]++;
      if (event === 'data' && m && a[0].length >= 8) {
        const xid = a[0].readInt32BE(4);
        if (xid === -1 && i !== m.leader && m.winner === undefined) {
          m.winner = i;
          mark('notified');
        } else if (xid !== -1 && i === m.winner && m.marks.relist !== undefined) mark('relisted');
      }
      return emit.call(this, event, ...a);
    };
    for (const name of ['_write', '_writev']) {
      const write = sock[name];
      sock[name] = function (...a) {
        if (m && i === m.leader) mark('deletion');
        else if (m && i === m.winner) mark('relist');
        return write.apply(this, a);
      };
    }
  });
  let onElected;
  let entered;
  const join = (i) => {
    const latch = new LeaderLatch(sessions[i], path, { participantId: `p${i}` });
    latch.on('elected', () => {
      mark('elected');
      onElected?.();
    });
    entered = latch.start();
    return latch;
  };
  const latches = sessions.map((_, i) => join(i));
  await Promise.race(latches.map((l) => l.awaitLeadership()));
  const rows = [];
  let rejoined;
  for (let r = 0; r < warm + failovers; r++) {
    await entered;
    // Placed: the rejoin's watch-setting reads (sent after the listing that came with its create) answered.
    if (values.placed && rejoined) {
      const deadline = performance.now() + 30_000;
      while (replies[rejoined.i] < rejoined.replies + 2 || sessions[rejoined.i].gen.raw.connectionManager.pendingQueue.length > 0) {
        if (performance.now() > deadline) throw new Error('a rejoined participant was not placed within 30 s');
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const i = latches.findIndex((l) => l.hasLeadership);
    const next = new Promise((resolve) => (onElected = resolve));
    if (r >= warm) m = { t0: performance.now(), leader: i, winner: undefined, marks: {} };
    await latches[i].close();
    await next;
    if (m) rows.push(m.marks);
    m = undefined;
    rejoined = { i, replies: replies[i] };
    latches[i] = join(i);
  }
  await entered.catch(() => undefined);
  await Promise.all(latches.map((l) => l.close()));
  await Promise.all(sessions.map((s) => s.close()));
  return Object.fromEntries(STEPS.map((k) => [k, rows.map((row) => row[k] ?? null)]));
}

function curator(connectString) {
  const h = curatorHarness();
  if (!h) return undefined;
  const args = [...h.args.slice(0, -1), 'anchors.CuratorFailoverTimeline', connectString, String(warm), String(failovers), values.placed ? 'placed' : 'entered'];
  const r = spawnSync(h.cmd, args, { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) {
    console.error(`curator: failed (exit ${r.status ?? r.signal}): ${r.stderr}`);
    return undefined;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const server = values.connect ? undefined : await startBenchServer('yes');
const connectString = values.connect ?? server.connectString;
const results = [];
for (const name of only) {
  console.error(`[${name}] ${warm} + ${failovers} failovers...`);
  const r = name === 'curator' ? curator(connectString) : await ours(connectString, name === 'apart');
  if (r) results.push([name === 'ours' ? 'zk-recipes' : name === 'apart' ? 'zk-recipes --apart' : 'Curator', r]);
}
await server?.close();

// A step most failovers lack (ours in one process lists nothing) prints as –.
const quantile = (xs, p) => {
  const seen = xs.filter((x) => x !== null);
  return seen.length < xs.length / 2 ? '–' : String(Math.round(percentile(seen, p)));
};
console.log(`µs from close(), p50 (p90), ${failovers} failovers after ${warm}`);
console.log(`| step | ${results.map(([n]) => n).join(' | ')} |`);
console.log(`| --- | ${results.map(() => '---').join(' | ')} |`);
for (const step of STEPS) console.log(`| ${step} | ${results.map(([, r]) => `${quantile(r[step], 50)} (${quantile(r[step], 90)})`).join(' | ')} |`);
// The slow failovers (elected after 2 ms): each step's gap from the step before, p50 of them.
console.log(`\nfailovers elected after 2 ms: how many, and the p50 of each step's µs after the step before`);
console.log(`| step | ${results.map(([n]) => n).join(' | ')} |`);
console.log(`| --- | ${results.map(() => '---').join(' | ')} |`);
// Each result's slow failovers (their indexes), found once.
const slow = results.map(([, r]) => r.elected.flatMap((e, k) => (e !== null && e > 2000 ? [k] : [])));
console.log(`| count (of all), elected p99 | ${results.map(([, r], i) => `${slow[i].length} (${(100 * slow[i].length / r.elected.length).toFixed(1)} %), ${quantile(r.elected, 99)}`).join(' | ')} |`);
for (const [j, step] of STEPS.entries()) {
  const gap = (r, k) => {
    const at = r[step][k];
    if (at === null) return null;
    const prev = STEPS.slice(0, j).reverse().map((s) => r[s][k]).find((x) => x !== null) ?? 0;
    return at - prev;
  };
  console.log(`| ${step} | ${results.map(([, r], i) => quantile(slow[i].map((k) => gap(r, k)), 50)).join(' | ')} |`);
}
process.exit(0);
