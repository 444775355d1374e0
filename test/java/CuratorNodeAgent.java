// Apache Curator's PersistentNode and its protected names, driven by the nodes interop test over
// stdin/stdout (see test/java/agent.ts). Compiled with javac into a temp dir and run against
// Debian's Curator.
//
// Usage: java CuratorNodeAgent <connectString>
// Prints "ready 0x<sessionId>" once connected. Commands (one a line); each prints
// "ok <req> [result]" or "error <req> <message>" when done:
//   start <req> <id> <mode> <protect> <path> <data>  a new PersistentNode as <id>, started;
//                                                    waitForInitialCreate(20 s): ok <req> <actualPath>
//   actual <req> <id>                                ok <req> <actualPath or ->
//   setdata <req> <id> <data>                        PersistentNode.setData
//   close <req> <id>                                 PersistentNode.close (deletes the node)
//   delete <req> <path>                              a plain delete by this session
//   protected <req> <name>                           ok <req> <isProtectedZNode> <extractProtectedId or ->
//   session <req>                                    ok <req> 0x<current session id>
//   quit                                             closes the client and exits.
// Unasked: "created <id> <path>" each time a PersistentNode's listener reports a create.
// The agent exits when its stdin closes, so it never outlives the test process.
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;

public final class CuratorNodeAgent {
  private static CuratorFramework client;
  private static final Map<String, PersistentNode> nodes = new ConcurrentHashMap<>();

  public static void main(String[] args) throws Exception {
    client = AgentLoop.connect(args[0], 4000);
    AgentLoop.serve(client, (w, line) -> {
      switch (w[0]) {
        case "start" -> AgentLoop.run(w[1], () -> {
          String id = w[2];
          PersistentNode n = new PersistentNode(client, CreateMode.valueOf(w[3]), Boolean.parseBoolean(w[4]), w[5], w[6].getBytes(StandardCharsets.UTF_8));
          n.getListenable().addListener(path -> AgentLoop.emit("created " + id + " " + path));
          nodes.put(id, n);
          n.start();
          if (!n.waitForInitialCreate(20, TimeUnit.SECONDS)) throw new IllegalStateException("not created within 20 s");
          return n.getActualPath();
        });
        case "actual" -> AgentLoop.run(w[1], () -> {
          String p = nodes.get(w[2]).getActualPath();
          return p == null ? "-" : p;
        });
        case "setdata" -> AgentLoop.run(w[1], () -> {
          nodes.get(w[2]).setData(w[3].getBytes(StandardCharsets.UTF_8));
          return "";
        });
        case "close" -> AgentLoop.run(w[1], () -> {
          nodes.remove(w[2]).close();
          return "";
        });
        case "delete" -> AgentLoop.run(w[1], () -> {
          client.delete().forPath(w[2]);
          return "";
        });
        case "protected" -> AgentLoop.run(w[1], () -> ProtectedUtils.isProtectedZNode(w[2]) + " " + ProtectedUtils.extractProtectedId(w[2]).orElse("-"));
        case "session" -> AgentLoop.run(w[1], () -> "0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId()));
        default -> {
          return false;
        }
      }
      return true;
    }, () -> {
      for (PersistentNode n : nodes.values()) n.close();
    });
  }
}
