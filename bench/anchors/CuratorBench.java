// Apache Curator 5.4 running the workloads of ../shared/bench/WORKLOADS.md with the semantics of
// bench/locks.ts and bench/others.ts: one JSON line per workload on stdout (impl "curator"),
// progress on stderr. Workloads in CuratorLocks.java and CuratorOthers.java, the rest here.
// scripts/bench-compare.mjs compiles and runs it; by hand, with CP the
// classpath of Debian's curator-{recipes,framework,client,x-discovery}, guava, jackson-{databind,core,annotations}, zookeeper, zookeeper-jute,
// slf4j-api and slf4j-simple jars:
//   javac -d /tmp/cb -cp "$CP" bench/anchors/*.java
//   java -cp "/tmp/cb:$CP" anchors.CuratorBench --connect HOST:PORT [--only w1,w2] [--runs N] [--warmup N]
// Recipes: InterProcessMutex, InterProcessSemaphoreV2, InterProcessReadWriteLock, LeaderLatch,
// SimpleDistributedQueue (queue: take() one item at a time, like our take()),
// DistributedQueue with lockPath (queue_at_least_once: Curator's only at-least-once queue),
// CuratorCache (the cache_* workloads, in CuratorCaches.java) and curator-x-discovery (the
// discovery_* workloads, in CuratorDiscovery.java).
package anchors;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorBench {
  private CuratorBench() {}

  interface Workload {
    Map<String, Object> run(Ctx ctx) throws Exception;
  }

  /** Server counters at one instant (from mntr), or null when the server does not answer. */
  record Counters(double packets, double watchFires) {}

  static final String[] WATCH_SUMS = {"zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count", "zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count"};
  static final long LIMIT_MS = 120_000;

  public static void main(String[] args) throws Exception {
    String connect = System.getenv("ZK_CONNECT");
    List<String> only = null;
    int runs = 1;
    int warmup = 0;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--connect" -> connect = args[++i];
        case "--only" -> only = List.of(args[++i].split("\\s*,\\s*"));
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--warmup" -> warmup = Integer.parseInt(args[++i]);
        default -> fail("unknown argument " + args[i] + "; usage: --connect HOST:PORT [--only w1,w2] [--runs N] [--warmup N]");
      }
    }
    if (connect == null || connect.isEmpty()) fail("--connect HOST:PORT is required (or ZK_CONNECT)");
    if (runs < 1) fail("--runs must be a positive integer");
    if (warmup < 0) fail("--warmup must be a non-negative integer");
    Map<String, Workload> all = new LinkedHashMap<>();
    all.put("raw_seq", CuratorLocks::rawSeq);
    all.put("raw_pipelined", CuratorLocks::rawPipelined);
    all.put("mutex_uncontended", CuratorLocks::mutexUncontended);
    all.put("mutex_contended", CuratorLocks::mutexContended);
    all.put("semaphore", CuratorLocks::semaphore);
    all.put("rwlock", CuratorLocks::rwlock);
    all.put("leader_failover", CuratorOthers::leaderFailover);
    all.put("barrier_round_trip", CuratorOthers::barrierRoundTrip);
    all.put("multilock_cycle", CuratorOthers::multilockCycles);
    all.put("shared_count_notify", CuratorShared::sharedCountNotify);
    all.put("persistent_node_recreate", CuratorNodes::persistentNodeRecreate);
    all.put("atomic_increment", CuratorAtomic::atomicIncrement);
    all.put("group_join_visible", CuratorGroup::groupJoinVisible);
    all.put("discovery_lookup", CuratorDiscovery::discoveryLookup);
    all.put("discovery_register_visible", CuratorDiscovery::discoveryRegisterVisible);
    all.put("queue", CuratorOthers::queue);
    all.put("queue_at_least_once", CuratorOthers::queueAtLeastOnce);
    all.put("cache_load", CuratorCaches::cacheLoad);
    all.put("cache_latency", CuratorCaches::cacheLatency);
    all.put("cache_events", CuratorCaches::cacheEvents);
    List<String> selected = new ArrayList<>();
    for (String name : all.keySet()) if (only == null || only.contains(name)) selected.add(name);
    // Names of zk-recipes' own extras pass through bench-compare: skip them, loudly.
    for (String name : only == null ? List.<String>of() : only) {
      if (!all.containsKey(name) && !name.isEmpty()) System.err.println("curator: no workload \"" + name + "\" here (known: " + String.join(", ", all.keySet()) + "); skipped");
    }
    String[] hostPort = connect.split(",")[0].split("/")[0].split(":");
    String host = hostPort[0];
    int port = hostPort.length > 1 ? Integer.parseInt(hostPort[1]) : 2181;
    boolean failed = false;
    ExecutorService runner = Executors.newCachedThreadPool();
    // Warm-up runs come first and print no line: the JIT and the server warm before anything is measured.
    for (int r = -warmup; r < runs; r++) {
      Double rawSeqRate = null;
      for (String name : selected) {
        System.err.println(r < 0 ? "[curator warmup " + (r + warmup + 1) + "/" + warmup + "] " + name + "..." : "[curator run " + (r + 1) + "/" + runs + "] " + name + "...");
        Ctx ctx = new Ctx(connect, name, host, port);
        Future<Map<String, Object>> f = runner.submit(() -> all.get(name).run(ctx));
        try {
          // A workload that does not finish is a failure to report, not a reason to hang.
          Map<String, Object> line = f.get(LIMIT_MS, TimeUnit.MILLISECONDS);
          double rate = ((Number) line.get("ops_per_s")).doubleValue();
          if (name.equals("raw_seq")) rawSeqRate = rate;
          else if (rawSeqRate != null && !name.equals("raw_pipelined") && !name.equals("leader_failover") && !name.startsWith("cache_") && !name.equals("discovery_lookup")) line.put("ratio_to_raw_seq", round(rate / rawSeqRate, 2));
          if (r >= 0) {
            System.out.println(json(line));
            System.out.flush();
          }
        } catch (TimeoutException e) {
          failed = true;
          System.err.println(name + " failed: did not finish within " + LIMIT_MS / 1000 + " s");
        } catch (Exception e) {
          failed = true;
          System.err.println(name + " failed: " + (e.getCause() != null ? e.getCause() : e));
        } finally {
          f.cancel(true);
          ctx.cleanup();
        }
      }
    }
    runner.shutdownNow();
    System.exit(failed ? 1 : 0);
  }


  static void fail(String message) {
    System.err.println("curator bench: " + message);
    System.exit(2);
  }

  /** Shared state of one workload run: sessions closed afterwards and a fresh root path. */
  static final class Ctx {
    final String connect;
    final String workload;
    final String root;
    final String host;
    final int port;
    final List<CuratorFramework> clients = Collections.synchronizedList(new ArrayList<>());

    Ctx(String connect, String workload, String host, int port) {
      this.connect = connect;
      this.workload = workload;
      this.host = host;
      this.port = port;
      byte[] b = new byte[4];
      new SecureRandom().nextBytes(b);
      this.root = "/bench/curator/" + workload + "/" + String.format("%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
    }

    /** Opens n sessions (10 s session timeout, as WORKLOADS.md says). */
    List<CuratorFramework> sessions(int n) throws InterruptedException {
      List<CuratorFramework> made = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        CuratorFramework c = CuratorFrameworkFactory.newClient(connect, 10_000, 10_000, new ExponentialBackoffRetry(100, 5));
        clients.add(c);
        made.add(c);
        c.start();
      }
      for (CuratorFramework c : made) if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("could not connect to " + connect);
      return made;
    }

    Counters counters() {
      return serverCounters(host, port);
    }

    Map<String, Object> result(int ops, double seconds, List<Double> latenciesMs, Counters before, Counters after) {
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("impl", "curator");
      line.put("workload", workload);
      line.put("ops", ops);
      line.put("seconds", round(seconds, 3));
      line.put("ops_per_s", round(ops / seconds, 1));
      line.put("p50_ms", round(percentile(latenciesMs, 50), 3));
      line.put("p99_ms", round(percentile(latenciesMs, 99), 3));
      if (before != null && after != null) {
        line.put("requests_per_op", round((after.packets() - before.packets()) / ops, 2));
        line.put("watch_fires_per_op", round((after.watchFires() - before.watchFires()) / ops, 2));
      }
      return line;
    }

    /** Removes the root path and closes the sessions. */
    void cleanup() {
      if (!clients.isEmpty()) {
        try {
          clients.get(0).delete().deletingChildrenIfNeeded().forPath(root);
        } catch (Exception ignored) {
          // best effort, as bench/context.ts
        }
      }
      for (CuratorFramework c : clients) c.close();
    }
  }

  static Counters serverCounters(String host, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 3000);
      s.setSoTimeout(3000);
      OutputStream out = s.getOutputStream();
      out.write("mntr".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      Map<String, String> m = new LinkedHashMap<>();
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        String[] kv = line.split("\t", 2);
        if (kv.length == 2) m.put(kv[0].trim(), kv[1].trim());
      }
      if (!m.containsKey("zk_packets_received")) return null;
      double fires = 0;
      for (String k : WATCH_SUMS) if (m.containsKey(k)) fires += Double.parseDouble(m.get(k));
      return new Counters(Double.parseDouble(m.get("zk_packets_received")), fires);
    } catch (IOException | NumberFormatException e) {
      return null;
    }
  }

  /** p-th percentile (0..100), as bench/metrics.ts computes it. */
  static double percentile(List<Double> values, double p) {
    if (values.isEmpty()) return 0;
    List<Double> sorted;
    synchronized (values) {
      sorted = new ArrayList<>(values);
    }
    Collections.sort(sorted);
    int i = (int) Math.min(sorted.size() - 1, Math.max(0, Math.ceil(p / 100 * sorted.size()) - 1));
    return sorted.get(i);
  }

  static BigDecimal round(double v, int digits) {
    return BigDecimal.valueOf(v).setScale(digits, RoundingMode.HALF_UP).stripTrailingZeros();
  }

  static String json(Map<String, Object> line) {
    StringBuilder b = new StringBuilder("{");
    for (Map.Entry<String, Object> e : line.entrySet()) {
      if (b.length() > 1) b.append(',');
      b.append('"').append(e.getKey()).append("\":");
      Object v = e.getValue();
      if (v instanceof BigDecimal d) b.append(d.toPlainString());
      else if (v instanceof Number) b.append(v);
      else if (v instanceof List<?> l) b.append('[').append(String.join(",", l.stream().map((x) -> x instanceof BigDecimal d ? d.toPlainString() : String.valueOf(x)).toList())).append(']');
      else b.append('"').append(v.toString().replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    }
    return b.append('}').toString();
  }

  static double msSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e6;
  }

  static List<Double> latencies() {
    return Collections.synchronizedList(new ArrayList<>());
  }

  interface Participant {
    void run(int i) throws Exception;
  }

  /** Runs n participants on their own threads and waits for all; the first failure is thrown. */
  static void runAll(int n, Participant p) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      List<Future<Object>> fs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int id = i;
        fs.add(pool.submit(() -> {
          p.run(id);
          return null;
        }));
      }
      for (Future<Object> f : fs) f.get();
    } finally {
      pool.shutdownNow();
    }
  }
}
