// A demo worker process: one ZooKeeper session, and a scene of each recipe on command.
// It exits when told to, or as soon as its conductor goes away (IPC channel closed). What
// fails is reported to the conductor in one line, never as a stack trace of its own.
import { DistributedQueue, LeaderLatch, Mutex, ReadWriteLock, Semaphore, ZkSession } from '../src/index.js';
import type { Command, Report } from './protocol.js';

const [connectString = '', name = 'worker', timeout = '5000'] = process.argv.slice(2);
// Nothing is sent once the conductor is gone (a send then would throw ERR_IPC_CHANNEL_CLOSED).
const send = (r: Report, then?: () => void): void => {
  if (process.connected) process.send?.(r, undefined, {}, () => then?.());
  else then?.();
};
const say = (text: string, leader = false): void => send({ kind: 'event', text, leader });
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const token = (t: bigint): string => `0x${t.toString(16)}`;
const firstLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!;

process.on('disconnect', () => process.exit(0));
let session: ZkSession;
try {
  session = await ZkSession.connect(connectString, { sessionTimeoutMs: 2000, connectTimeoutMs: Number(timeout) });
} catch (err) {
  send({ kind: 'failed', text: firstLine(err) }, () => process.exit(1));
  await new Promise(() => undefined); // exits once the report is sent
  throw err; // not reached: tells TypeScript that session is set below
}
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

async function queuePut(base: string): Promise<void> {
  const queue = new DistributedQueue(session, `${base}/queue`, { participantId: name });
  for (let i = 1; i <= 9; i++) {
    const urgent = i === 9;
    await queue.put(`job-${i}`, { priority: urgent ? 1 : 500 });
    say(`queue      put job-${i}${urgent ? ' (priority 1: ahead of the 8 jobs of priority 500 before it, so served first)' : ' (priority 500)'}`);
  }
  await queue.close();
}

async function queueTake(base: string): Promise<void> {
  const queue = new DistributedQueue(session, `${base}/queue`, { participantId: name });
  // Every job is in already: take until the queue is empty (poll answers null then).
  for (let job = await queue.poll({ timeoutMs: 10_000 }); job !== null; job = await queue.poll({ timeoutMs: 10_000 })) {
    say(`queue      took ${job.toString()}`);
    await pause(60);
  }
  await queue.close();
}

const scenes = { mutex: mutexScene, semaphore: semaphoreScene, rwlock: rwlockScene, leader: leaderScene, queuePut, queueTake };
process.on('message', (cmd: Command) => {
  if (cmd.scene === 'stop') {
    void session.close().then(() => process.exit(0));
    return;
  }
  if (cmd.scene === 'endLeader') return; // handled inside the leader scene
  void scenes[cmd.scene](cmd.base).then(
    () => send({ kind: 'done' }),
    (err: unknown) => {
      say(`error: ${firstLine(err)}`);
      send({ kind: 'done' });
    },
  );
});
send({ kind: 'ready' });
