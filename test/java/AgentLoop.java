// What every Curator interop agent shares (compiled beside each by test/java/curator.ts): one
// Curator client, replies written one line at a time, blocking commands on threads of their
// own, and the command loop. The driver side is test/java/agent.ts.
//
// The agent prints "ready 0x<sessionId>" once connected (or "fatal <why>" and exits 2), then
// reads one command a line; "quit" closes what the agent holds and the client, prints "bye" and
// exits. The agent exits when its stdin closes, so it never outlives the test process.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class AgentLoop {
  private static final Object OUT = new Object();

  /** An agent's commands: handles the words of one line; false for a verb it does not know. */
  public interface Commands {
    boolean handle(String[] w, String line) throws Exception;
  }

  /** What an agent closes on "quit", before its client. */
  public interface OnQuit {
    void run() throws Exception;
  }

  private AgentLoop() {}

  /** Writes one whole line (lines of several threads never interleave). */
  public static void emit(String line) {
    synchronized (OUT) {
      System.out.println(line);
      System.out.flush();
    }
  }

  /** An exception as one line. */
  public static String describe(Exception e) {
    return e.toString().replace('\n', ' ');
  }

  /** Runs `work` on a thread of its own: "ok <req> [result]" or "error <req> <message>". */
  public static void run(String req, Callable<String> work) {
    start(() -> reply(req, work));
  }

  /** Runs `work` now (commands answered in order): "ok <req> [result]" or "error <req> <message>". */
  public static void reply(String req, Callable<String> work) {
    try {
      String r = work.call();
      emit("ok " + req + (r.isEmpty() ? "" : " " + r));
    } catch (Exception e) {
      emit("error " + req + " " + describe(e));
    }
  }

  /** Runs `r` on a daemon thread. */
  public static void start(Runnable r) {
    Thread t = new Thread(r);
    t.setDaemon(true);
    t.start();
  }

  /** A started client, connected within 20 s; otherwise "fatal" and exit 2. */
  public static CuratorFramework connect(String connectString, int sessionTimeoutMs) throws InterruptedException {
    CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(connectString).sessionTimeoutMs(sessionTimeoutMs).connectionTimeoutMs(5000).retryPolicy(new ExponentialBackoffRetry(50, 10));
    // -Dcurator.test.digest=user:password: authenticate as that digest identity, and create
    // every node with CREATOR_ALL_ACL (an ACLProvider), as a secured service would.
    String digest = System.getProperty("curator.test.digest");
    if (digest != null) {
      b.authorization("digest", digest.getBytes(StandardCharsets.UTF_8)).aclProvider(new org.apache.curator.framework.api.ACLProvider() {
        public java.util.List<org.apache.zookeeper.data.ACL> getDefaultAcl() {
          return org.apache.zookeeper.ZooDefs.Ids.CREATOR_ALL_ACL;
        }

        public java.util.List<org.apache.zookeeper.data.ACL> getAclForPath(String path) {
          return org.apache.zookeeper.ZooDefs.Ids.CREATOR_ALL_ACL;
        }
      });
    }
    CuratorFramework c = b.build();
    c.start();
    if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) {
      emit("fatal could not connect to " + connectString);
      System.exit(2);
    }
    return c;
  }

  /** The client's session id as `wchc` prints it. */
  public static String sessionOf(CuratorFramework c) throws Exception {
    return "0x" + Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId());
  }

  /** Prints "ready", then reads and handles commands until "quit" or the end of stdin. */
  public static void serve(CuratorFramework client, Commands commands, OnQuit onQuit) throws Exception {
    emit("ready " + sessionOf(client));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split("\\s+");
      if (w[0].equals("quit")) {
        onQuit.run();
        client.close();
        emit("bye");
        System.exit(0);
      }
      try {
        if (!commands.handle(w, line)) emit("error - unknown command " + line);
      } catch (Exception e) {
        emit("error - " + describe(e));
      }
    }
    System.exit(0);
  }
}
