// The Curator side of scripts/failover-timeline.mjs: bench's leader failover loop (settled rounds,
// as CuratorOthers.leaderFailover) with a mark at each step of a failover, taken by wrapping the
// ZooKeeper client Curator is given. Prints one JSON line: each step's µs from close(), per failover.
package anchors;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

public final class CuratorFailoverTimeline {
  private CuratorFailoverTimeline() {}

  static final String[] STEPS = {"deletion", "notified", "relist", "relisted", "elected"};
  /** The failover being measured: the ns of each step (0: not yet), and who takes part. */
  static volatile long[] marks;
  static volatile int leader = -1;
  static volatile int winner = -1;

  static void mark(int step) {
    long[] m = marks;
    if (m != null && m[step] == 0) m[step] = System.nanoTime();
  }

  /** Curator's ZooKeeper client with marks: deletion handed over, notification and listing seen by the next leader. */
  static final class Timed extends ZooKeeper {
    final int idx;

    Timed(String cs, int timeout, Watcher w, boolean readOnly, int idx) throws java.io.IOException {
      super(cs, timeout, w, readOnly);
      this.idx = idx;
    }

    Watcher timed(Watcher w) {
      if (w == null) return null;
      return ev -> {
        if (ev.getType() == Watcher.Event.EventType.NodeDeleted && idx != leader && marks != null && marks[1] == 0) {
          winner = idx;
          mark(1);
        }
        w.process(ev);
      };
    }

    AsyncCallback.Children2Callback timed(AsyncCallback.Children2Callback cb) {
      return (rc, path, ctx, children, stat) -> {
        if (idx == winner) mark(3);
        cb.processResult(rc, path, ctx, children, stat);
      };
    }

    @Override
    public void getChildren(String path, boolean watch, AsyncCallback.Children2Callback cb, Object ctx) {
      if (idx == winner) mark(2);
      super.getChildren(path, watch, timed(cb), ctx);
    }

    @Override
    public void getChildren(String path, Watcher watcher, AsyncCallback.Children2Callback cb, Object ctx) {
      if (idx == winner) mark(2);
      super.getChildren(path, timed(watcher), timed(cb), ctx);
    }

    /** Watch-setting reads answered: a rejoined participant is placed once its watch on its predecessor is set. */
    final java.util.concurrent.atomic.AtomicInteger watchesSet = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public void getData(String path, Watcher watcher, AsyncCallback.DataCallback cb, Object ctx) {
      super.getData(path, timed(watcher), (rc, p, c, data, stat) -> {
        cb.processResult(rc, p, c, data, stat);
        watchesSet.incrementAndGet();
      }, ctx);
    }

    @Override
    public void delete(String path, int version, AsyncCallback.VoidCallback cb, Object ctx) {
      if (idx == leader) mark(0);
      super.delete(path, version, cb, ctx);
    }
  }

  public static void main(String[] args) throws Exception {
    String cs = args[0];
    int warm = Integer.parseInt(args[1]);
    int measured = Integer.parseInt(args[2]);
    // "placed": each round also waits until the rejoined participant's watch is set (its last step), not only its node created.
    boolean placed = args.length > 3 && args[3].equals("placed");
    List<Timed> zks = new ArrayList<>();
    List<CuratorFramework> clients = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      final int idx = i;
      CuratorFramework c = CuratorFrameworkFactory.builder().connectString(cs).sessionTimeoutMs(10000).retryPolicy(new RetryOneTime(100))
          .zookeeperFactory((s, timeout, w, readOnly) -> new Timed(s, timeout, w, readOnly, idx)).build();
      c.start();
      if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected within 30 s");
      clients.add(c);
      zks.add((Timed) c.getZookeeperClient().getZooKeeper());
    }
    String path = "/failover-timeline/" + Long.toHexString(System.nanoTime()) + "/election";
    LinkedBlockingQueue<Integer> elected = new LinkedBlockingQueue<>();
    LeaderLatch[] latches = new LeaderLatch[5];
    for (int i = 0; i < 5; i++) latches[i] = join(clients.get(i), path, i, elected);
    if (elected.poll(30, TimeUnit.SECONDS) == null) throw new IllegalStateException("no first leader within 30 s");
    List<long[]> rows = new ArrayList<>();
    int rejoined = -1;
    int watchesBefore = 0;
    for (int r = 0; r < warm + measured; r++) {
      if (rejoined >= 0) CuratorOthers.awaitEntered(latches[rejoined]);
      if (rejoined >= 0 && placed) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (zks.get(rejoined).watchesSet.get() == watchesBefore) {
          if (System.nanoTime() > deadline) throw new IllegalStateException("a rejoined participant set no watch within 30 s");
          LockSupport.parkNanos(20_000);
        }
      }
      int i = -1;
      for (int j = 0; j < 5; j++) if (latches[j].hasLeadership()) i = j;
      if (i < 0) throw new IllegalStateException("no latch has leadership in round " + r);
      leader = i;
      winner = -1;
      long[] m = new long[STEPS.length + 1];
      if (r >= warm) marks = m;
      m[STEPS.length] = System.nanoTime();
      latches[i].close(LeaderLatch.CloseMode.SILENT);
      if (elected.poll(30, TimeUnit.SECONDS) == null) throw new IllegalStateException("no next leader within 30 s");
      marks = null;
      if (r >= warm) rows.add(m);
      watchesBefore = zks.get(i).watchesSet.get();
      latches[i] = join(clients.get(i), path, i, elected);
      rejoined = i;
    }
    Map<String, List<Double>> out = new LinkedHashMap<>();
    for (int k = 0; k < STEPS.length; k++) {
      List<Double> xs = new ArrayList<>();
      for (long[] m : rows) xs.add(m[k] == 0 ? null : Math.round((m[k] - m[STEPS.length]) / 100.0) / 10.0);
      out.put(STEPS[k], xs);
    }
    StringBuilder json = new StringBuilder("{");
    for (Map.Entry<String, List<Double>> e : out.entrySet()) {
      if (json.length() > 1) json.append(',');
      json.append('"').append(e.getKey()).append("\":").append(e.getValue().toString().replace(" ", ""));
    }
    System.out.println(json.append('}'));
    for (LeaderLatch l : latches) l.close(LeaderLatch.CloseMode.SILENT);
    for (CuratorFramework c : clients) c.close();
    System.exit(0);
  }

  static LeaderLatch join(CuratorFramework c, String path, int i, LinkedBlockingQueue<Integer> elected) throws Exception {
    LeaderLatch latch = new LeaderLatch(c, path, "p" + i);
    latch.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        mark(4);
        elected.add(i);
      }

      @Override
      public void notLeader() {}
    });
    latch.start();
    return latch;
  }
}
