// node scripts/wire-trace.mjs <impl> [workload] [--warmup=N] [--dump=N] [--no-fsync]   (default 3 unmeasured runs first; after npm run build:test; Curator needs javac and its jars)
// impl: zk-recipes | zk-recipes-apart | curator | kazoo. Starts a local ZooKeeper (as bench:compare does),
// puts a pass-through proxy that timestamps every frame in front of it, runs one harness's
// workload (default mutex_contended) through the proxy, unmeasured runs first, then one measured, and
// prints where the time of a lock handoff goes: the server's time per request type, and the
// client's time from each frame it received to the request it sent next (its reaction). Both
// implementations are seen by the same proxy on the same server, so their client times compare.
// --dump=N prints N frames from the middle of the measured run, one a line (time, connection,
// direction, xid, type, the path's last segment; a notification's type before it), to read a
// handoff frame by frame. --no-fsync runs the server with forceSync=no (a diagnostic).
import { spawn } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { startBenchServer } from '../build/bench/server.js';
import { curatorHarness, kazooHarness, oursHarness } from './bench-harnesses.mjs';

const [impl = 'zk-recipes', workload = 'mutex_contended'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
// Unmeasured runs first, in the same process (as bench:compare's --warmup).
const warmup = Number(process.argv.find((a) => a.startsWith('--warmup='))?.slice(9) ?? 3);
const dump = Number(process.argv.find((a) => a.startsWith('--dump='))?.slice(7) ?? 0);
const forceSync = process.argv.includes('--no-fsync') ? 'no' : 'yes';
const OPS = { 1: 'create', 2: 'delete', 3: 'exists', 4: 'getData', 5: 'setData', 8: 'getChildren', 9: 'sync', 11: 'ping', 12: 'getChildren2', 14: 'multi', 15: 'create2', 17: 'checkWatches', 18: 'removeWatches', 19: 'createContainer', 101: 'setWatches', 102: 'sasl', 105: 'setWatches2', 106: 'addWatch', 100: 'auth', '-11': 'closeSession' };
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** Every frame: conn, dir ('c' client→server, 's' server→client), t ms, xid, op (requests) or err (replies). */
const frames = [];
let recording = false;
let nextConn = 0;

/** The last segment of a request's path (most requests begin with it; not a multi's or a ping's). */
function requestPath(f, op) {
  if (f.length < 12 || op === 14 || op === 11) return undefined;
  const len = f.readInt32BE(8);
  return len > 0 && 12 + len <= f.length ? f.toString('utf8', 12, 12 + len).split('/').pop() : undefined;
}

/** A notification's event type and the last segment of its path. */
function notificationPath(f) {
  if (f.length < 28) return undefined;
  const len = f.readInt32BE(24);
  return len >= 0 && 28 + len <= f.length ? `${f.readInt32BE(16)}:${f.toString('utf8', 28, 28 + len).split('/').pop()}` : undefined;
}

function splitter(onFrame) {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 4) {
      const len = buf.readInt32BE(0);
      if (buf.length < 4 + len) break;
      onFrame(buf.subarray(4, 4 + len));
      buf = buf.subarray(4 + len);
    }
  };
}

