// Apache Curator's DistributedAtomicLong (with and without PromotedToLock), driven by the
// atomic interop test over stdin/stdout. Compiled by test/java/curator.ts with javac into a temp
// dir and run against Debian's Curator.
//
// Usage: java CuratorAtomicAgent <connectString>
// Prints "ready 0x<sessionId>" once connected. Commands (one a line); each prints
// "ok <req> [result]" or "error <req> <message>" when done (each runs on a thread of its own):
//   get <req> <path>                          get(): ok <req> <succeeded> <value>
//   add <req> <path> <delta>                  add(delta): ok <req> <succeeded> <pre> <post>
//   cas <req> <path> <expected> <new>         compareAndSet: ok <req> <succeeded> <pre> <post>
//   inc <req> <path> <threads> <count> <retries> [lockPath]
//                                             <threads> threads each call increment() <count> times
//                                             (RetryNTimes(<retries>, 1 ms); PromotedToLock on
//                                             lockPath if given): ok <req> <succeeded> <failed>
//   quit                                      closes the client and exits.
// The agent exits when its stdin closes, so it never outlives the test process.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.retry.RetryNTimes;

public final class CuratorAtomicAgent {
  private static CuratorFramework client;

  static DistributedAtomicLong number(String path, int retries, String lockPath) {
    RetryNTimes policy = new RetryNTimes(retries, 1);
    if (lockPath == null) return new DistributedAtomicLong(client, path, policy);
    PromotedToLock promoted = PromotedToLock.builder().lockPath(lockPath).retryPolicy(new RetryNTimes(retries, 1)).timeout(30, TimeUnit.SECONDS).build();
    return new DistributedAtomicLong(client, path, policy, promoted);
  }

  static String show(AtomicValue<Long> v) {
    return v.succeeded() + " " + v.preValue() + " " + v.postValue();
  }

  public static void main(String[] args) throws Exception {
    client = AgentLoop.connect(args[0], 4000);
    AgentLoop.serve(client, (w, line) -> {
      switch (w[0]) {
        case "get" -> AgentLoop.run(w[1], () -> {
          AtomicValue<Long> v = number(w[2], 0, null).get();
          return v.succeeded() + " " + v.postValue();
        });
        case "add" -> AgentLoop.run(w[1], () -> show(number(w[2], 10, null).add(Long.parseLong(w[3]))));
        case "cas" -> AgentLoop.run(w[1], () -> show(number(w[2], 0, null).compareAndSet(Long.parseLong(w[3]), Long.parseLong(w[4]))));
        case "inc" -> AgentLoop.run(w[1], () -> {
          int threads = Integer.parseInt(w[3]);
          int count = Integer.parseInt(w[4]);
          DistributedAtomicLong n = number(w[2], Integer.parseInt(w[5]), w.length > 6 ? w[6] : null);
          AtomicLong ok = new AtomicLong();
          AtomicLong failed = new AtomicLong();
          List<Thread> all = new ArrayList<>();
          for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
              for (int j = 0; j < count; j++) {
                try {
                  if (n.increment().succeeded()) ok.incrementAndGet();
                  else failed.incrementAndGet();
                } catch (Exception e) {
                  failed.incrementAndGet();
                }
              }
            });
            all.add(t);
            t.start();
          }
          for (Thread t : all) t.join();
          return ok.get() + " " + failed.get();
        });
        default -> {
          return false;
        }
      }
      return true;
    }, () -> {});
  }
}
