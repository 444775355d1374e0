/**
 * A chaos client process: one session through its own proxies, one workload, every event
 * reported to the runner over IPC. It exits when told to, and as soon as its IPC channel closes
 * (the runner died): a client never outlives its runner.
 *
 * @internal
 * @module
 */
import { ZkSession } from '../../client/session.js';
import { HistoryRecorder } from './history.js';
import type { ClientConfig, ClientMessage, RunnerMessage } from './protocol.js';
import { SeededRandom } from './random.js';
import { FencedResourceClient } from './resource.js';
import { errorText } from './workloads/common.js';
import { WORKLOADS } from './workloads/index.js';

const send = (m: ClientMessage): void => {
  if (process.connected) process.send?.(m);
};
process.on('disconnect', () => process.exit(0));
if (!process.send) {
  console.error('the chaos client runs as a child of the chaos runner (IPC channel needed)');
  process.exit(2);
}

const config = JSON.parse(process.argv[2] ?? '{}') as ClientConfig;
const recorder = new HistoryRecorder({ client: config.name, keep: false, onEvent: (event) => send({ msg: 'event', event }) });
const fatal = (err: unknown): void => {
  recorder.record({ type: 'note', level: 'error', message: `client crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}` });
  setTimeout(() => process.exit(1), 100);
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

const sessionIds = new Set<string>();
const hex = (id: bigint): string => `0x${id.toString(16)}`;
/** A session of this client (same connect string for both), its states recorded with its id. */
function open(): ZkSession {
  const s = new ZkSession(config.connectString, { sessionTimeoutMs: config.sessionTimeoutMs, spinDelayMs: 50, connectTimeoutMs: 10_000, ...(config.tls && { tls: config.tls }) });
  s.on('session', (info) => sessionIds.add(hex(info.sessionId)));
  s.on('state', (state) => recorder.record({ type: 'session', state, sessionId: hex(s.sessionId) }));
  s.on('error', () => undefined);
  return s;
}
const session = open();
// With two sessions, flow b runs on the second, opened when the runner says (see fleet.ts).
let second: ZkSession | undefined;

const drain = new AbortController();
const stop = new AbortController();
let running: Promise<void> | undefined;

process.on('message', (m: RunnerMessage) => {
  switch (m.cmd) {
    case 'start':
      running ??= (async () => {
        const resource = await FencedResourceClient.connect(config.resourcePort, config.name);
        try {
          const random = new SeededRandom(config.seed);
          await WORKLOADS[config.workload.kind]({ name: config.name, session, ...(second && { second }), ...(config.role !== undefined && { role: config.role }), ...(config.tlsFiles && { tlsFiles: config.tlsFiles }), spec: config.workload, random, recorder, resource, drain: drain.signal, stop: stop.signal });
        } finally {
          resource.close();
        }
      })().catch((err: unknown) => {
        recorder.record({ type: 'note', level: 'error', message: `workload failed: ${errorText(err)}` });
      });
      break;
    case 'second':
      second ??= open();
      void second.waitConnected({ timeoutMs: 30_000 }).then(
        () => send({ msg: 'second-ready', sessionId: hex(second?.sessionId ?? 0n) }),
        (err: unknown) => fatal(err),
      );
      break;
    case 'credentials':
      if (session.state === 'CONNECTED' || session.state === 'RECONNECTED') {
        const c = session.credentials();
        send({ msg: 'credentials', id: m.id, sessionId: hex(session.sessionId), password: c.password.toString('hex'), timeoutMs: session.timeoutMs });
      } else {
        send({ msg: 'credentials', id: m.id, unavailable: `session is ${session.state}` });
      }
      break;
    case 'drain':
      drain.abort();
      break;
    case 'pause':
      // A long GC pause: the event loop stands still (no timer, no socket read) for m.ms, then
      // goes on. Not SIGSTOP: a stopped process would outlive a runner killed meanwhile.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, m.ms);
      break;
    case 'stop':
      drain.abort();
      stop.abort();
      void (running ?? Promise.resolve()).then(() => send({ msg: 'stopped', sessionIds: [...sessionIds] }));
      break;
    case 'exit':
      void Promise.allSettled([session.close(), second?.close()]).finally(() => process.exit(0));
      break;
  }
});

// No top-level await: this file is built as CommonJS too.
void session.waitConnected({ timeoutMs: 30_000 }).then(
  () => send({ msg: 'ready', sessionId: hex(session.sessionId) }),
  (err: unknown) => fatal(err),
);
