// The shared count's notification latency of CuratorBench (bench/shared.ts for zk-recipes).
package anchors;

import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.state.ConnectionState;

import static anchors.CuratorBench.*;

final class CuratorShared {
  private CuratorShared() {}

  /**
   * 2 sessions, a SharedCount each on one path; 200 rounds: the first setCount()s the round's
   * number; measured: from setCount until the second's countHasChanged carries it.
   */
  static Map<String, Object> sharedCountNotify(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(2);
    String path = ctx.root + "/shared-count";
    SharedCount writer = new SharedCount(sessions.get(0), path, 0);
    SharedCount reader = new SharedCount(sessions.get(1), path, 0);
    LinkedBlockingQueue<Integer> changes = new LinkedBlockingQueue<>();
    reader.addListener(new SharedCountListener() {
      @Override
      public void countHasChanged(SharedCountReader r, int n) {
        changes.add(n);
      }

      @Override
      public void stateChanged(CuratorFramework client, ConnectionState state) {}
    });
    writer.start();
    reader.start();
    int rounds = 200;
    List<Double> times = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    try {
      for (int r = 1; r <= rounds; r++) {
        long t = System.nanoTime();
        writer.setCount(r);
        for (;;) {
          Integer n = changes.poll(30, TimeUnit.SECONDS);
          if (n == null) throw new IllegalStateException("no change event for " + r + " within 30 s");
          if (n == r) break;
        }
        times.add(msSince(t));
      }
      double seconds = msSince(start) / 1000;
      Counters after = ctx.counters();
      return ctx.result(rounds, seconds, times, before, after);
    } finally {
      reader.close();
      writer.close();
    }
  }
}
