#!/usr/bin/env node
// node scripts/ab-builds.mjs BUILD_A BUILD_B [--connect HOST:PORT] [--workload mutex|raw|failover] [--blocks N] [--size N] [--warm N] [--apart]
// Two builds of the library (each a `build/` directory made by `npm run build:test`, e.g. of a
// git worktree at another commit) loaded in ONE process, each with its own sessions on one
// server, measured in alternating blocks of `--size` cycles, `--blocks` times each (default 40),
// the order of each pair swapped every block, after `--warm` unmeasured cycles of each.
// - mutex, raw: a cycle is an uncontended acquire and release, or a create and delete (blocks
//   of 200, 3 000 warm-up cycles). Prints each build's median wall and user CPU per cycle.
// - failover: five sessions in a LeaderLatch election; a cycle is the leader's close() until the
//   next one's `elected`; the old one rejoins then, and the next close() waits until it has
//   entered, as in bench's leader_failover loop (blocks of 20,
//   100 warm-up failovers: a failover path is seldom warm). Prints each build's median
//   failover time (the median of each block's median) and user CPU per failover.
// --apart: every session as if in a process of its own, as bench's --apart (each spells the
// connect string its own way: no handoff is known in memory, every failover lists).
// Then in how many paired blocks B used less CPU, and took less time, than A. On a VM whose
// speed drifts from minute to minute this sees a change of a few µs per cycle, which separate
// runs cannot. Without --connect it starts the bench's server (bench/server.ts).
import { resolve } from 'node:path';
import { parseArgsOrExit } from '../build/bench/args.js';
import { apartSpelling } from '../build/bench/context.js';
import { startBenchServer } from '../build/bench/server.js';

const WORKLOADS = { mutex: { size: 200, warm: 3000 }, raw: { size: 200, warm: 3000 }, failover: { size: 20, warm: 100 } };
const USAGE = 'usage: node scripts/ab-builds.mjs BUILD_A BUILD_B [--connect HOST:PORT] [--workload mutex|raw|failover] [--blocks N>=2] [--size N>=1] [--warm N>=0] [--apart]';
const { values, positionals } = parseArgsOrExit(
  'ab-builds',
  { allowPositionals: true, options: { connect: { type: 'string' }, workload: { type: 'string', default: 'mutex' }, blocks: { type: 'string', default: '40' }, size: { type: 'string' }, warm: { type: 'string' }, apart: { type: 'boolean', default: false } } },
  USAGE,
);
const defaults = WORKLOADS[values.workload];
const blocks = Number(values.blocks);
const size = Number(values.size ?? defaults?.size);
const warm = Number(values.warm ?? defaults?.warm);
if (positionals.length !== 2 || !defaults || !(blocks >= 2) || !(size >= 1) || !(Number.isInteger(warm) && warm >= 0)) {
  console.error(USAGE);
  process.exit(2);
}
const server = values.connect ? undefined : await startBenchServer();
const connect = values.connect ?? server.connectString;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** One build's sessions and its cycle; `cycle()` resolves to its latency in ms (failover) or undefined. */
async function side(i, dir) {
  const { ZkSession, Mutex, LeaderLatch } = await import(resolve(dir, 'src', 'index.js'));
  const root = `/ab-builds-${process.pid}-${i}`;
  const spell = (k) => (values.apart ? apartSpelling(connect, k) : connect);
  const sessions = await Promise.all(Array.from({ length: values.workload === 'failover' ? 5 : 1 }, (_, k) => ZkSession.connect(spell(k), { sessionTimeoutMs: 20_000 })));
  const [session] = sessions;
  await session.mkdirp(root);
  const base = { label: `${i === 0 ? 'A' : 'B'} ${dir}`, sessions, root, wall: [], cpu: [], close: async () => undefined };
  if (values.workload === 'mutex') {
    const mutex = new Mutex(session, `${root}/lock`);
    return { ...base, cycle: async () => (await mutex.acquire()).release(), close: () => mutex.close() };
  }
  if (values.workload === 'raw') return { ...base, cycle: async () => session.delete(await session.create(`${root}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL' })) };
  let onElected;
  let entered = Promise.resolve();
  const join = (k) => {
    const latch = new LeaderLatch(sessions[k], `${root}/election`, { participantId: `p${k}` });
    latch.on('elected', () => onElected?.());
    entered = latch.start().catch(() => undefined);
    return latch;
  };
  const latches = sessions.map((_, k) => join(k));
  await Promise.race(latches.map((l) => l.awaitLeadership()));
  // As in bench's loop: the old leader rejoins once the next one is told, and the next step-down
  // waits until it has entered (its node created).
  const cycle = async () => {
    await entered;
    const k = latches.findIndex((l) => l.hasLeadership);
    const next = new Promise((r) => (onElected = r));
    const t = performance.now();
    const closing = latches[k].close();
    closing.catch(() => undefined); // handled while we wait; a failure still throws below
    await next;
    const ms = performance.now() - t;
    await closing;
    latches[k] = join(k);
    return ms;
  };
  return { ...base, cycle, close: () => Promise.all(latches.map((l) => l.close())) };
}

const sides = [];
try {
  for (const [i, dir] of positionals.entries()) sides.push(await side(i, dir));
  // Warm both (V8 optimizes each build's code on its own).
  for (const s of sides) for (let i = 0; i < warm; i++) await s.cycle();
  for (let b = 0; b < blocks; b++) {
    for (const s of b % 2 ? [...sides].reverse() : sides) {
      const cpu = process.cpuUsage();
      const t = performance.now();
      const latencies = [];
      for (let i = 0; i < size; i++) latencies.push(await s.cycle());
      // A failover's figure is its latency (the rejoin is outside it); a cycle's, its wall time.
      s.wall.push(values.workload === 'failover' ? median(latencies) * 1000 : ((performance.now() - t) / size) * 1000);
      s.cpu.push(process.cpuUsage(cpu).user / size);
    }
  }
  const what = values.workload === 'failover' ? 'failover: median time' : `${values.workload} wall`;
  for (const s of sides) console.log(`${s.label}: ${what} ${median(s.wall).toFixed(0)} µs/cycle, user CPU ${median(s.cpu).toFixed(0)} µs/cycle (medians of ${blocks} blocks of ${size}, after ${warm} warm-up cycles)`);
  const [a, b] = sides;
  const fewer = a.cpu.filter((c, i) => b.cpu[i] < c).length;
  console.log(`B used less CPU than A in ${fewer} of ${blocks} paired blocks, and took less time in ${a.wall.filter((w, i) => b.wall[i] < w).length}`);
} finally {
  for (const s of sides) {
    await s.close();
    await s.sessions[0].deleteRecursive(s.root).catch(() => undefined); // nothing left on a server of yours
    await Promise.all(s.sessions.map((x) => x.close()));
  }
  await server?.close();
}
