// The raw floor and the lock recipes of CuratorBench (bench/locks.ts for zk-recipes).
package anchors;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.CreateMode;

import static anchors.CuratorBench.*;

final class CuratorLocks {
  private CuratorLocks() {}

  /** One session: 1000 x (create ephemeral-sequential, delete). The floor of a lock cycle. */
  static Map<String, Object> rawSeq(Ctx ctx) throws Exception {
    CuratorFramework s = ctx.sessions(1).get(0);
    s.create().creatingParentsIfNeeded().forPath(ctx.root);
    int n = 1000;
    List<Double> lat = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      long t = System.nanoTime();
      String p = s.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(ctx.root + "/n-");
      s.delete().forPath(p);
      lat.add(msSince(t));
    }
    double seconds = msSince(start) / 1000;
    return ctx.result(n, seconds, lat, before, ctx.counters());
  }

  /** One session: 2000 creates with up to 100 in flight, then 2000 deletes likewise. */
  static Map<String, Object> rawPipelined(Ctx ctx) throws Exception {
    CuratorFramework s = ctx.sessions(1).get(0);
    s.create().creatingParentsIfNeeded().forPath(ctx.root);
    int n = 2000;
    List<Double> lat = latencies();
    List<String> paths = Collections.synchronizedList(new ArrayList<>());
    AtomicReference<String> error = new AtomicReference<>();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    Semaphore window = new Semaphore(100);
    CountDownLatch created = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      window.acquire();
      long t = System.nanoTime();
      s.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).inBackground((c, e) -> {
        if (e.getResultCode() != 0) error.compareAndSet(null, "create failed: " + e.getResultCode());
        else paths.add(e.getName());
        lat.add(msSince(t));
        window.release();
        created.countDown();
      }).forPath(ctx.root + "/n-");
    }
    created.await();
    CountDownLatch deleted = new CountDownLatch(paths.size());
    for (String p : new ArrayList<>(paths)) {
      window.acquire();
      long t = System.nanoTime();
      s.delete().inBackground((c, e) -> {
        if (e.getResultCode() != 0) error.compareAndSet(null, "delete failed: " + e.getResultCode());
        lat.add(msSince(t));
        window.release();
        deleted.countDown();
      }).forPath(p);
    }
    deleted.await();
    double seconds = msSince(start) / 1000;
    if (error.get() != null) throw new IllegalStateException(error.get());
    return ctx.result(2 * n, seconds, lat, before, ctx.counters());
  }

  /** One session, one mutex: 500 x (acquire, release). */
  static Map<String, Object> mutexUncontended(Ctx ctx) throws Exception {
    CuratorFramework s = ctx.sessions(1).get(0);
    InterProcessMutex m = new InterProcessMutex(s, ctx.root + "/lock");
    m.acquire(); // creates the directory outside the timed part
    m.release();
    int n = 500;
    List<Double> lat = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      long t = System.nanoTime();
      m.acquire();
      m.release();
      lat.add(msSince(t));
    }
    double seconds = msSince(start) / 1000;
    return ctx.result(n, seconds, lat, before, ctx.counters());
  }

  /** 8 sessions, one mutex each on one path, until 800 acquisitions; p50/p99 are waits. */
  static Map<String, Object> mutexContended(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(8);
    String path = ctx.root + "/lock";
    sessions.get(0).create().creatingParentsIfNeeded().forPath(path);
    int total = 800;
    AtomicInteger granted = new AtomicInteger();
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    List<Double> waits = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    runAll(8, i -> {
      InterProcessMutex m = new InterProcessMutex(sessions.get(i), path);
      while (granted.get() < total) {
        long t = System.nanoTime();
        m.acquire();
        waits.add(msSince(t));
        granted.incrementAndGet();
        if (holders.incrementAndGet() != 1) violations.incrementAndGet();
        holders.decrementAndGet();
        m.release();
      }
    });
    double seconds = msSince(start) / 1000;
    Map<String, Object> line = ctx.result(granted.get(), seconds, waits, before, ctx.counters());
    line.put("violations", violations.get());
    return line;
  }

  /** 8 sessions, InterProcessSemaphoreV2 with maxLeases 3, acquire, hold 2 ms, release, until 600 leases. */
  static Map<String, Object> semaphore(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(8);
    String path = ctx.root + "/sem";
    int total = 600;
    AtomicInteger granted = new AtomicInteger();
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger maxConcurrent = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    List<Double> waits = latencies();
    InterProcessSemaphoreV2 first = new InterProcessSemaphoreV2(sessions.get(0), path, 3);
    first.returnLease(first.acquire());
    Counters before = ctx.counters();
    long start = System.nanoTime();
    runAll(8, i -> {
      InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(sessions.get(i), path, 3);
      while (granted.get() < total) {
        long t = System.nanoTime();
        Lease lease = sem.acquire();
        waits.add(msSince(t));
        granted.incrementAndGet();
        int h = holders.incrementAndGet();
        maxConcurrent.accumulateAndGet(h, Math::max);
        if (h > 3) violations.incrementAndGet();
        Thread.sleep(2);
        holders.decrementAndGet();
        sem.returnLease(lease);
      }
    });
    double seconds = msSince(start) / 1000;
    Map<String, Object> line = ctx.result(granted.get(), seconds, waits, before, ctx.counters());
    line.put("max_concurrent", maxConcurrent.get());
    line.put("violations", violations.get());
    return line;
  }

  /** 6 reader and 2 writer sessions on one path, 600 acquisitions in total, each holding 2 ms. */
  static Map<String, Object> rwlock(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(8);
    String path = ctx.root + "/rw";
    sessions.get(0).create().creatingParentsIfNeeded().forPath(path);
    int total = 600;
    AtomicInteger granted = new AtomicInteger();
    int[] state = new int[4]; // readers, writers, max readers, violations; guarded by itself
    List<Double> waits = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    runAll(8, i -> {
      InterProcessReadWriteLock rw = new InterProcessReadWriteLock(sessions.get(i), path);
      boolean writer = i < 2;
      InterProcessMutex lock = writer ? rw.writeLock() : rw.readLock();
      while (granted.get() < total) {
        long t = System.nanoTime();
        lock.acquire();
        waits.add(msSince(t));
        granted.incrementAndGet();
        synchronized (state) {
          if (writer) {
            state[1]++;
            if (state[1] > 1 || state[0] > 0) state[3]++;
          } else {
            state[0]++;
            state[2] = Math.max(state[2], state[0]);
            if (state[1] > 0) state[3]++;
          }
        }
        Thread.sleep(2);
        synchronized (state) {
          state[writer ? 1 : 0]--;
        }
        lock.release();
      }
    });
    double seconds = msSince(start) / 1000;
    Map<String, Object> line = ctx.result(granted.get(), seconds, waits, before, ctx.counters());
    synchronized (state) {
      line.put("max_concurrent_readers", state[2]);
      line.put("violations", state[3]);
    }
    return line;
  }

}
