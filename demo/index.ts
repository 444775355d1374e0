// npm run demo [-- --connect HOST:PORT] [-- --help]
// Starts a local ZooKeeper (unless --connect or ZK_CONNECT names one), runs four worker
// processes through a scene of each recipe, prints what happens as a timeline, then stops
// everything it started. Ctrl-C at any point leaves nothing running.
// Java is looked for (and, as root on Debian, installed) only to start that local server:
// with --connect or ZK_CONNECT nothing Java is needed or touched.
// Fails as a command line tool does: one line on stderr saying what went wrong and what to do,
// no stack trace; exit code 2 for a usage error, 1 for anything else.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { InvalidArgumentError, ZkSession } from '../src/index.js';
import { TestingServer } from '../src/testing/index.js';
import type { Command, Report } from './protocol.js';

const USAGE = `usage: npm run demo [-- OPTIONS]   (or: node build/demo/index.js [OPTIONS])

Runs four worker processes, each with its own ZooKeeper session, through a scene of each
recipe: mutex, semaphore, read-write lock, leader election, queue.

options:
  --connect HOST:PORT[,HOST:PORT...]  use this ZooKeeper (also: the ZK_CONNECT variable);
                                      without it the demo starts a local server of its own,
                                      which needs Java and ZooKeeper's jars
  --connect-timeout SECONDS           how long to wait for that server to answer (default 5)
  -h, --help                          print this and exit`;

/** Says what went wrong and what to do, on one line, and exits: 2 for a usage error, else 1. */
function fail(message: string, code = 1, usage = false): never {
  process.stderr.write(`demo: ${message}\n${usage ? `\n${USAGE}\n` : ''}`);
  process.exit(code);
}

function parse(): { connect: string | undefined; connectTimeoutMs: number; help: boolean } {
  let values: { connect?: string | undefined; 'connect-timeout'?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      options: { connect: { type: 'string' }, 'connect-timeout': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: false,
    }));
  } catch (err) {
    // parseArgs's messages are long and name its own internals: say it in our words.
    const e = err as { code?: string; message?: string };
    const quoted = /'([^']+)'/.exec(e.message ?? '')?.[1] ?? '';
    const why =
      e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? `unknown option ${quoted}`
        : e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
          ? `${quoted.split(' ')[0] || 'an option'} needs a value`
          : e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
            ? `unexpected argument ${quoted} (${/:\d+$/.test(quoted) ? `did you mean --connect ${quoted}?` : 'the demo takes options only'})`
            : (e.message ?? String(err)).split('. ')[0]!;
    fail(why, 2, true);
  }
  const seconds = values['connect-timeout'] === undefined ? 5 : Number(values['connect-timeout']);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) fail(`--connect-timeout takes a number of seconds, more than 0 and at most 600, got ${JSON.stringify(values['connect-timeout'])}`, 2, true);
  return { connect: values.connect, connectTimeoutMs: Math.round(seconds * 1000), help: values.help === true };
}

const args = parse();
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const start = performance.now();
const color = process.stdout.isTTY ? (code: number, s: string) => `\x1b[${code}m${s}\x1b[0m` : (_: number, s: string) => s;
const stamp = (): string => color(90, `[${((performance.now() - start) / 1000).toFixed(2).padStart(6)}s]`);
const note = (text: string): void => console.log(`${stamp()} ${color(1, text)}`);

interface Worker {
  name: string;
  child: ChildProcess;
  alive: boolean;
  /** Killed by the conductor on purpose (the leader scene): its exit is no failure. */
  killed: boolean;
}

/** A failure to report as one line (what went wrong, what to do), not as a stack trace. */
class DemoError extends Error {}

let server: TestingServer | undefined;
const workers: Worker[] = [];

async function shutdown(code: number): Promise<never> {
  for (const w of workers) if (w.alive) w.child.kill('SIGKILL');
  await server?.close().catch(() => undefined);
  process.exit(code);
}
process.on('SIGINT', () => {
  console.log('\ninterrupted: stopping the workers and ZooKeeper');
  void shutdown(130);
});

/** Sends a command to a worker that can still hear it (a send to an exited one would throw). */
function tell(w: Worker, cmd: Command): void {
  if (w.alive && w.child.connected) w.child.send(cmd);
}

/** Resolves on the worker's report of `kind`; rejects if it fails or exits first (unless killed on purpose). */
function waitFor(worker: Worker, kind: Report['kind'], during: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: Error): void => {
      worker.child.off('message', onMessage);
      worker.child.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    const onMessage = (r: Report): void => {
      if (r.kind === 'failed') settle(new DemoError(`${worker.name} ${r.text}`));
      else if (r.kind === kind) settle();
    };
    const onExit = (code: number | null, signal: string | null): void =>
      worker.killed ? settle() : settle(new DemoError(`${worker.name} exited (${signal ?? `code ${code}`}) ${during}`));
    if (!worker.alive) return onExit(worker.child.exitCode, worker.child.signalCode);
    worker.child.on('message', onMessage);
    worker.child.once('exit', onExit);
  });
}

