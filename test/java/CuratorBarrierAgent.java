// Apache Curator's barriers (DistributedBarrier, DistributedDoubleBarrier) and InterProcessMultiLock,
// driven by the barrier and multilock interop tests over stdin/stdout. Compiled by
// test/java/curator.ts with javac into a temp dir and run against Debian's Curator.
//
// Usage: java CuratorBarrierAgent <connectString>
// Prints "ready 0x<sessionId>" once connected. Commands (one a line); each prints
// "ok <req> [result]" or "error <req> <message>" when done (blocking ones run on a thread):
//   set <req> <path>                     DistributedBarrier.setBarrier
//   remove <req> <path>                  DistributedBarrier.removeBarrier
//   wait <req> <path> <ms>               DistributedBarrier.waitOnBarrier(ms): ok <req> true|false
//   enter <req> <id> <path> <n> <ms>     a new DistributedDoubleBarrier(path, n) as <id>; enter(ms): ok <req> true|false
//   leave <req> <id> <ms>                leave(ms) of <id>: ok <req> true|false
//   lock <req> <id> <ms> <path>...       an InterProcessMultiLock of InterProcessMutexes as <id>; acquire(ms): ok <req> true|false
//   unlock <req> <id>                    release of <id>
//   quit                                 closes the client and exits.
// The agent exits when its stdin closes, so it never outlives the test process.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorBarrierAgent {
  private static final Object OUT = new Object();
  private static CuratorFramework client;
  private static final Map<String, DistributedDoubleBarrier> doubles = new ConcurrentHashMap<>();
  private static final Map<String, LinkedBlockingQueue<String>> unlocks = new ConcurrentHashMap<>();

  static void emit(String line) {
    synchronized (OUT) {
      System.out.println(line);
      System.out.flush();
    }
  }

  static void run(String req, Callable<String> work) {
    Thread t = new Thread(() -> {
      try {
        String r = work.call();
        emit("ok " + req + (r.isEmpty() ? "" : " " + r));
      } catch (Exception e) {
        emit("error " + req + " " + e.toString().replace('\n', ' '));
      }
    });
    t.setDaemon(true);
    t.start();
  }

  public static void main(String[] args) throws Exception {
    client = CuratorFrameworkFactory.newClient(args[0], 4000, 5000, new ExponentialBackoffRetry(50, 10));
    client.start();
    if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
      emit("fatal could not connect to " + args[0]);
      System.exit(2);
    }
    emit("ready 0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId()));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split("\\s+");
      switch (w[0]) {
        case "set" -> run(w[1], () -> {
          new DistributedBarrier(client, w[2]).setBarrier();
          return "";
        });
        case "remove" -> run(w[1], () -> {
          new DistributedBarrier(client, w[2]).removeBarrier();
          return "";
        });
        case "wait" -> run(w[1], () -> String.valueOf(new DistributedBarrier(client, w[2]).waitOnBarrier(Long.parseLong(w[3]), TimeUnit.MILLISECONDS)));
        case "enter" -> run(w[1], () -> {
          DistributedDoubleBarrier b = new DistributedDoubleBarrier(client, w[3], Integer.parseInt(w[4]));
          doubles.put(w[2], b);
          return String.valueOf(b.enter(Long.parseLong(w[5]), TimeUnit.MILLISECONDS));
        });
        case "leave" -> run(w[1], () -> String.valueOf(doubles.get(w[2]).leave(Long.parseLong(w[3]), TimeUnit.MILLISECONDS)));
        case "lock" -> {
          // Curator's mutexes belong to the acquiring thread: that thread also releases, on "unlock".
          LinkedBlockingQueue<String> unlock = new LinkedBlockingQueue<>();
          unlocks.put(w[2], unlock);
          Thread t = new Thread(() -> {
            String req = w[1];
            try {
              List<String> paths = Arrays.asList(w).subList(4, w.length);
              InterProcessMultiLock l = new InterProcessMultiLock(client, paths);
              boolean got = l.acquire(Long.parseLong(w[3]), TimeUnit.MILLISECONDS);
              emit("ok " + req + " " + got);
              if (!got) return;
              req = unlock.take();
              l.release();
              emit("ok " + req);
            } catch (Exception e) {
              emit("error " + req + " " + e.toString().replace('\n', ' '));
            }
          });
          t.setDaemon(true);
          t.start();
        }
        case "unlock" -> unlocks.remove(w[2]).add(w[1]);
        case "quit" -> {
          client.close();
          emit("bye");
          System.exit(0);
        }
        default -> emit("error - unknown command " + line);
      }
    }
    System.exit(0);
  }
}
