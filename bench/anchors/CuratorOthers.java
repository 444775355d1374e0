// Leader failover and the queues of CuratorBench (bench/others.ts for zk-recipes).
package anchors;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.state.ConnectionState;

import static anchors.CuratorBench.*;

final class CuratorOthers {
  private CuratorOthers() {}

  /**
   * 5 LeaderLatch participants on one path; 20 times the leader steps down (closes its latch)
   * and rejoins at the back once the next leader is told (isLeader); measured: close to isLeader.
   * A round starts once the last round's rejoined participant has entered (its node created).
   */
  static Map<String, Object> leaderFailover(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(5);
    String path = ctx.root + "/election";
    AtomicInteger leaders = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    Set<Integer> seen = ConcurrentHashMap.newKeySet();
    LinkedBlockingQueue<Integer> elected = new LinkedBlockingQueue<>();
    LeaderLatch[] latches = new LeaderLatch[5];
    for (int i = 0; i < 5; i++) latches[i] = join(sessions.get(i), path, i, leaders, violations, seen, elected);
    if (elected.poll(30, TimeUnit.SECONDS) == null) throw new IllegalStateException("no first leader within 30 s");
    int rounds = 20;
    List<Double> times = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    int rejoined = -1;
    for (int r = 0; r < rounds; r++) {
      // The last round's rejoin entered first (its node created), as in bench/others.ts.
      if (rejoined >= 0) awaitEntered(latches[rejoined]);
      int i = -1;
      for (int j = 0; j < 5; j++) if (latches[j].hasLeadership()) i = j;
      if (i < 0) throw new IllegalStateException("no latch has leadership in round " + r);
      long t = System.nanoTime();
      // Stepping down starts here: the caller stops acting as leader, then closes. (Curator's
      // close deletes the node before its own notLeader, which SILENT mode skips.)
      leaders.decrementAndGet();
      latches[i].close(LeaderLatch.CloseMode.SILENT);
      if (elected.poll(30, TimeUnit.SECONDS) == null) throw new IllegalStateException("no next leader within 30 s");
      times.add(msSince(t));
      latches[i] = join(sessions.get(i), path, i, leaders, violations, seen, elected);
      rejoined = i;
    }
    double seconds = msSince(start) / 1000;
    Counters after = ctx.counters();
    for (LeaderLatch l : latches) l.close(LeaderLatch.CloseMode.SILENT);
    Map<String, Object> line = ctx.result(rounds, seconds, times, before, after);
    line.put("leaders_seen", seen.size());
    // Each failover's time too: bench:compare pools the runs of a round (20 samples make a poor p99).
    line.put("latencies_ms", times.stream().map(t -> round(t, 3)).toList());
    line.put("violations", violations.get());
    return line;
  }