// What a local server needs (java and the ZooKeeper jars): installed as root on Debian, else
// explained. From build/demo/index.js up to the repository's scripts/.
function ensureZooKeeper(): void {
  const script = fileURLToPath(new URL('../../scripts/ensure-zookeeper.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--server'], { stdio: 'inherit' });
  if (r.status !== 0) fail('no local ZooKeeper can be started here; or run it against a server you have: npm run demo -- --connect HOST:PORT');
}

/** Checks that a server answers before any worker starts: one session, closed again. */
async function probe(connectString: string, from: string): Promise<void> {
  const seconds = args.connectTimeoutMs / 1000;
  try {
    const session = await ZkSession.connect(connectString, { connectTimeoutMs: args.connectTimeoutMs });
    await session.close();
  } catch (err) {
    if (err instanceof InvalidArgumentError) fail(`${from} ${JSON.stringify(connectString)} is not a connect string: ${err.message}`, 2);
    fail(
      `no ZooKeeper answered at ${connectString} (${from}) within ${seconds} s. Start one there, ` +
        `give the right HOST:PORT, or run \`npm run demo\` without --connect to let the demo start its own`,
    );
  }
}

/** The workers still in the play (alive, not killed on purpose). */
const cast = (): Worker[] => workers.filter((w) => w.alive && !w.killed);

/** Sends each of `who` its command and waits until every one of them reports done. */
async function act(during: string, who: Worker[], command: Command): Promise<void> {
  const done = who.map((w) => waitFor(w, 'done', during));
  for (const w of who) tell(w, command);
  await Promise.all(done);
}

async function scene(title: string, explain: string, command: Command): Promise<void> {
  console.log(`\n${color(36, `== ${title} ==`)} ${explain}`);
  await act(`during the ${title} scene`, cast(), command);
}

/** Resolves with the first of `who` to report being elected. */
function elected(who: Worker[]): Promise<Worker> {
  return new Promise((resolve) => {
    const listeners = who.map((w) => {
      const onMessage = (r: Report): void => {
        if (r.kind !== 'event' || !r.leader) return;
        for (const [x, l] of listeners) x.child.off('message', l);
        resolve(w);
      };
      w.child.on('message', onMessage);
      return [w, onMessage] as const;
    });
  });
}

try {
  let connectString = args.connect ?? process.env.ZK_CONNECT;
  if (connectString !== undefined) {
    await probe(connectString, args.connect !== undefined ? '--connect' : 'ZK_CONNECT');
  } else {
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
    const child = fork(script, [connectString, name, String(args.connectTimeoutMs)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const w: Worker = { name, child, alive: true, killed: false };
    child.on('exit', () => (w.alive = false));
    child.on('error', () => undefined); // a send racing the worker's exit: its exit is what counts
    child.on('message', (r: Report) => {
      if (r.kind === 'event') console.log(`${stamp()} ${color(33, name.padEnd(9))} ${r.text}`);
    });
    workers.push(w);
  }
  await Promise.all(workers.map((w) => waitFor(w, 'ready', 'while connecting')));
  note(`4 worker processes connected, each with its own ZooKeeper session; recipes under ${base}`);

  await scene('Mutex', 'one holder at a time, granted in queue order; fencing tokens only grow', { scene: 'mutex', base });
  await scene('Semaphore', 'maxLeases 2: never more than two holders', { scene: 'semaphore', base });
  await scene('Read-write lock', 'readers share, the writer (worker-1) is alone', { scene: 'rwlock', base });

  console.log(`\n${color(36, '== Leader election ==')} one leader; kill it and another takes over`);
  const first = elected(cast());
  for (const w of cast()) tell(w, { scene: 'leader', base });
  const leader = await first;
  const killedAt = performance.now();
  const next = elected(cast().filter((w) => w !== leader));
  note(`killing the leader, ${leader.name}, with SIGKILL: its session expires after its 2 s timeout`);
  leader.killed = true;
  leader.child.kill('SIGKILL');
  const successor = await next;
  note(`${successor.name} took over ${((performance.now() - killedAt) / 1000).toFixed(2)} s after the kill`);
  await act('at the end of the leader scene', cast(), { scene: 'endLeader' });

  // Every job is put before anyone takes, so the order they are served in is the queue's
  // (priority first, then FIFO), not a race between the producer and the consumers.
  const [producer, ...consumers] = cast();
  if (!producer) throw new DemoError('no worker is left for the queue scene');
  console.log(`\n${color(36, '== Queue ==')} ${producer.name} puts 9 jobs, the last one urgent (priority 1); then the others take them, each once, the urgent one first`);
  await act('while putting jobs', [producer], { scene: 'queuePut', base });
  await act('while taking jobs', consumers, { scene: 'queueTake', base });

  console.log('');
  note(server ? 'stopping the workers and ZooKeeper' : 'stopping the workers');
  await Promise.all(
    workers
      .filter((w) => w.alive)
      .map((w) => {
        const exited = new Promise((r) => w.child.once('exit', r));
        tell(w, { scene: 'stop' });
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
  // A DemoError says it all; anything else is a bug of the demo's: its message, still one line.
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  process.stderr.write(`demo: ${err instanceof DemoError ? message : `failed: ${message}`}\n`);
  await shutdown(1);
}
