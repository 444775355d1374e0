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
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.GroupMember;

public final class CuratorGroupAgent {
  private static final Map<String, GroupMember> members = new ConcurrentHashMap<>();

  static byte[] bytes(String hex) {
    return hex.equals("-") ? new byte[0] : HexFormat.of().parseHex(hex);
  }

  static String hex(byte[] b) {
    return b == null || b.length == 0 ? "-" : HexFormat.of().formatHex(b);
  }

  public static void main(String[] args) throws Exception {
    CuratorFramework client = AgentLoop.connect(args[0], 4000);
    AgentLoop.serve(client, (w, line) -> {
      switch (w[0]) {
        case "join" -> AgentLoop.reply(w[1], () -> {
          GroupMember m = new GroupMember(client, w[3], w[4], bytes(w[5]));
          members.put(w[2], m);
          m.start();
          return "";
        });
        case "members" -> AgentLoop.reply(w[1], () -> {
          StringBuilder sb = new StringBuilder();
          for (Map.Entry<String, byte[]> e : new TreeMap<>(members.get(w[2]).getCurrentMembers()).entrySet()) {
            if (sb.length() > 0) sb.append(' ');
            sb.append(e.getKey()).append('=').append(hex(e.getValue()));
          }
          return sb.toString();
        });
        case "set" -> AgentLoop.reply(w[1], () -> {
          members.get(w[2]).setThisData(bytes(w[3]));
          return "";
        });
        case "leave" -> AgentLoop.reply(w[1], () -> {
          members.remove(w[2]).close();
          return "";
        });
        default -> {
          return false;
        }
      }
      return true;
    }, () -> {});
  }
}
