// Apache Curator's GroupMember, driven by the group interop tests over stdin/stdout. Compiled by
// test/java/curator.ts with javac into a temp dir and run against Debian's Curator.
//
// Usage: java CuratorGroupAgent <connectString>
// Prints "ready 0x<sessionId>" once connected. Commands (one a line); each prints
// "ok <req> [result]" or "error <req> <message>":
//   join <req> <id> <path> <memberId> <hexPayload>   a new GroupMember as <id>; start()
//   members <req> <id>                               getCurrentMembers(): ok <req> memberId=hexPayload ... (sorted)
//   set <req> <id> <hexPayload>                      setThisData
//   leave <req> <id>                                 close()
//   quit                                             closes the client and exits.
// Payloads travel as hex ("-" for empty). The agent exits when its stdin closes.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorGroupAgent {
  private static final Map<String, GroupMember> members = new ConcurrentHashMap<>();

  static synchronized void emit(String line) {
    System.out.println(line);
    System.out.flush();
  }

  static byte[] bytes(String hex) {
    return hex.equals("-") ? new byte[0] : HexFormat.of().parseHex(hex);
  }

  static String hex(byte[] b) {
    return b == null || b.length == 0 ? "-" : HexFormat.of().formatHex(b);
  }

  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 4000, 5000, new ExponentialBackoffRetry(50, 10));
    client.start();
    if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
      emit("fatal could not connect to " + args[0]);
      System.exit(2);
    }
    emit("ready 0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId()));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split("\\s+");
      String req = w.length > 1 ? w[1] : "-";
      try {
        switch (w[0]) {
          case "join" -> {
            GroupMember m = new GroupMember(client, w[3], w[4], bytes(w[5]));
            members.put(w[2], m);
            m.start();
            emit("ok " + req);
          }
          case "members" -> {
            StringBuilder sb = new StringBuilder();
            for (Map.Entry<String, byte[]> e : new TreeMap<>(members.get(w[2]).getCurrentMembers()).entrySet()) {
              sb.append(' ').append(e.getKey()).append('=').append(hex(e.getValue()));
            }
            emit("ok " + req + sb);
          }
          case "set" -> {
            members.get(w[2]).setThisData(bytes(w[3]));
            emit("ok " + req);
          }
          case "leave" -> {
            members.remove(w[2]).close();
            emit("ok " + req);
          }
          case "quit" -> {
            client.close();
            emit("bye");
            System.exit(0);
          }
          default -> emit("error " + req + " unknown command " + line);
        }
      } catch (Exception e) {
        emit("error " + req + " " + e.toString().replace('\n', ' '));
      }
    }
    System.exit(0);
  }
}
