// Service discovery for CuratorBench (bench/discovery.ts for zk-recipes): curator-x-discovery's
// ServiceDiscovery, ServiceProvider and ServiceCache, built with the builder's defaults (Map
// payloads, JsonInstanceSerializer), as Java shops build them.
package anchors;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;

import static anchors.CuratorBench.*;

@SuppressWarnings({"rawtypes", "unchecked"})
final class CuratorDiscovery {
  private CuratorDiscovery() {}

  static final String SERVICE = "bench";
  static final int INSTANCES = 10;
  static final int LOOKUPS = 500_000;
  static final int BATCH = 1000;

  static ServiceDiscovery<Map> discovery(CuratorFramework c, String base) throws Exception {
    ServiceDiscovery<Map> d = ServiceDiscoveryBuilder.builder(Map.class).client(c).basePath(base).build();
    d.start();
    return d;
  }

  static ServiceInstance<Map> instance(String id) {
    Map<String, Object> payload = new java.util.LinkedHashMap<>();
    payload.put("zone", "a");
    return new ServiceInstance<Map>(SERVICE, id, "10.0.0.1", 8080, null, payload, System.currentTimeMillis(), ServiceType.DYNAMIC, new UriSpec("{scheme}://{address}:{port}"));
  }

  /**
   * 1 session: 10 instances of one service registered, a round-robin ServiceProvider over them
   * (its ServiceCache loaded with all 10), warmed with 50 000 untimed calls. Measured: 500 000
   * getInstance() calls on one thread; p50/p99 are the mean call time of each batch of 1000, in
   * ms. requests_per_op shows that no call reads the server.
   */
  static Map<String, Object> discoveryLookup(Ctx ctx) throws Exception {
    CuratorFramework c = ctx.sessions(1).get(0);
    ServiceDiscovery<Map> d = discovery(c, ctx.root + "/services");
    for (int i = 0; i < INSTANCES; i++) d.registerService(instance("i" + i));
    ServiceProvider<Map> p = d.serviceProviderBuilder().serviceName(SERVICE).providerStrategy(new RoundRobinStrategy<>()).build();
    p.start();
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (p.getAllInstances().size() < INSTANCES) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("the provider did not see " + INSTANCES + " instances within 30 s");
      Thread.sleep(1);
    }
    int sink = 0;
    for (int k = 0; k < 50_000; k++) sink += p.getInstance().getId().length();
    List<Double> times = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    for (int b = 0; b < LOOKUPS / BATCH; b++) {
      long t = System.nanoTime();
      for (int k = 0; k < BATCH; k++) sink += p.getInstance().getId().length();
      times.add(msSince(t) / BATCH);
    }
    double seconds = msSince(start) / 1000;
    Counters after = ctx.counters();
    if (sink == 42) System.err.println("");
    p.close();
    d.close();
    return ctx.result(LOOKUPS, seconds, times, before, after);
  }

  /** Wakes the waiter on each change of the cache. */
  static final class Changes implements ServiceCacheListener {
    @Override
    public synchronized void cacheChanged() {
      notifyAll();
    }

    @Override
    public void stateChanged(CuratorFramework client, ConnectionState newState) {}

    /** Waits (30 s at most) until the cache holds `id` (present) or not. */
    synchronized void await(ServiceCache<Map> cache, String id, boolean present) throws InterruptedException {
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (holds(cache, id) != present) {
        long left = deadline - System.nanoTime();
        if (left <= 0) throw new IllegalStateException("the cache did not see " + id + (present ? " registered" : " unregistered") + " within 30 s");
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    }

    static boolean holds(ServiceCache<Map> cache, String id) {
      for (ServiceInstance<Map> i : cache.getInstances()) if (i.getId().equals(id)) return true;
      return false;
    }
  }

  /**
   * 2 sessions, a ServiceDiscovery on each: a ServiceCache of the service on B; each round A
   * registers a new instance (a new id); 100 rounds. Measured: from A's registerService() until
   * B's cache holds it (its listener wakes the waiter). Its unregisterService() and B's cache
   * losing it are awaited before the next round, untimed. One untimed round first.
   */
  static Map<String, Object> discoveryRegisterVisible(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(2);
    String base = ctx.root + "/services";
    ServiceDiscovery<Map> a = discovery(sessions.get(0), base);
    ServiceDiscovery<Map> b = discovery(sessions.get(1), base);
    ServiceCache<Map> cache = b.serviceCacheBuilder().name(SERVICE).build();
    Changes changes = new Changes();
    cache.addListener(changes);
    cache.start();
    round(a, cache, changes, "warm-up");
    int rounds = 100;
    List<Double> times = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    for (int r = 0; r < rounds; r++) times.add(round(a, cache, changes, "instance-" + r));
    double seconds = msSince(start) / 1000;
    Counters after = ctx.counters();
    cache.close();
    b.close();
    a.close();
    return ctx.result(rounds, seconds, times, before, after);
  }

  private static double round(ServiceDiscovery<Map> a, ServiceCache<Map> cache, Changes changes, String id) throws Exception {
    ServiceInstance<Map> inst = instance(id);
    long t = System.nanoTime();
    a.registerService(inst);
    changes.await(cache, id, true);
    double ms = msSince(t);
    a.unregisterService(inst);
    changes.await(cache, id, false);
    return ms;
  }
}