async function proxy(targetPort) {
  const srv = createServer((client) => {
    const conn = nextConn++;
    const upstream = connect(targetPort, '127.0.0.1');
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    let firstC = true;
    let firstS = true;
    const pending = new Map();
    // A four-letter word (mntr, for the counters) passes through untouched.
    client.once('data', (first) => {
      if (/^[a-z]{4}$/.test(first.subarray(0, 4).toString('latin1'))) {
        client.pipe(upstream).write(first);
        upstream.pipe(client);
        return;
      }
      upstream.on('data', fromServer);
      const onC = fromClient;
      onC(first);
      client.on('data', onC);
    });
    const fromClient = splitter((f) => {
      if (firstC) firstC = false;
      else if (recording) {
        const xid = f.readInt32BE(0);
        const op = f.readInt32BE(4);
        const fr = { conn, dir: 'c', t: now(), xid, op, len: f.length, path: dump ? requestPath(f, op) : undefined };
        pending.set(xid, fr);
        frames.push(fr);
      }
      const head = Buffer.alloc(4);
      head.writeInt32BE(f.length);
      upstream.write(Buffer.concat([head, f]));
    });
    const fromServer = splitter((f) => {
      const head = Buffer.alloc(4);
      head.writeInt32BE(f.length);
      client.write(Buffer.concat([head, f]));
      if (firstS) { firstS = false; return; }
      if (!recording) return;
      const xid = f.readInt32BE(0);
      const err = f.readInt32BE(12);
      const req = pending.get(xid);
      if (req) pending.delete(xid);
      frames.push({ conn, dir: 's', t: now(), xid, err, op: xid === -1 ? 'notify' : req?.op, req, path: dump && xid === -1 ? notificationPath(f) : undefined });
    });
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('error', end); upstream.on('error', end); client.on('close', end); upstream.on('close', end);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return srv;
}

/** The chosen harness, told to run `workload` once after `warmup` unmeasured runs, against `connectString`. */
function harness(connectString) {
  const h = impl === 'curator' ? curatorHarness() : impl === 'kazoo' ? kazooHarness() : oursHarness(impl === 'zk-recipes-apart');
  if (!h) process.exit(1);
  return [h.cmd, [...h.args, '--connect', connectString, '--only', workload, '--runs', '1', '--warmup', String(warmup)]];
}

const server = await startBenchServer(forceSync);
const port = Number(server.connectString.split(':')[1]);
const p = await proxy(port);
const [cmd, args] = harness(`127.0.0.1:${p.address().port}`);
// Record only the measured run: the harness prints its JSON line after it; the warm-up prints nothing.
// Frames of the warm-up are dropped by starting to record on the first stderr mention of the run.
recording = true;
const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
child.stdout.on('data', (d) => { out += d; });
await new Promise((r) => child.on('close', r));
p.close();
await server.close();
console.log(out.trim());

// The measured run's sessions are the last of the connections (each warm-up run opened as many).
const run = frames.filter((f) => f.conn >= (nextConn * warmup) / (warmup + 1));

const name = (op) => OPS[op] ?? String(op);
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : NaN; };
const p90 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length * 0.9)] : NaN; };
const serverTime = new Map();
for (const f of run) if (f.dir === 's' && f.req) {
  const k = name(f.req.op);
  (serverTime.get(k) ?? serverTime.set(k, []).get(k)).push(f.t - f.req.t);
}
const sizes = new Map();
for (const f of run) if (f.dir === 'c') (sizes.get(name(f.op)) ?? sizes.set(name(f.op), []).get(name(f.op))).push(f.len);
console.log('server time per request (proxy → reply at proxy), ms: type count p50 p90, and the request frame size in bytes (p50)');
for (const [k, v] of serverTime) console.log(`  ${k.padEnd(14)} ${String(v.length).padStart(6)} ${med(v).toFixed(3)} ${p90(v).toFixed(3)}  ${med(sizes.get(k) ?? [])} B`);
// Client reaction: a request's gap since the last frame its connection received.
const lastIn = new Map();
const reaction = new Map();
for (const f of run) {
  if (f.dir === 's') { lastIn.set(f.conn, f); continue; }
  if (f.op === 11) continue;
  const prev = lastIn.get(f.conn);
  if (!prev) continue;
  const k = `${prev.op === 'notify' ? 'notify' : name(prev.op) + ' reply'} → ${name(f.op)}`;
  (reaction.get(k) ?? reaction.set(k, []).get(k)).push(f.t - prev.t);
  lastIn.delete(f.conn);
}
const ops = JSON.parse(out.trim().split('\n').pop() ?? '{}').ops ?? 0;
console.log('client reaction (last frame received → next request sent), ms: transition count p50 p90');
for (const [k, v] of [...reaction].sort((a, b) => b[1].length - a[1].length)) if (v.length >= ops / 10) console.log(`  ${k.padEnd(34)} ${String(v.length).padStart(6)} ${med(v).toFixed(3)} ${p90(v).toFixed(3)}`);

// A handoff: a delete sent on one connection, the notification it causes on another, that
// connection's next request and its reply.
const chain = { commit: [], react: [], read: [] };
let lastDelete;
const pendingNotify = new Map();
for (const f of run) {
  if (f.dir === 'c' && f.op === 2) lastDelete = f;
  else if (f.dir === 's' && f.op === 'notify' && lastDelete && lastDelete.conn !== f.conn) pendingNotify.set(f.conn, { del: lastDelete, notify: f });
  else if (f.dir === 'c' && f.op !== 11 && pendingNotify.has(f.conn)) {
    const p = pendingNotify.get(f.conn);
    pendingNotify.delete(f.conn);
    chain.commit.push(p.notify.t - p.del.t);
    chain.react.push(f.t - p.notify.t);
    p.req = f;
    pendingNotify.set(`reply:${f.conn}:${f.xid}`, p);
  } else if (f.dir === 's' && pendingNotify.has(`reply:${f.conn}:${f.xid}`)) {
    const p = pendingNotify.get(`reply:${f.conn}:${f.xid}`);
    pendingNotify.delete(`reply:${f.conn}:${f.xid}`);
    chain.read.push(f.t - p.req.t);
  }
}
if (chain.commit.length) {
  console.log(`handoffs seen: ${chain.commit.length}; ms p50 (p90):`);
  console.log(`  delete sent → notification out (server)        ${med(chain.commit).toFixed(3)} (${p90(chain.commit).toFixed(3)})`);
  console.log(`  notification → next request (waiter's client) ${med(chain.react).toFixed(3)} (${p90(chain.react).toFixed(3)})`);
  console.log(`  that request → its reply (server)              ${med(chain.read).toFixed(3)} (${p90(chain.read).toFixed(3)})`);
}

if (dump) {
  const t0 = run[0]?.t ?? 0;
  const mid = Math.floor(run.length / 2);
  console.log(`frames ${mid}-${mid + dump} of ${run.length} (ms from the run's first; c = client→server, s = server→client):`);
  for (const f of run.slice(mid, mid + dump)) console.log(`${(f.t - t0).toFixed(3).padStart(9)} c${f.conn} ${f.dir} xid=${f.xid} ${f.dir === 'c' ? name(f.op) : f.op === 'notify' ? 'NOTIFY' : `reply ${name(f.op)} err=${f.err}`} ${f.path ?? ''}`);
}
