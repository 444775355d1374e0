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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;

public final class CuratorBarrierAgent {
  private static CuratorFramework client;
  private static final Map<String, DistributedDoubleBarrier> doubles = new ConcurrentHashMap<>();
  private static final Map<String, LinkedBlockingQueue<String>> unlocks = new ConcurrentHashMap<>();

  public static void main(String[] args) throws Exception {
    client = AgentLoop.connect(args[0], 4000);
    AgentLoop.serve(client, (w, line) -> {
      switch (w[0]) {
        case "set" -> AgentLoop.run(w[1], () -> {
          new DistributedBarrier(client, w[2]).setBarrier();
          return "";
        });
        case "remove" -> AgentLoop.run(w[1], () -> {
          new DistributedBarrier(client, w[2]).removeBarrier();
          return "";
        });
        case "wait" -> AgentLoop.run(w[1], () -> String.valueOf(new DistributedBarrier(client, w[2]).waitOnBarrier(Long.parseLong(w[3]), TimeUnit.MILLISECONDS)));
        case "enter" -> AgentLoop.run(w[1], () -> {
          DistributedDoubleBarrier b = new DistributedDoubleBarrier(client, w[3], Integer.parseInt(w[4]));
          doubles.put(w[2], b);
          return String.valueOf(b.enter(Long.parseLong(w[5]), TimeUnit.MILLISECONDS));
        });
        case "leave" -> AgentLoop.run(w[1], () -> String.valueOf(doubles.get(w[2]).leave(Long.parseLong(w[3]), TimeUnit.MILLISECONDS)));
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
              AgentLoop.emit("ok " + req + " " + got);
              if (!got) return;
              req = unlock.take();
              l.release();
              AgentLoop.emit("ok " + req);
            } catch (Exception e) {
              AgentLoop.emit("error " + req + " " + e.toString().replace('\n', ' '));
            }
          });
          t.setDaemon(true);
          t.start();
        }
        case "unlock" -> unlocks.remove(w[2]).add(w[1]);
        default -> {
          return false;
        }
      }
      return true;
    }, () -> {});
  }
}
