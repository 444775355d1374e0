// The cache workloads of CuratorBench (bench/caches.ts for zk-recipes) with Curator 5.4's
// CuratorCache (one recursive persistent watch on the root; a getData per changed node).
package anchors;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;

import static anchors.CuratorBench.*;

final class CuratorCaches {
  private CuratorCaches() {}

  /** CPU time of this process (every thread, user + system) in ms. */
  static double cpuMs() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e6;
  }

  /** 32 bytes of data naming `tag` (as bench/caches.ts's data()). */
  static byte[] data(String tag) {
    StringBuilder b = new StringBuilder(tag);
    while (b.length() < 32) b.append('.');
    return b.substring(0, 32).getBytes(StandardCharsets.US_ASCII);
  }

  static String name(int i, int width) {
    return String.format("n%0" + width + "d", i);
  }

  /** `root` (created with its parents) and `fanout` children, each with `fanout2` children; one transaction per child. */
  static int buildTree(CuratorFramework s, String root, int fanout, int fanout2) throws Exception {
    s.create().creatingParentsIfNeeded().forPath(root, data("root"));
    int nodes = 1;
    List<CuratorOp> ops = new ArrayList<>();
    for (int i = 0; i < fanout; i++) {
      String child = root + "/" + name(i, 3);
      ops.add(s.transactionOp().create().forPath(child, data(child)));
      for (int j = 0; j < fanout2; j++) ops.add(s.transactionOp().create().forPath(child + "/" + name(j, 3), data(child + j)));
      if (ops.size() >= 100 || i == fanout - 1) {
        s.transaction().forOperations(ops);
        nodes += ops.size();
        ops.clear();
      }
    }
    return nodes;
  }

  /** Removes what buildTree made below `root` (leaves and their parent in one transaction). */
  static void dropTree(CuratorFramework s, String root) throws Exception {
    List<CuratorOp> ops = new ArrayList<>();
    List<String> children = s.getChildren().forPath(root);
    for (int i = 0; i < children.size(); i++) {
      String child = root + "/" + children.get(i);
      for (String leaf : s.getChildren().forPath(child)) ops.add(s.transactionOp().delete().forPath(child + "/" + leaf));
      ops.add(s.transactionOp().delete().forPath(child));
      if (ops.size() >= 100 || i == children.size() - 1) {
        s.transaction().forOperations(ops);
        ops.clear();
      }
    }
  }

  /** cache_load: 3 times a new CuratorCache on a 10 101-node tree (100 x 100, 32 bytes each), start() to initialized. */
  static Map<String, Object> cacheLoad(Ctx ctx) throws Exception {
    CuratorFramework s = ctx.sessions(1).get(0);
    String tree = ctx.root + "/tree";
    int nodes = buildTree(s, tree, 100, 100);
    try {
      int loads = 3;
      int missing = 0;
      double seconds = 0;
      double packets = 0;
      double fires = 0;
      boolean counted = true;
      double cpu = 0;
      List<Double> times = latencies();
      for (int l = 0; l < loads; l++) {
        CuratorCache cache = CuratorCache.build(s, tree);
        CountDownLatch init = new CountDownLatch(1);
        cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(init::countDown).build());
        Counters before = ctx.counters();
        double c = cpuMs();
        long t = System.nanoTime();
        cache.start();
        if (!init.await(LIMIT_MS, TimeUnit.MILLISECONDS)) throw new IllegalStateException("not initialized within " + LIMIT_MS + " ms");
        double ms = msSince(t);
        cpu += cpuMs() - c;
        Counters after = ctx.counters();
        times.add(ms);
        seconds += ms / 1000;
        if (before != null && after != null) {
          packets += after.packets() - before.packets();
          fires += after.watchFires() - before.watchFires();
        } else {
          counted = false;
        }
        missing += Math.max(0, nodes - cache.size());
        cache.close();
      }
      Map<String, Object> line = ctx.result(nodes * loads, seconds, times, null, null);
      if (counted) {
        line.put("requests_per_op", round(packets / (nodes * loads), 2));
        line.put("watch_fires_per_op", round(fires / (nodes * loads), 2));
      }
      line.put("nodes", nodes);
      line.put("lost", missing);
      line.put("client_cpu_ms_per_1k", round(cpu / (nodes * loads) * 1000, 1));
      return line;
    } finally {
      dropTree(s, tree);
    }
  }

  /**
   * cache_latency: a CuratorCache on 100 children (32 bytes each); another session sets the
   * children's data in turn, 500 times, each after the last change arrived; measured: from the
   * setData call to the cache's change event.
   */
  static Map<String, Object> cacheLatency(Ctx ctx) throws Exception {
    List<CuratorFramework> ss = ctx.sessions(2);
    CuratorFramework reader = ss.get(0);
    CuratorFramework writer = ss.get(1);
    String tree = ctx.root + "/tree";
    buildTree(writer, tree, 100, 0);
    AtomicReference<String> expected = new AtomicReference<>("");
    AtomicReference<CountDownLatch> arrived = new AtomicReference<>(new CountDownLatch(1));
    AtomicInteger duplicated = new AtomicInteger();
    long[] at = new long[1];
    Map<String, Boolean> seen = new ConcurrentHashMap<>();
    CountDownLatch init = new CountDownLatch(1);
    CuratorCache cache = CuratorCache.build(reader, tree);
    cache.listenable().addListener(CuratorCacheListener.builder().forChanges((old, node) -> {
      long now = System.nanoTime();
      String key = node.getPath() + " " + new String(node.getData(), StandardCharsets.US_ASCII);
      if (seen.put(key, true) != null) duplicated.incrementAndGet();
      if (key.equals(expected.get())) {
        at[0] = now;
        arrived.get().countDown();
      }
    }).forInitialized(init::countDown).build());
    cache.start();
    try {
      if (!init.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("not initialized within 30 s");
      int n = 500;
      int lost = 0;
      List<Double> lat = latencies();
      Counters before = ctx.counters();
      long start = System.nanoTime();
      for (int i = 0; i < n; i++) {
        String path = tree + "/" + name(i % 100, 3);
        byte[] value = data("v" + i);
        CountDownLatch latch = new CountDownLatch(1);
        arrived.set(latch);
        expected.set(path + " " + new String(value, StandardCharsets.US_ASCII));
        long t = System.nanoTime();
        writer.setData().forPath(path, value);
        if (!latch.await(5, TimeUnit.SECONDS)) lost++;
        else lat.add((at[0] - t) / 1e6);
      }
      double seconds = msSince(start) / 1000;
      Counters after = ctx.counters();
      Map<String, Object> line = ctx.result(n, seconds, lat, before, after);
      line.put("lost", lost);
      line.put("duplicated", duplicated.get());
      return line;
    } finally {
      cache.close();
    }
  }

  /**
   * cache_events: a CuratorCache on 1000 children; 5 bursts in which another session sets all
   * 1000 with up to 100 setData in flight; measured: change events per second, from the first
   * setData of a burst to the last event of it (latencies: each set to its event).
   */
  static Map<String, Object> cacheEvents(Ctx ctx) throws Exception {
    List<CuratorFramework> ss = ctx.sessions(2);
    CuratorFramework reader = ss.get(0);
    CuratorFramework writer = ss.get(1);
    String tree = ctx.root + "/tree";
    int n = 1000;
    buildTree(writer, tree, n, 0);
    AtomicReference<String> burstTag = new AtomicReference<>("");
    AtomicReference<CountDownLatch> allIn = new AtomicReference<>(new CountDownLatch(n));
    AtomicInteger duplicated = new AtomicInteger();
    AtomicInteger received = new AtomicInteger();
    long[] sentAt = new long[n];
    long[] eventAt = new long[n];
    boolean[] got = new boolean[n];
    CountDownLatch init = new CountDownLatch(1);
    CuratorCache cache = CuratorCache.build(reader, tree);
    int prefix = tree.length() + 2; // "/n"
    cache.listenable().addListener(CuratorCacheListener.builder().forChanges((old, node) -> {
      long now = System.nanoTime();
      String value = new String(node.getData(), StandardCharsets.US_ASCII);
      if (!value.startsWith(burstTag.get())) return;
      int i = Integer.parseInt(node.getPath().substring(prefix));
      synchronized (got) {
        if (got[i]) {
          duplicated.incrementAndGet();
          return;
        }
        got[i] = true;
        eventAt[i] = now;
      }
      received.incrementAndGet();
      allIn.get().countDown();
    }).forInitialized(init::countDown).build());
    cache.start();
    try {
      if (!init.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("not initialized within 30 s");
      int bursts = 5;
      int lost = 0;
      double seconds = 0;
      List<Double> lat = latencies();
      AtomicReference<String> error = new AtomicReference<>();
      double cpu = 0;
      Counters before = ctx.counters();
      for (int b = 0; b < bursts; b++) {
        synchronized (got) {
          java.util.Arrays.fill(got, false);
        }
        CountDownLatch latch = new CountDownLatch(n);
        allIn.set(latch);
        String tag = "b" + b + "-";
        burstTag.set(tag);
        Semaphore window = new Semaphore(100);
        double cpuAt = cpuMs();
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
          window.acquire();
          sentAt[i] = System.nanoTime();
          writer.setData().inBackground((c, e) -> {
            if (e.getResultCode() != 0) error.compareAndSet(null, "setData failed: " + e.getResultCode());
            window.release();
          }).forPath(tree + "/" + name(i, 3), data(tag + i));
        }
        boolean all = latch.await(10, TimeUnit.SECONDS);
        window.acquire(100); // every setData answered
        window.release(100);
        cpu += cpuMs() - cpuAt;
        long last = start;
        synchronized (got) {
          for (int i = 0; i < n; i++) {
            if (!got[i]) {
              lost++;
              continue;
            }
            last = Math.max(last, eventAt[i]);
            lat.add((eventAt[i] - sentAt[i]) / 1e6);
          }
        }
        if (error.get() != null) throw new IllegalStateException(error.get());
        seconds += (all ? last - start : System.nanoTime() - start) / 1e9;
      }
      Counters after = ctx.counters();
      Map<String, Object> line = ctx.result(n * bursts, seconds, lat, before, after);
      line.put("lost", lost);
      line.put("duplicated", duplicated.get());
      line.put("client_cpu_ms_per_1k", round(cpu / (n * bursts) * 1000, 1));
      return line;
    } finally {
      cache.close();
    }
  }
}
