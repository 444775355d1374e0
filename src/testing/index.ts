/**
 * zk-recipes/testing: real ZooKeeper servers and ensembles for tests (Debian's, Homebrew's or an
 * Apache release's jars: see {@link locateZooKeeper}), four-letter-word probes, a
 * fault-injecting TCP proxy, a polling helper, and the chaos suite (a seeded nemesis, a history
 * recorder and an offline checker of what every client believed).
 * @packageDocumentation
 */
export {
  ClusterMember,
  TestingCluster,
  type ClusterMemberPlan,
  type TestingClusterOptions,
  type WaitForQuorumOptions,
} from './cluster.js';
export type { MemberLink } from './member-links.js';
export {
  cons,
  dump,
  fourLetterWord,
  mntr,
  NOT_SERVING,
  parseCons,
  parseDump,
  parseMntr,
  parseSrvr,
  parseWatches,
  ruok,
  srvr,
  watchesByPath,
  watchesBySession,
  type ConnectionInfo,
  type FourLetterWordOptions,
  type MntrStats,
  type ServerStatus,
  type SessionDump,
  type TrackedSession,
  type ZooKeeperMode,
} from './four-letter.js';
export {
  DEFAULT_ZK_JARS_DIR,
  locateZooKeeper,
  REQUIRED_ZK_JARS,
  ZOOKEEPER_INSTALL_COMMAND,
  ZooKeeperNotInstalledError,
  HOMEBREW_JAVA,
  HOMEBREW_ZOOKEEPER_HOMES,
  type ZooKeeperInstallation,
  type ZooKeeperLogging,
} from './java.js';
export { connectAs, createSecuredPath, superDigestConfig, testIdentity, type TestIdentity } from './acl.js';
export { freePort, freePorts, LOOPBACK } from './ports.js';
export {
  ChaosProxy,
  type ChaosMode,
  type ChaosProxyBytes,
  type ChaosProxyOptions,
  type LoseReplyMatch,
  type LoseReplyOptions,
  type ZkOpName,
} from './proxy.js';
export {
  TestingServer,
  type TestingServerOptions,
  type ZooKeeperTestOptions,
} from './server.js';
export {
  CertificateToolError,
  generateTestCertificates,
  type CertificateFiles,
  type GenerateCertificatesOptions,
  type ServerTlsFiles,
  type TestCertificates,
} from './tls-certs.js';
export { jaasServerConfig, type SaslServerOptions } from './jaas.js';
export { waitFor, WaitTimeoutError, withTimeout, type WaitForOptions } from './wait.js';
export {
  TEST_JVM_ARGS,
  ZooKeeperProcess,
  ZooKeeperStartError,
  type RestartOptions,
  type ZooKeeperProcessInit,
} from './zk-process.js';

// Session expiry (expireSession) is exported here by the client layer's author:
// it needs a ZooKeeper client, which only src/client may import.
export { expireSession, type ExpireSessionOptions } from './expire-session.js';

// The chaos suite (npm run chaos): nemesis, history recorder, checker, fenced resource, runner.
export * from './chaos/index.js';
