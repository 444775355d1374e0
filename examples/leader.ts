// Leader election with failover: three participants, the leader steps down, another leads.
// Run: node build/examples/leader.js [host:port]   (default: ZK_CONNECT or 127.0.0.1:2181)
import { LeaderLatch, ZkSession } from 'zk-recipes';

/** Returns the ids of the successive leaders (two distinct ones). */
export async function main(connectString: string): Promise<string[]> {
  const sessions = await Promise.all([1, 2, 3].map(() => ZkSession.connect(connectString)));
  const path = `/examples/elections/${process.pid}`;
  const leaders: string[] = [];
  const latches = sessions.map((session, i) => {
    const latch = new LeaderLatch(session, path, { participantId: `node-${i}` });
    latch.on('elected', (signal) => {
      leaders.push(`node-${i}`);
      // Work as leader until `signal` aborts (leadership lost or given up).
      signal.addEventListener('abort', () => undefined, { once: true });
    });
    latch.start();
    return latch;
  });
  await Promise.race(latches.map((l) => l.awaitLeadership({ timeoutMs: 10_000 })));
  const first = latches.find((l) => l.hasLeadership)!;
  const next = Promise.race(latches.filter((l) => l !== first).map((l) => l.awaitLeadership({ timeoutMs: 10_000 })));
  await first.close(); // step down: the next participant in line is elected
  await next;
  await Promise.all(latches.map((l) => l.close()));
  await Promise.all(sessions.map((s) => s.close()));
  return leaders;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log('leaders:', await main(process.argv[2] ?? process.env.ZK_CONNECT ?? '127.0.0.1:2181'));
}
