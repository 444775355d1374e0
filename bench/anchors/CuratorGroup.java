// Group membership for CuratorBench (bench/group.ts for zk-recipes): Curator's GroupMember.
package anchors;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.GroupMember;

import static anchors.CuratorBench.*;

final class CuratorGroup {
  private CuratorGroup() {}

  /**
   * 2 sessions: an observer GroupMember on the first; each round a new GroupMember (a new id)
   * starts on the second, and then closes; 100 rounds. Measured: from the new member's start()
   * until the observer's getCurrentMembers() holds it. GroupMember has no listener, so the
   * observer's view is polled (a spin, as barrier_round_trip's watch check). Its leave is
   * awaited before the next round, untimed. One untimed round first: Curator's start() returns
   * before its cache is loaded (ours waits for it).
   */
  static Map<String, Object> groupJoinVisible(Ctx ctx) throws Exception {
    List<CuratorFramework> sessions = ctx.sessions(2);
    String path = ctx.root + "/group";
    GroupMember observer = new GroupMember(sessions.get(0), path, "observer", new byte[0]);
    observer.start();
    byte[] payload = "payload".getBytes(StandardCharsets.UTF_8);
    round(observer, sessions.get(1), path, "warm-up", payload);
    int rounds = 100;
    List<Double> times = latencies();
    Counters before = ctx.counters();
    long start = System.nanoTime();
    for (int r = 0; r < rounds; r++) times.add(round(observer, sessions.get(1), path, "member-" + r, payload));
    double seconds = msSince(start) / 1000;
    Counters after = ctx.counters();
    observer.close();
    return ctx.result(rounds, seconds, times, before, after);
  }

  /** One member joins and leaves; returns ms from its start() to the observer seeing it. */
  private static double round(GroupMember observer, CuratorFramework session, String path, String id, byte[] payload) {
    long t = System.nanoTime();
    GroupMember member = new GroupMember(session, path, id, payload);
    member.start();
    long deadline = t + 30_000_000_000L;
    while (!observer.getCurrentMembers().containsKey(id)) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("the observer did not see " + id + " join within 30 s");
      Thread.onSpinWait();
    }
    double ms = msSince(t);
    member.close();
    while (observer.getCurrentMembers().containsKey(id)) {
      if (System.nanoTime() > deadline + 30_000_000_000L) throw new IllegalStateException("the observer did not see " + id + " leave");
      Thread.onSpinWait();
    }
    return ms;
  }
}
