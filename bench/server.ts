// The ZooKeeper the bench starts when it is given none, and the one bench:compare and
// wire-trace run every harness on (scripts/bench-harnesses.mjs).
import { TestingServer } from '../src/testing/index.js';

/**
 * JVM flags added after the test servers' quick-start ones (later flags win): the full tiered
 * JIT and G1, as a ZooKeeper runs by default, not the test servers' C1-only JIT and serial
 * collector; and a 1 GB heap (ZooKeeper keeps every znode in memory: 1 000 000 queue items take
 * about 620 MB).
 */
export const BENCH_JVM_ARGS: readonly string[] = ['-Xmx1g', '-XX:-UseSerialGC', '-XX:+UseG1GC', '-XX:TieredStopAtLevel=4'];

/**
 * A local standalone server: default fsync (`forceSync: 'no'` only for bench:compare's
 * `--no-fsync` diagnostic). A listen backlog above Java's default of 50: 200 sessions
 * connecting at once (scale_sessions) would otherwise wait a second for SYN retransmits.
 */
export function startBenchServer(forceSync: 'yes' | 'no' = 'yes'): Promise<TestingServer> {
  return TestingServer.start({ tickTime: 2000, extraConfig: [`forceSync=${forceSync}`, 'clientPortListenBacklog=1024'], jvmArgs: BENCH_JVM_ARGS });
}
