// The persistent node's repair time for CuratorBench (bench/nodes.ts for zk-recipes).
package anchors;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;

import static anchors.CuratorBench.*;

final class CuratorNodes {
  private CuratorNodes() {}

  /**
   * 2 sessions: one keeps an ephemeral PersistentNode, the other deletes it, 200 rounds;
   * measured: from the delete's call until the owner's listener reports the node created again.
   * Each round waits for the owner's watch first (as zk-recipes' line).
   */
  static Map<String, Object> persistentNodeRecreate(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(2);
    String path = ctx.root + "/node";
    LinkedBlockingQueue<String> created = new LinkedBlockingQueue<>();
    PersistentNode node = new PersistentNode(sessions.get(0), CreateMode.EPHEMERAL, false, path, "bench".getBytes(StandardCharsets.UTF_8));
    node.getListenable().addListener(created::add);
    node.start();
    if (!node.waitForInitialCreate(30, TimeUnit.SECONDS)) throw new IllegalStateException("the node was not created");
    created.clear();
    org.apache.zookeeper.ZooKeeper zk = sessions.get(0).getZookeeperClient().getZooKeeper();
    java.lang.reflect.Method dataWatches = org.apache.zookeeper.ZooKeeper.class.getDeclaredMethod("getDataWatches");
    dataWatches.setAccessible(true);
    int rounds = 200;
    List<Double> times = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    for (int r = 0; r < rounds; r++) {
      while (!((List<?>) dataWatches.invoke(zk)).contains(path)) Thread.onSpinWait();
      long t = System.nanoTime();
      sessions.get(1).delete().forPath(path);
      if (created.poll(30, TimeUnit.SECONDS) == null) throw new IllegalStateException("the node was not re-created in round " + r);
      times.add(msSince(t));
    }
    double seconds = msSince(start) / 1000;
    Counters after = ctx.counters();
    node.close();
    return ctx.result(rounds, seconds, times, before, after);
  }
}
