// npm run demo [-- --connect HOST:PORT]
// Starts a local ZooKeeper (unless --connect or ZK_CONNECT names one), runs four worker
// processes through a scene of each recipe, prints what happens as a timeline, then stops
// everything it started. Ctrl-C at any point leaves nothing running.
// Java is looked for (and, as root on Debian, installed) only to start that local server:
// with --connect or ZK_CONNECT nothing Java is needed or touched.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TestingServer } from '../src/testing/index.js';
import type { Command, Report } from './protocol.js';

const { values } = parseArgs({ options: { connect: { type: 'string' } } });
const start = performance.now();
const color = process.stdout.isTTY ? (code: number, s: string) => `\x1b[${code}m${s}\x1b[0m` : (_: number, s: string) => s;
const stamp = (): string => color(90, `[${((performance.now() - start) / 1000).toFixed(2).padStart(6)}s]`);
const note = (text: string): void => console.log(`${stamp()} ${color(1, text)}`);

interface Worker {
  name: string;
  child: ChildProcess;
  alive: boolean;
}

let server: TestingServer | undefined;
const workers: Worker[] = [];

async function shutdown(code: number): Promise<never> {
  for (const w of workers) if (w.alive) w.child.kill('SIGKILL');
  await server?.close();
  process.exit(code);
}
process.on('SIGINT', () => {
  console.log('\ninterrupted: stopping the workers and ZooKeeper');
  void shutdown(130);
});

function waitFor(worker: Worker, kind: Report['kind']): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (r: Report): void => {
      if (r.kind !== kind) return;
      worker.child.off('message', onMessage);
      worker.child.off('exit', onExit);
      resolve();
    };
    const onExit = (): void => resolve();
    worker.child.on('message', onMessage);
    worker.child.once('exit', onExit);
  });
}

// What a local server needs (java and the ZooKeeper jars): installed as root on Debian, else
// explained. From build/demo/index.js up to the repository's scripts/.
function ensureZooKeeper(): void {
  const script = fileURLToPath(new URL('../../scripts/ensure-zookeeper.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--server'], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('demo: no local ZooKeeper can be started here; or run it against a server you have: npm run demo -- --connect HOST:PORT');
    process.exit(1);
  }
}

async function scene(title: string, explain: string, command: (w: Worker) => Command): Promise<void> {
  console.log(`\n${color(36, `== ${title} ==`)} ${explain}`);
  const alive = workers.filter((w) => w.alive);
  const done = alive.map((w) => waitFor(w, 'done'));
  for (const w of alive) w.child.send(command(w));
  await Promise.all(done);
}

try {
  let connectString = values.connect ?? process.env.ZK_CONNECT;
  if (!connectString) {
    ensureZooKeeper();
    note('starting a local ZooKeeper server (no --connect given)...');
    server = await TestingServer.start();
    connectString = server.connectString;
  }
  note(`ZooKeeper at ${connectString}`);
  const base = `/zk-recipes-demo/${randomBytes(3).toString('hex')}`;
  const script = fileURLToPath(new URL('./worker.js', import.meta.url));
  for (let i = 1; i <= 4; i++) {
    const name = `worker-${i}`;
    const child = fork(script, [connectString, name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const w: Worker = { name, child, alive: true };
    child.on('exit', () => (w.alive = false));
    child.on('message', (r: Report) => {
      if (r.kind === 'event') console.log(`${stamp()} ${color(33, name.padEnd(9))} ${r.text}`);
    });
    workers.push(w);
  }
  await Promise.all(workers.map((w) => waitFor(w, 'ready')));
  note(`4 worker processes connected, each with its own ZooKeeper session; recipes under ${base}`);

  await scene('Mutex', 'one holder at a time, granted in queue order; fencing tokens only grow', () => ({ scene: 'mutex', base }));
  await scene('Semaphore', 'maxLeases 2: never more than two holders', () => ({ scene: 'semaphore', base }));
  await scene('Read-write lock', 'readers share, the writer (worker-1) is alone', () => ({ scene: 'rwlock', base }));

  console.log(`\n${color(36, '== Leader election ==')} one leader; kill it and another takes over`);
  let leader: Worker | undefined;
  const elected = (): Promise<Worker> =>
    new Promise((resolve) => {
      for (const w of workers.filter((x) => x.alive && x !== leader)) {
        const onMessage = (r: Report): void => {
          if (r.kind !== 'event' || !r.leader) return;
          for (const x of workers) x.child.removeAllListeners('leader-watch');
          w.child.off('message', onMessage);
          resolve(w);
        };
        w.child.on('message', onMessage);
      }
    });
  const first = elected();
  for (const w of workers) w.child.send({ scene: 'leader', base } satisfies Command);
  leader = await first;
  const killedAt = performance.now();
  const next = elected();
  note(`killing the leader, ${leader.name}, with SIGKILL: its session expires after its 2 s timeout`);
  leader.child.kill('SIGKILL');
  const successor = await next;
  note(`${successor.name} took over ${((performance.now() - killedAt) / 1000).toFixed(2)} s after the kill`);
  const leaderDone = workers.filter((w) => w.alive).map((w) => waitFor(w, 'done'));
  for (const w of workers.filter((x) => x.alive)) w.child.send({ scene: 'endLeader' } satisfies Command);
  await Promise.all(leaderDone);

  const producer = workers.find((w) => w.alive);
  await scene('Queue', `${producer?.name} puts 9 jobs (the last one urgent); the others take them, each once`, (w) => ({
    scene: 'queue',
    base,
    producer: w === producer,
  }));

  console.log('');
  note(server ? 'stopping the workers and ZooKeeper' : 'stopping the workers');
  await Promise.all(
    workers
      .filter((w) => w.alive)
      .map((w) => {
        const exited = new Promise((r) => w.child.once('exit', r));
        w.child.send({ scene: 'stop' } satisfies Command);
        return exited;
      }),
  );
  await server?.close();
  note('done: nothing left running');
  console.log(`
What next:
  - the recipe you need, and its guarantees: README.md ("Which recipe?") and docs/recipes/
  - examples you can run: npm run build:test && node build/examples/mutex.js HOST:PORT
  - sessions, connection states and fencing tokens: docs/sessions.md
  - testing your own code against real ZooKeeper: docs/testing.md (zk-recipes/testing)
  - this demo against your own server: npm run demo -- --connect HOST:PORT`);
} catch (err) {
  console.error('demo failed:', err);
  await shutdown(1);
}
