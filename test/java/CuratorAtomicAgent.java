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
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;

public final class CuratorAtomicAgent {
  private static final Object OUT = new Object();
  private static CuratorFramework client;

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
        case "get" -> run(w[1], () -> {
          AtomicValue<Long> v = number(w[2], 0, null).get();
          return v.succeeded() + " " + v.postValue();
        });
        case "add" -> run(w[1], () -> show(number(w[2], 10, null).add(Long.parseLong(w[3]))));
        case "cas" -> run(w[1], () -> show(number(w[2], 0, null).compareAndSet(Long.parseLong(w[3]), Long.parseLong(w[4]))));
        case "inc" -> run(w[1], () -> {
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
