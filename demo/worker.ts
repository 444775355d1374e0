// A demo worker process: one ZooKeeper session, and a scene of each recipe on command.
// It exits when told to, or as soon as its conductor goes away (IPC channel closed).
import { DistributedQueue, LeaderLatch, Mutex, ReadWriteLock, Semaphore, ZkSession } from '../src/index.js';
import type { Command, Report } from './protocol.js';

const [connectString = '', name = 'worker'] = process.argv.slice(2);
const send = (r: Report): void => void process.send?.(r);
const say = (text: string, leader = false): void => send({ kind: 'event', text, leader });
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const token = (t: bigint): string => `0x${t.toString(16)}`;

process.on('disconnect', () => process.exit(0));
const session = await ZkSession.connect(connectString, { sessionTimeoutMs: 2000 });
session.on('state', (s) => say(`session ${s}`));

async function mutexScene(base: string): Promise<void> {
  const mutex = new Mutex(session, `${base}/mutex`, { participantId: name });
  for (let i = 0; i < 2; i++) {
    await using lock = await mutex.acquire({ timeoutMs: 10_000 });
    say(`mutex      acquired   fencing token ${token(lock.fencingToken)}`);
    await pause(120);
    say(`mutex      releasing`);
  }
  await mutex.close();
}

async function semaphoreScene(base: string): Promise<void> {
  const sem = new Semaphore(session, `${base}/semaphore`, { maxLeases: 2, participantId: name });
  await sem.runExclusive(async () => {
    const holders = (await sem.participants()).filter((p) => p.isHolder).map((p) => p.id);
    say(`semaphore  lease held (maxLeases 2; holders now: ${holders.join(', ')})`);
    await pause(250);
  }, { timeoutMs: 10_000 });
  await sem.close();
}

async function rwlockScene(base: string): Promise<void> {
  const rw = new ReadWriteLock(session, `${base}/rwlock`, { participantId: name });
  const writer = name.endsWith('1');
  const side = writer ? rw.writeLock() : rw.readLock();
  await side.runExclusive(async (_signal, h) => {
    say(`rwlock     ${writer ? 'WRITE lock held (alone)' : 'read lock held (shared)'}  token ${token(h.fencingToken)}`);
    await pause(200);
  }, { timeoutMs: 10_000 });
  await rw.close();
}

async function leaderScene(base: string): Promise<void> {
  const latch = new LeaderLatch(session, `${base}/leader`, { participantId: name });
  latch.on('elected', () => say('leader     ELECTED: I am the leader now', true));
  latch.on('revoked', (r) => say(`leader     leadership revoked (${r.message})`));
  latch.start();
  // Stays in the election until told to stop (or killed by the conductor).
  await new Promise<void>((resolve) => {
    const onMessage = (cmd: Command): void => {
      if (cmd.scene !== 'endLeader') return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
  await latch.close();
}

async function queueScene(base: string, producer: boolean): Promise<void> {
  const queue = new DistributedQueue(session, `${base}/queue`, { participantId: name });
  if (producer) {
    for (let i = 1; i <= 9; i++) {
      await queue.put(`job-${i}`, { priority: i === 9 ? 1 : 500 });
      say(`queue      put job-${i}${i === 9 ? ' (priority 1: served first)' : ''}`);
    }
    return;
  }
  for (;;) {
    let job: Buffer;
    try {
      job = await queue.take({ timeoutMs: 1500 });
    } catch {
      break; // nothing more to do
    }
    say(`queue      took ${job.toString()}`);
    await pause(60);
  }
  await queue.close();
}

process.on('message', (cmd: Command) => {
  if (cmd.scene === 'stop') {
    void session.close().then(() => process.exit(0));
    return;
  }
  if (cmd.scene === 'endLeader') return; // handled inside the leader scene
  const scene =
    cmd.scene === 'queue'
      ? queueScene(cmd.base, cmd.producer)
      : { mutex: mutexScene, semaphore: semaphoreScene, rwlock: rwlockScene, leader: leaderScene }[cmd.scene](cmd.base);
  void scene.then(
    () => send({ kind: 'done' }),
    (err: unknown) => {
      say(`error: ${String(err)}`);
      send({ kind: 'done' });
    },
  );
});
send({ kind: 'ready' });
