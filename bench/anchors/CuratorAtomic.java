// Curator's side of bench/atomic.ts: contended DistributedAtomicLong increments.
package anchors;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;

import static anchors.CuratorBench.*;

final class CuratorAtomic {
  private CuratorAtomic() {}

  /**
   * 8 sessions (a thread each) loop increment() on one DistributedAtomicLong until 800
   * increments in all succeeded (BoundedExponentialBackoffRetry(1, 50, 29), optimistic only);
   * measured: one increment call. tries_per_op: optimistic tries per succeeded increment;
   * exhausted: calls that returned succeeded() == false (not counted as ops).
   */
  static Map<String, Object> atomicIncrement(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(8);
    String path = ctx.root + "/atomic";
    int total = 800;
    new DistributedAtomicLong(sessions.get(0), path, new BoundedExponentialBackoffRetry(1, 50, 29)).initialize(0L);
    AtomicInteger acked = new AtomicInteger();
    AtomicLong tries = new AtomicLong();
    AtomicInteger exhausted = new AtomicInteger();
    List<Double> times = latencies();
    List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
    Counters before = ctx.counters();
    long start = System.nanoTime();
    List<Thread> threads = new ArrayList<>();
    for (CuratorFramework s : sessions) {
      DistributedAtomicLong n = new DistributedAtomicLong(s, path, new BoundedExponentialBackoffRetry(1, 50, 29));
      Thread t = new Thread(() -> {
        try {
          while (acked.get() < total) {
            long t0 = System.nanoTime();
            AtomicValue<Long> v = n.increment();
            if (v.succeeded()) {
              times.add(msSince(t0));
              tries.addAndGet(v.getStats().getOptimisticTries());
              acked.incrementAndGet();
            } else exhausted.incrementAndGet();
          }
        } catch (Exception e) {
          errors.add(e);
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) t.join();
    double seconds = msSince(start) / 1000;
    Counters after = ctx.counters();
    if (!errors.isEmpty()) throw new IllegalStateException("an increment failed", errors.get(0));
    long value = new DistributedAtomicLong(sessions.get(0), path, new BoundedExponentialBackoffRetry(1, 50, 29)).get().postValue();
    if (value != acked.get()) throw new IllegalStateException("the number is " + value + " after " + acked.get() + " increments");
    Map<String, Object> line = ctx.result(acked.get(), seconds, times, before, after);
    line.put("tries_per_op", round((double) tries.get() / acked.get(), 2));
    line.put("exhausted", exhausted.get());
    return line;
  }
}
