// Run by channels.test.ts in a process of its own: subscribes a listener that throws to the
// mutex acquisition channel, acquires and releases, and prints what happened as JSON.
import dc from 'node:diagnostics_channel';
import { CHANNELS, Mutex, TRACING_CHANNELS, ZkSession } from '../../src/index.js';

const uncaught: string[] = [];
process.on('uncaughtException', (err) => void uncaught.push(err.message));
const bug = (): never => {
  throw new Error('subscriber bug');
};
dc.subscribe(`tracing:${TRACING_CHANNELS.mutexAcquire}:start`, bug);
dc.subscribe(`tracing:${TRACING_CHANNELS.mutexAcquire}:asyncEnd`, bug);
dc.subscribe(CHANNELS.lockReleased, bug);

const session = await ZkSession.connect(process.env.ZK_CONNECT as string);
const mutex = new Mutex(session, process.env.LOCK_PATH as string);
const handle = await mutex.acquire({ timeoutMs: 10_000 });
const acquired = handle.isHeld;
await handle.release();
const released = !handle.isHeld;
await mutex.close();
await session.close();
// Let the reports queued on process.nextTick run.
await new Promise((resolve) => setImmediate(resolve));
console.log(JSON.stringify({ acquired, released, uncaught }));
