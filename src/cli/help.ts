/**
 * The `--help` texts of `zkr` and its subcommands.
 *
 * @internal
 * @module
 */
import type { Subcommand } from './args.js';

const CONNECT = `
ZooKeeper:
  --connect HOST:PORT[,HOST:PORT...][/chroot]
                          where ZooKeeper is (default: $ZK_CONNECT, else 127.0.0.1:2181)
  --session-timeout SECS  requested session timeout (default 10; the server may clamp it)
  --connect-timeout SECS  how long to wait for the first connection (default 15), then exit 69
  --auth SCHEME:CREDS     authenticate, e.g. digest:user:password (repeatable; shows in ps:
                          prefer --auth-file)
  --auth-file FILE        read SCHEME:CREDS lines from FILE; credentials are never printed
  --sasl-user NAME        SASL DIGEST-MD5 as NAME; the password is the first line of
                          --sasl-password-file FILE, else $ZK_SASL_PASSWORD
  --tls-ca FILE           connect over TLS (to the secureClientPort), trusting this CA (PEM)
  --tls-cert FILE         with --tls-key: our client certificate and its key (PEM)
  --tls-key FILE          (any --tls-* option turns TLS on; default $ZK_TLS_CA,
                          $ZK_TLS_CERT, $ZK_TLS_KEY); a refused handshake exits 78
  --tls-servername NAME   the host name the server's certificate must be issued for
  -v, --verbose           timestamped state changes on stderr
  -h, --help              this text`;

const RUN = `
Waiting:
  -w, --timeout SECS      give up after SECS (0 = -n); default: wait without limit
  -n, --nonblock          exit at once when busy
  -E, --conflict-exit-code N
                          exit code when busy or timed out (default 1)
  --id ID                 participant id stored in our node (default hostname:pid)
  --status-file FILE      keep the state there: waiting, held, lost, released
  --acl open|creator      ACL of the nodes created: open to all (default), or all
                          permissions to our --auth/SASL identity only

Running:
  --shell                 run CMD ARGS... as one line through /bin/sh -c
  --pass-stdin            give the command zkr's stdin (default /dev/null)
  --kill-signal SIG       first signal when the command must stop (default TERM)
  --kill-grace SECS       then SIGKILL this much later (default 1); must fit the
                          negotiated session timeout, else exit 64
  --on-suspended wait|kill
                          wait: kill only if the connection stays down so long that the
                          session could expire before the kill is done (default);
                          kill: kill at once when the connection is suspended

The command runs in its own process group with ZKR_HELD=1, ZKR_MODE, ZKR_PATH,
ZKR_NODE_PATH, ZKR_SESSION_ID and ZKR_FENCING_TOKEN (decimal) in its environment. Its
group is dead before the session can expire. TERM, INT, HUP, QUIT, USR1 and USR2 go to
the group while it runs; while zkr waits they end the wait (exit 128+N).

Exit: the command's code (128+N if signal N ended it); 1 (-E) busy or timed out;
75 lost while running; 64 usage; 65 the path holds another recipe; 69 ZooKeeper
unreachable; 77 no permission or authentication refused; 78 TLS refused;
126/127 the command cannot run / was not found.
See docs/cli.md.`;

const TEXTS: Record<Subcommand | 'zkr', string> = {
  zkr: `usage: zkr SUBCOMMAND PATH [OPTIONS] [-- CMD ARGS...]

Run a command while holding a ZooKeeper lock, semaphore lease or leadership (Curator's
node layout), and kill it before anyone else can be granted.

  zkr lock PATH -- CMD ARGS...             one holder at a time (Curator InterProcessMutex)
  zkr semaphore PATH --max N -- CMD ...    at most N holders
  zkr read PATH -- CMD ...                 shared: many readers, no writer
  zkr write PATH -- CMD ...                exclusive: one writer, no reader
  zkr elect PATH [--id ID] [--requeue] -- CMD ...
                                           run while leader (stand again with --requeue)
  zkr elect PATH --observe [--json]        print each leader change
  zkr inspect PATH [--json]                holders and waiters of any recipe on PATH
  zkr queue put|take|size|dead-letters PATH
                                           a distributed queue's items
  zkr watch PATH [--json]                  print every change under PATH

zkr SUBCOMMAND --help for its options.
${CONNECT}`,
  lock: `usage: zkr lock PATH [OPTIONS] -- CMD [ARGS...]

Waits for the mutex on PATH, runs CMD while holding it, releases it when CMD exits.
${RUN}
${CONNECT}`,
  semaphore: `usage: zkr semaphore PATH --max N [OPTIONS] -- CMD [ARGS...]

Waits for one of N leases on PATH (every participant must give the same N), runs CMD
while holding it.
${RUN}
${CONNECT}`,
  read: `usage: zkr read PATH [OPTIONS] -- CMD [ARGS...]

Waits for the read side of the read-write lock on PATH (shared with other readers).
${RUN}
${CONNECT}`,
  write: `usage: zkr write PATH [OPTIONS] -- CMD [ARGS...]

Waits for the write side of the read-write lock on PATH (exclusive).
${RUN}
${CONNECT}`,
  elect: `usage: zkr elect PATH [--id ID] [--requeue] [OPTIONS] -- CMD [ARGS...]
       zkr elect PATH --observe [--json]

Stands in the election on PATH (Curator's LeaderLatch layout) and runs CMD while leader.
  --requeue               after a term (CMD exited or leadership lost), stand again;
                          a signal to zkr ends it
  --observe               run nothing: print a line at each leader change
  --json                  with --observe: one JSON object a line
${RUN}
${CONNECT}`,
  inspect: `usage: zkr inspect PATH [--json]

Prints the holders and waiters of whatever recipe uses PATH (mutex, semaphore, read-write
lock, leader latch or selector): participant ids, nodes, fencing tokens, ages, sessions.
  --json                  one JSON document
${CONNECT}`,
  queue: `usage: zkr queue put PATH [ITEM]      put ITEM (else stdin) as one item
       zkr queue take PATH [-w SECS|-n] print one item taken (acknowledged), or exit 1 (-E)
       zkr queue size PATH              print the number of items waiting
       zkr queue dead-letters PATH      print the dead letters
  --json                  JSON output
  --acl open|creator      ACL of the nodes created (default open; creator: our identity only)
${CONNECT}`,
  watch: `usage: zkr watch PATH [--json]

Prints every change of PATH and the nodes under it (added, changed, removed) until
interrupted.
  --json                  one JSON object a line
${CONNECT}`,
};

/** The help text of `sub` (or of `zkr`). @internal */
export function helpText(sub: Subcommand | undefined): string {
  return `${TEXTS[sub ?? 'zkr']}\n`;
}