  /** Waits until `latch` has created its node (Curator tells no event for it: its path is polled in memory). */
  static void awaitEntered(LeaderLatch latch) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (latch.getOurPath() == null) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("a rejoined participant did not enter within 30 s");
      LockSupport.parkNanos(20_000);
    }
  }

  static LeaderLatch join(CuratorFramework s, String path, int i, AtomicInteger leaders, AtomicInteger violations, Set<Integer> seen, LinkedBlockingQueue<Integer> elected) throws Exception {
    LeaderLatch latch = new LeaderLatch(s, path, "p" + i);
    latch.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        if (leaders.incrementAndGet() > 1) violations.incrementAndGet();
        seen.add(i);
        elected.add(i);
      }

      @Override
      public void notLeader() {
        leaders.decrementAndGet();
      }
    });
    latch.start();
    return latch;
  }

  /** What the queue workloads share: delivery counts, latencies from put, the end signal. */
  static final class Deliveries {
    final int n;
    final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
    final Map<String, Long> putAt = new ConcurrentHashMap<>();
    final List<Double> lat = latencies();
    final AtomicInteger received = new AtomicInteger();
    final AtomicInteger[] taken = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
    final CountDownLatch allIn = new CountDownLatch(1);

    Deliveries(int n) {
      this.n = n;
    }

    void record(String key, int consumer) {
      taken[consumer].incrementAndGet();
      counts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      Long t = putAt.get(key);
      if (t != null) lat.add(msSince(t));
      if (received.incrementAndGet() >= n) allIn.countDown();
    }

    void awaitAll() throws InterruptedException {
      if (!allIn.await(LIMIT_MS, TimeUnit.MILLISECONDS)) throw new IllegalStateException("only " + received.get() + " of " + n + " items arrived");
    }

    Map<String, Object> finish(Map<String, Object> line) {
      int lost = 0;
      int duplicated = 0;
      for (int i = 0; i < n; i++) {
        AtomicInteger c = counts.get("item-" + i);
        int k = c == null ? 0 : c.get();
        if (k == 0) lost++;
        if (k > 1) duplicated += k - 1;
      }
      line.put("lost", lost);
      line.put("duplicated", duplicated);
      // Not in WORKLOADS.md: how evenly the consumers shared the items (1.0: one took all).
      int most = 0;
      for (AtomicInteger t : taken) most = Math.max(most, t.get());
      line.put("max_consumer_share", round((double) most / received.get(), 2));
      return line;
    }
  }

  /** 1 producer offers 2000 small items, 4 consumer sessions take() them (SimpleDistributedQueue). */
  static Map<String, Object> queue(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(5);
    String path = ctx.root + "/queue";
    Deliveries d = new Deliveries(2000);
    SimpleDistributedQueue producer = new SimpleDistributedQueue(sessions.get(0), path);
    producer.offer("warm-up".getBytes(StandardCharsets.UTF_8));
    new SimpleDistributedQueue(sessions.get(0), path).take();
    List<SimpleDistributedQueue> consumers = new ArrayList<>();
    for (int i = 1; i < 5; i++) consumers.add(new SimpleDistributedQueue(sessions.get(i), path));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<Object>> running = new ArrayList<>();
    AtomicInteger stop = new AtomicInteger();
    try {
      Counters before = ctx.counters();
      long start = System.nanoTime();
      for (int c = 0; c < consumers.size(); c++) {
        SimpleDistributedQueue q = consumers.get(c);
        int id = c;
        running.add(pool.submit(() -> {
          while (stop.get() == 0) {
            try {
              d.record(new String(q.take(), StandardCharsets.UTF_8), id);
            } catch (Exception e) {
              if (stop.get() != 0) return null; // interrupted at the end
              throw e;
            }
          }
          return null;
        }));
      }
      for (int i = 0; i < d.n; i++) {
        String key = "item-" + i;
        d.putAt.put(key, System.nanoTime());
        producer.offer(key.getBytes(StandardCharsets.UTF_8));
      }
      d.awaitAll();
      double seconds = msSince(start) / 1000;
      Counters after = ctx.counters();
      stop.set(1);
      pool.shutdownNow(); // take() waits on a latch: interrupting it is how it stops
      for (Future<Object> f : running) f.get();
      return d.finish(ctx.result(d.n, seconds, d.lat, before, after));
    } finally {
      stop.set(1);
      pool.shutdownNow();
    }
  }

  /**
   * queue_at_least_once: Curator's DistributedQueue with a lockPath (an item is deleted only
   * after consumeMessage returns). Puts are synchronous (putInBackground false) like our awaited put.
   */
  static Map<String, Object> queueAtLeastOnce(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(5);
    String path = ctx.root + "/queue";
    String lockPath = ctx.root + "/queue-locks";
    Deliveries d = new Deliveries(2000);
    QueueSerializer<String> utf8 = new QueueSerializer<>() {
      @Override
      public byte[] serialize(String item) {
        return item.getBytes(StandardCharsets.UTF_8);
      }

      @Override
      public String deserialize(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
      }
    };
    CountDownLatch warmedUp = new CountDownLatch(1);
    DistributedQueue<String> producer = QueueBuilder.builder(sessions.get(0), null, utf8, path).putInBackground(false).buildQueue();
    List<DistributedQueue<String>> consumers = new ArrayList<>();
    try {
      producer.start();
      for (int i = 1; i < 5; i++) {
        int id = i - 1;
        QueueConsumer<String> consumer = new QueueConsumer<>() {
          @Override
          public void consumeMessage(String item) {
            if (item.equals("warm-up")) warmedUp.countDown();
            else d.record(item, id);
          }

          @Override
          public void stateChanged(CuratorFramework client, ConnectionState state) {}
        };
        DistributedQueue<String> q = QueueBuilder.builder(sessions.get(i), consumer, utf8, path).lockPath(lockPath).buildQueue();
        consumers.add(q);
        q.start();
      }
      // The consumers' threads and watches are set up outside the timed part.
      producer.put("warm-up");
      if (!warmedUp.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("the warm-up item was not consumed within 30 s");
      Counters before = ctx.counters();
      long start = System.nanoTime();
      for (int i = 0; i < d.n; i++) {
        String key = "item-" + i;
        d.putAt.put(key, System.nanoTime());
        producer.put(key);
      }
      d.awaitAll();
      double seconds = msSince(start) / 1000;
      Counters after = ctx.counters();
      return d.finish(ctx.result(d.n, seconds, d.lat, before, after));
    } finally {
      for (DistributedQueue<String> q : consumers) q.close();
      producer.close();
    }
  }

  /**
   * 2 sessions: one sets a DistributedBarrier, the other waits at it (waitOnBarrier on a thread),
   * the first removes it once the waiter's watch is set; 200 rounds; measured: set until released
   * (bench/barrier.ts for zk-recipes).
   */
  static Map<String, Object> barrierRoundTrip(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(2);
    String path = ctx.root + "/barrier";
    DistributedBarrier setter = new DistributedBarrier(sessions.get(0), path);
    DistributedBarrier waiter = new DistributedBarrier(sessions.get(1), path);
    org.apache.zookeeper.ZooKeeper zk = sessions.get(1).getZookeeperClient().getZooKeeper();
    java.lang.reflect.Method dataWatches = org.apache.zookeeper.ZooKeeper.class.getDeclaredMethod("getDataWatches");
    dataWatches.setAccessible(true);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    int rounds = 200;
    List<Double> times = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    for (int r = 0; r < rounds; r++) {
      long t = System.nanoTime();
      setter.setBarrier();
      Future<Boolean> released = pool.submit(() -> waiter.waitOnBarrier(30, TimeUnit.SECONDS));
      // As zk-recipes' line: the waiter's watch is set before the removal.
      while (!((List<?>) dataWatches.invoke(zk)).contains(path)) Thread.onSpinWait();
      setter.removeBarrier();
      if (!released.get(30, TimeUnit.SECONDS)) throw new IllegalStateException("the waiter was not released in round " + r);
      times.add(msSince(t));
    }
    double seconds = msSince(start) / 1000;
    Counters after = ctx.counters();
    pool.shutdownNow();
    return ctx.result(rounds, seconds, times, before, after);
  }

  /** 1 session, an InterProcessMultiLock over 3 mutexes; 200 acquire/release cycles (bench/barrier.ts). */
  static Map<String, Object> multilockCycles(Ctx ctx) throws Exception {
    CuratorFramework s = ctx.sessions(1).get(0);
    List<String> paths = List.of(ctx.root + "/multi-0", ctx.root + "/multi-1", ctx.root + "/multi-2");
    InterProcessMultiLock lock = new InterProcessMultiLock(s, paths);
    int rounds = 200;
    List<Double> times = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    for (int r = 0; r < rounds; r++) {
      long t = System.nanoTime();
      if (!lock.acquire(30, TimeUnit.SECONDS)) throw new IllegalStateException("multi-lock not acquired in round " + r);
      lock.release();
      times.add(msSince(t));
    }
    double seconds = msSince(start) / 1000;
    Counters after = ctx.counters();
    return ctx.result(rounds, seconds, times, before, after);
  }
}
