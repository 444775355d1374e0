import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { checkInt } from './check.js';

/** The only address the test kit binds or connects to. @group Testing */
export const LOOPBACK = '127.0.0.1';

// Why below the ephemeral range: a client that keeps reconnecting to a port nobody listens on
// (a server being restarted) can be handed that same port as its source port by the kernel and
// connect to itself (TCP self-connect), then wait on its own bytes. Ports outside the range are
// never source ports.
function portRange(): { low: number; high: number } {
  try {
    const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (first !== undefined && first > 12_000) return { low: 10_000, high: first - 1 };
  } catch {
    // Not Linux: fall through.
  }
  return { low: 10_000, high: 30_000 };
}

function tryListen(port: number): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(undefined) : reject(error)));
    server.listen({ host: LOOPBACK, port, exclusive: true }, () => resolve(server));
  });
}

async function listen(): Promise<Server> {
  const { low, high } = portRange();
  for (let attempt = 0; attempt < 200; attempt++) {
    const server = await tryListen(low + Math.floor(Math.random() * (high - low + 1)));
    if (server) return server;
  }
  throw new Error(`no free TCP port on ${LOOPBACK} between ${low} and ${high}`);
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Returns `count` (1 to 1000) distinct free TCP ports on 127.0.0.1.
 * All are held open together before being released, so they differ from each other;
 * another process may still take one before the caller binds it (callers retry).
 * @group Testing
 */
export async function freePorts(count: number): Promise<number[]> {
  checkInt(count, 'count', 1, 1000);
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listen());
    return servers.map((s) => {
      const address = s.address();
      if (address === null || typeof address === 'string') throw new Error('no TCP address');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map(close));
  }
}

/** Returns one free TCP port on 127.0.0.1 (see {@link freePorts}). @group Testing */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('no free port');
  return port;
}
