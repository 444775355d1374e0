// Apache Curator's SharedCount and SharedValue, driven by test/shared/curator-interop.test.ts over
// stdin/stdout (see test/java/agent.ts). Compiled by test/java/curator.ts with javac into a temp
// dir and run against Debian's Curator.
//
// Usage: java CuratorSharedAgent <connectString>
// Prints "ready 0x<sessionId>" once connected. Commands (one a line); each prints
// "ok <req> [result]" or "error <req> <message>" when done (blocking ones run on a thread).
// Bytes travel as hex, "-" for none.
//   count <req> <id> <path> <seed>     a new SharedCount as <id>, with a listener, started
//   value <req> <id> <path> <hex>      a new SharedValue as <id>, with a listener, started
//   get <req> <id>                     ok <req> <count | hex> <version>
//   setcount <req> <id> <n>            SharedCount.setCount
//   setvalue <req> <id> <hex>          SharedValue.setValue
//   incr <req> <id> <n>                n increments of count <id>, each a trySetCount loop on
//                                      getVersionedValue(): ok <req> <successes> <refusals>
//   close <req> <id>                   closes <id>
//   quit                               closes the client and exits.
// Listener lines: "changed <id> <count>" and "vchanged <id> <hex>".
// The agent exits when its stdin closes, so it never outlives the test process.
import java.io.Closeable;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.SharedValue;
import org.apache.curator.framework.recipes.shared.SharedValueListener;
import org.apache.curator.framework.recipes.shared.SharedValueReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;

public final class CuratorSharedAgent {
  private static CuratorFramework client;
  private static final Map<String, Closeable> recipes = new ConcurrentHashMap<>();

  static String hex(byte[] b) {
    return b.length == 0 ? "-" : HexFormat.of().formatHex(b);
  }

  static byte[] bytes(String h) {
    return h.equals("-") ? new byte[0] : HexFormat.of().parseHex(h);
  }

  public static void main(String[] args) throws Exception {
    client = AgentLoop.connect(args[0], 10000);
    AgentLoop.serve(client, (w, line) -> {
      switch (w[0]) {
        case "count" -> AgentLoop.run(w[1], () -> {
          String id = w[2];
          SharedCount c = new SharedCount(client, w[3], Integer.parseInt(w[4]));
          c.addListener(new SharedCountListener() {
            @Override
            public void countHasChanged(SharedCountReader reader, int n) {
              AgentLoop.emit("changed " + id + " " + n);
            }

            @Override
            public void stateChanged(CuratorFramework f, ConnectionState s) {}
          });
          c.start();
          recipes.put(id, c);
          return "";
        });
        case "value" -> AgentLoop.run(w[1], () -> {
          String id = w[2];
          SharedValue v = new SharedValue(client, w[3], bytes(w[4]));
          v.getListenable().addListener(new SharedValueListener() {
            @Override
            public void valueHasChanged(SharedValueReader reader, byte[] b) {
              AgentLoop.emit("vchanged " + id + " " + hex(b));
            }

            @Override
            public void stateChanged(CuratorFramework f, ConnectionState s) {}
          });
          v.start();
          recipes.put(id, v);
          return "";
        });
        case "get" -> AgentLoop.run(w[1], () -> {
          Closeable r = recipes.get(w[2]);
          if (r instanceof SharedCount c) {
            VersionedValue<Integer> vv = c.getVersionedValue();
            return vv.getValue() + " " + vv.getVersion();
          }
          VersionedValue<byte[]> vv = ((SharedValue) r).getVersionedValue();
          return hex(vv.getValue()) + " " + vv.getVersion();
        });
        case "setcount" -> AgentLoop.run(w[1], () -> {
          ((SharedCount) recipes.get(w[2])).setCount(Integer.parseInt(w[3]));
          return "";
        });
        case "setvalue" -> AgentLoop.run(w[1], () -> {
          ((SharedValue) recipes.get(w[2])).setValue(bytes(w[3]));
          return "";
        });
        case "incr" -> AgentLoop.run(w[1], () -> {
          SharedCount c = (SharedCount) recipes.get(w[2]);
          int n = Integer.parseInt(w[3]);
          int wins = 0;
          int refusals = 0;
          while (wins < n) {
            VersionedValue<Integer> seen = c.getVersionedValue();
            if (c.trySetCount(seen, seen.getValue() + 1)) wins++;
            else refusals++;
          }
          return wins + " " + refusals;
        });
        case "close" -> AgentLoop.run(w[1], () -> {
          Closeable r = recipes.remove(w[2]);
          if (r != null) r.close();
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
