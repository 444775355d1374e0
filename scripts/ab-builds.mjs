#!/usr/bin/env node
// node scripts/ab-builds.mjs BUILD_A BUILD_B [--connect HOST:PORT] [--workload mutex|raw] [--blocks N] [--size N]
// Two builds of the library (each a `build/` directory made by `npm run build:test`, e.g. of a
// git worktree at another commit) loaded in ONE process, each with its own session on one
// server, measured in alternating blocks of `--size` cycles (default 200), `--blocks` times
// each (default 40), the order of each pair swapped every block. Prints each build's median
// wall and user CPU per cycle, and in how many paired blocks B used less CPU than A. On a VM
// whose speed drifts from minute to minute this sees a change of a few µs per cycle, which
// separate runs cannot. Without --connect it starts the bench's server (bench/server.ts).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchServer } from '../build/bench/server.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { connect: { type: 'string' }, workload: { type: 'string', default: 'mutex' }, blocks: { type: 'string', default: '40' }, size: { type: 'string', default: '200' } },
});
const blocks = Number(values.blocks);
const size = Number(values.size);
if (positionals.length !== 2 || !['mutex', 'raw'].includes(values.workload) || !(blocks >= 2) || !(size >= 1)) {
  console.error('usage: node scripts/ab-builds.mjs BUILD_A BUILD_B [--connect HOST:PORT] [--workload mutex|raw] [--blocks N>=2] [--size N>=1]');
  process.exit(2);
}
const server = values.connect ? undefined : await startBenchServer();
const connect = values.connect ?? server.connectString;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const sides = [];
try {
  for (const [i, dir] of positionals.entries()) {
    const { ZkSession, Mutex } = await import(resolve(dir, 'src', 'index.js'));
    const session = await ZkSession.connect(connect, { sessionTimeoutMs: 20_000 });
    const root = `/ab-builds-${process.pid}-${i}`;
    await session.mkdirp(root);
    const mutex = new Mutex(session, `${root}/lock`);
    const cycle =
      values.workload === 'mutex'
        ? async () => (await mutex.acquire()).release()
        : async () => session.delete(await session.create(`${root}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL' }));
    sides.push({ label: i === 0 ? `A ${dir}` : `B ${dir}`, session, root, mutex, cycle, wall: [], cpu: [] });
  }
  // Warm both (V8 optimizes each build's code on its own).
  for (const side of sides) for (let i = 0; i < 3000; i++) await side.cycle();
  for (let b = 0; b < blocks; b++) {
    for (const side of b % 2 ? [...sides].reverse() : sides) {
      const cpu = process.cpuUsage();
      const t = performance.now();
      for (let i = 0; i < size; i++) await side.cycle();
      side.wall.push(((performance.now() - t) / size) * 1000);
      side.cpu.push(process.cpuUsage(cpu).user / size);
    }
  }
  for (const side of sides) console.log(`${side.label}: ${values.workload} wall ${median(side.wall).toFixed(0)} µs/cycle, user CPU ${median(side.cpu).toFixed(0)} µs/cycle (medians of ${blocks} blocks of ${size})`);
  const [a, b] = sides;
  const fewer = a.cpu.filter((c, i) => b.cpu[i] < c).length;
  console.log(`B used less CPU than A in ${fewer} of ${blocks} paired blocks, and took less time in ${a.wall.filter((w, i) => b.wall[i] < w).length}`);
} finally {
  for (const side of sides) {
    await side.mutex.close();
    await side.session.deleteRecursive(side.root).catch(() => undefined); // nothing left on a server of yours
    await side.session.close();
  }
  await server?.close();
}
