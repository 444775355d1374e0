// A Curator semaphore participant (InterProcessSemaphoreV2, or the deprecated V1
// InterProcessSemaphore) that the interop tests drive over stdin/stdout. Compiled by
// test/java/curator.ts with javac into a temp dir and run against Debian's Curator.
//
// Usage: java CuratorSemaphoreAgent <connectString> <path> <maxLeases> <v2|v1|mutex>
// (mutex: an InterProcessMutex, held by the thread that acquired it until its release; maxLeases unused)
// Prints "ready 0x<sessionId>" once connected, then one line per event. Commands (one a line):
//   acquire <id> <timeoutMs> <qty>   timeoutMs < 0: wait without limit. Prints
//                                    "waiting <id>" at once, then "acquired <id> <node>..." or
//                                    "timeout <id>" or "error <id> <message>".
//   release <id>                     returns the leases of <id>; prints "released <id>".
//   stress <id> <threads> <iterations> <counterPath> <holdMs>
//                                    each thread loops: acquire, bump the shared counter node
//                                    (compare-and-set), hold, lower it, release. Prints
//                                    "stress-done <id> <grants> <maxSeen> <violations>".
//   quit                             closes the client and exits.
// The agent exits when its stdin closes, so it never outlives the test process.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphore;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public final class CuratorSemaphoreAgent {
  private static CuratorFramework client;
  private static String path;
  private static int maxLeases;
  private static boolean v1;
  private static boolean mutex;
  private static final Map<String, Collection<Lease>> held = new ConcurrentHashMap<>();

  public static void main(String[] args) throws Exception {
    client = AgentLoop.connect(args[0], 4000);
    path = args[1];
    maxLeases = Integer.parseInt(args[2]);
    v1 = args[3].equals("v1");
    mutex = args[3].equals("mutex");
    AgentLoop.serve(client, (w, line) -> {
      switch (w[0]) {
        case "acquire" -> AgentLoop.start(() -> acquire(w[1], Long.parseLong(w[2]), Integer.parseInt(w[3])));
        case "release" -> AgentLoop.start(() -> release(w[1]));
        case "stress" -> AgentLoop.start(() -> stress(w[1], Integer.parseInt(w[2]), Integer.parseInt(w[3]), w[4], Long.parseLong(w[5])));
        default -> {
          return false;
        }
      }
      return true;
    }, () -> {});
  }

  /** One semaphore instance of the configured class. */
  private interface Sem {
    Collection<Lease> acquire(int qty, long timeoutMs) throws Exception;

    void returnLease(Lease lease);
  }

  @SuppressWarnings("deprecation")
  private static Sem newSem() {
    if (v1) {
      InterProcessSemaphore s = new InterProcessSemaphore(client, path, maxLeases);
      return new Sem() {
        public Collection<Lease> acquire(int qty, long timeoutMs) throws Exception {
          return timeoutMs < 0 ? s.acquire(qty) : s.acquire(qty, timeoutMs, TimeUnit.MILLISECONDS);
        }

        public void returnLease(Lease lease) {
          s.returnLease(lease);
        }
      };
    }
    InterProcessSemaphoreV2 s = new InterProcessSemaphoreV2(client, path, maxLeases);
    return new Sem() {
      public Collection<Lease> acquire(int qty, long timeoutMs) throws Exception {
        return timeoutMs < 0 ? s.acquire(qty) : s.acquire(qty, timeoutMs, TimeUnit.MILLISECONDS);
      }

      public void returnLease(Lease lease) {
        s.returnLease(lease);
      }
    };
  }

  private static void acquire(String id, long timeoutMs, int qty) {
    if (mutex) {
      acquireMutex(id, timeoutMs);
      return;
    }
    try {
      Sem sem = newSem();
      AgentLoop.emit("waiting " + id);
      Collection<Lease> leases = sem.acquire(qty, timeoutMs);
      if (leases == null) {
        AgentLoop.emit("timeout " + id);
        return;
      }
      held.put(id, leases);
      StringBuilder sb = new StringBuilder("acquired " + id);
      for (Lease l : leases) sb.append(' ').append(l.getNodeName());
      AgentLoop.emit(sb.toString());
    } catch (Exception e) {
      AgentLoop.emit("error " + id + " " + e);
    }
  }

  /**
   * InterProcessMutex is owned by the thread that acquired it: this thread holds it, and the
   * lease it files releases it through this thread.
   */
  private static void acquireMutex(String id, long timeoutMs) {
    try {
      InterProcessMutex m = new InterProcessMutex(client, path);
      AgentLoop.emit("waiting " + id);
      boolean ok = true;
      if (timeoutMs < 0) m.acquire();
      else ok = m.acquire(timeoutMs, TimeUnit.MILLISECONDS);
      if (!ok) {
        AgentLoop.emit("timeout " + id);
        return;
      }
      CountDownLatch releasing = new CountDownLatch(1);
      CountDownLatch released = new CountDownLatch(1);
      List<Lease> one = new ArrayList<>();
      one.add(new Lease() {
        public void close() {
          releasing.countDown();
          try {
            released.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }

        public byte[] getData() {
          return new byte[0];
        }

        public String getNodeName() {
          return "mutex";
        }
      });
      held.put(id, one);
      AgentLoop.emit("acquired " + id + " mutex");
      releasing.await();
      try {
        m.release();
      } finally {
        released.countDown();
      }
    } catch (Exception e) {
      AgentLoop.emit("error " + id + " " + e);
    }
  }

  private static void release(String id) {
    Collection<Lease> leases = held.remove(id);
    if (leases == null) {
      AgentLoop.emit("error " + id + " not held");
      return;
    }
    for (Lease l : leases) {
      try {
        l.close();
      } catch (Exception e) {
        AgentLoop.emit("error " + id + " " + e);
        return;
      }
    }
    AgentLoop.emit("released " + id);
  }

  /** Adds `delta` to the counter at `counterPath` (compare-and-set); returns the new value. */
  private static int bump(String counterPath, int delta) throws Exception {
    for (;;) {
      Stat stat = new Stat();
      byte[] data = client.getData().storingStatIn(stat).forPath(counterPath);
      int next = Integer.parseInt(new String(data, StandardCharsets.UTF_8).trim()) + delta;
      try {
        client.setData().withVersion(stat.getVersion()).forPath(counterPath, Integer.toString(next).getBytes(StandardCharsets.UTF_8));
        return next;
      } catch (KeeperException.BadVersionException e) {
        // Someone else moved it: read again.
      }
    }
  }

  private static void stress(String id, int threads, int iterations, String counterPath, long holdMs) {
    AtomicInteger grants = new AtomicInteger();
    AtomicInteger maxSeen = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    List<Thread> all = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        Sem sem = newSem();
        try {
          for (int i = 0; i < iterations; i++) {
            Collection<Lease> got = sem.acquire(1, 60_000);
            if (got == null) throw new IllegalStateException("no lease within 60 s");
            Lease lease = got.iterator().next();
            try {
              grants.incrementAndGet();
              int now = bump(counterPath, 1);
              maxSeen.accumulateAndGet(now, Math::max);
              if (now > maxLeases) violations.incrementAndGet();
              Thread.sleep(holdMs); // the critical section: the resource is in use
              bump(counterPath, -1);
            } finally {
              sem.returnLease(lease);
            }
          }
        } catch (Exception e) {
          synchronized (failures) {
            failures.add(e.toString());
          }
        }
      });
      all.add(th);
      th.start();
    }
    for (Thread th : all) {
      try {
        th.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (!failures.isEmpty()) AgentLoop.emit("error " + id + " " + failures.get(0));
    else AgentLoop.emit("stress-done " + id + " " + grants.get() + " " + maxSeen.get() + " " + violations.get());
  }
}
