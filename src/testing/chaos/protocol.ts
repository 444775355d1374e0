/**
 * Messages between the chaos runner and its client processes (over the IPC channel).
 *
 * @internal
 * @module
 */
import type { CacheRole, ChaosEvent, WorkloadSpec } from './history.js';

/** What a client process is started with (JSON in argv[2]). */
export interface ClientConfig {
  /** The client's name (unique in the run). */
  name: string;
  /** Its workload. */
  workload: WorkloadSpec;
  /** Its connect string: its own proxies, one per member. */
  connectString: string;
  /** Requested session timeout, ms. */
  sessionTimeoutMs: number;
  /** Port of the fenced resource on 127.0.0.1. */
  resourcePort: number;
  /** Seed of the client's own random stream. */
  seed: number;
  /** Sessions (1 or 2): with 2, flow `b` runs on a second session, opened when the runner says `second`. */
  sessions: number;
  /** For the cache workload: what the client does. */
  role?: CacheRole;
  /** Connect over TLS (`--tls`): the session's `tls` option, PEM text (the proxies forward to the members' TLS ports). */
  tls?: { ca: string; cert: string; key: string };
  /** Over TLS: the same CA and client certificate as PEM files, for the `zkr` workload's `--tls-ca`, `--tls-cert`, `--tls-key`. */
  tlsFiles?: { ca: string; cert: string; key: string };
}

/** Runner to client. */
export type RunnerMessage =
  | { cmd: 'start' }
  | { cmd: 'credentials'; id: number }
  | { cmd: 'second' }
  | { cmd: 'drain' }
  | { cmd: 'pause'; ms: number }
  | { cmd: 'stop' }
  | { cmd: 'exit' };

/** Client to runner. */
export type ClientMessage =
  | { msg: 'event'; event: ChaosEvent }
  | { msg: 'ready'; sessionId: string }
  | { msg: 'second-ready'; sessionId: string }
  | { msg: 'credentials'; id: number; sessionId: string; password: string; timeoutMs: number }
  | { msg: 'credentials'; id: number; unavailable: string }
  | { msg: 'stopped'; sessionIds: string[] };
