// Apache Curator's CuratorCache (and the writes around it) that the cache interop tests drive over
// stdin/stdout. Compiled by test/java/curator.ts with javac into a temp dir and run against
// Debian's Curator.
//
// Usage: java CuratorCacheAgent <connectString>
// Prints "ready 0x<sessionId>" once connected. Nodes print as <path>:<czxid>:<mzxid>:<version>:<data>
// with zxids in decimal and data in hex ("-" for empty, "~" for none). Commands (one a line):
//   cache <id> <tree|node> <path> [own]
//                                  builds a CuratorCache on <path> (node: SINGLE_NODE_CACHE), with
//                                  the agent's client or (own) a client of its own, closed with it
//                                  (a ZooKeeper server before 3.9 keeps one watch mode per path and
//                                  session: a recursive and a plain persistent watch on one path in
//                                  one session interfere, ZOOKEEPER-4466; and with ZooKeeper's 3.8
//                                  client CuratorCache.close() leaves its persistent watch on the
//                                  server until the session ends, ZOOKEEPER-4472); starts it, prints
//                                  "started <id> 0x<sessionId of its client>"; then per event
//                                  "event <id> <created|changed|deleted> <node>" (deleted: the node
//                                  as last held) and once "initialized <id>".
//   dump <id>                      prints "dump <id> <node>..." (sorted by path), one line.
//   close <id>                     closes the cache (and its own client); prints "closed <id>".
//   create <req> <path> <hex>      persistent node; prints "ok <req> <node>" or "error <req> <message>".
//   set <req> <path> <hex>         setData (any version); prints "ok <req> <node>" or "error ...".
//   delete <req> <path>            prints "ok <req>" or "error <req> <message>".
//   quit                           closes the caches and the client, and exits.
// The agent exits when its stdin closes, so it never outlives the test process.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public final class CuratorCacheAgent {
  private static final Object OUT = new Object();
  private static final HexFormat HEX = HexFormat.of();
  private static CuratorFramework client;
  private static final Map<String, CuratorCache> caches = new ConcurrentHashMap<>();
  private static final Map<String, CuratorFramework> ownClients = new ConcurrentHashMap<>();
  private static String connectString;

  static void emit(String line) {
    synchronized (OUT) {
      System.out.println(line);
      System.out.flush();
    }
  }

  static String hex(byte[] data) {
    if (data == null) return "~";
    return data.length == 0 ? "-" : HEX.formatHex(data);
  }

  static byte[] unhex(String s) {
    return s.equals("-") ? new byte[0] : HEX.parseHex(s);
  }

  static String node(String path, Stat stat, byte[] data) {
    return path + ":" + stat.getCzxid() + ":" + stat.getMzxid() + ":" + stat.getVersion() + ":" + hex(data);
  }

  static String node(ChildData d) {
    return node(d.getPath(), d.getStat(), d.getData());
  }

  public static void main(String[] args) throws Exception {
    connectString = args[0];
    client = connect();
    if (client == null) {
      emit("fatal could not connect to " + args[0]);
      System.exit(2);
    }
    emit("ready " + sessionOf(client));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split("\\s+");
      try {
        switch (w[0]) {
          case "cache" -> cache(w[1], w[2], w[3], w.length > 4 && w[4].equals("own"));
          case "dump" -> dump(w[1]);
          case "close" -> {
            CuratorCache c = caches.remove(w[1]);
            if (c != null) c.close();
            CuratorFramework own = ownClients.remove(w[1]);
            if (own != null) own.close();
            emit("closed " + w[1]);
          }
          case "create" -> write(w[1], () -> {
            Stat stat = new Stat();
            byte[] data = unhex(w[3]);
            client.create().storingStatIn(stat).forPath(w[2], data);
            return " " + node(w[2], stat, data);
          });
          case "set" -> write(w[1], () -> {
            byte[] data = unhex(w[3]);
            Stat stat = client.setData().forPath(w[2], data);
            return " " + node(w[2], stat, data);
          });
          case "delete" -> write(w[1], () -> {
            client.delete().forPath(w[2]);
            return "";
          });
          case "quit" -> {
            for (CuratorCache c : caches.values()) c.close();
            for (CuratorFramework c : ownClients.values()) c.close();
            client.close();
            emit("bye");
            System.exit(0);
          }
          default -> emit("error - unknown command " + line);
        }
      } catch (RuntimeException e) {
        emit("error - " + e);
      }
    }
    // stdin closed: the test process is gone.
    System.exit(0);
  }

  /** A started client, or null when it could not connect within 20 s. */
  private static CuratorFramework connect() throws InterruptedException {
    CuratorFramework c = CuratorFrameworkFactory.newClient(connectString, 4000, 5000, new ExponentialBackoffRetry(50, 10));
    c.start();
    if (c.blockUntilConnected(20, TimeUnit.SECONDS)) return c;
    c.close();
    return null;
  }

  private static String sessionOf(CuratorFramework c) throws Exception {
    return "0x" + Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId());
  }

  private interface Write {
    String run() throws Exception;
  }

  private static void write(String req, Write op) {
    try {
      emit("ok " + req + op.run());
    } catch (Exception e) {
      emit("error " + req + " " + e.toString().replace('\n', ' '));
    }
  }

  private static void cache(String id, String kind, String path, boolean own) throws Exception {
    CuratorFramework cc = client;
    if (own) {
      cc = connect();
      if (cc == null) {
        emit("error " + id + " could not connect");
        return;
      }
      ownClients.put(id, cc);
    }
    CuratorCache c = kind.equals("node") ? CuratorCache.build(cc, path, CuratorCache.Options.SINGLE_NODE_CACHE) : CuratorCache.build(cc, path);
    c.listenable().addListener(new CuratorCacheListener() {
      @Override
      public void event(Type type, ChildData oldData, ChildData data) {
        String t = switch (type) {
          case NODE_CREATED -> "created";
          case NODE_CHANGED -> "changed";
          case NODE_DELETED -> "deleted";
        };
        emit("event " + id + " " + t + " " + node(type == Type.NODE_DELETED ? oldData : data));
      }

      @Override
      public void initialized() {
        emit("initialized " + id);
      }
    });
    caches.put(id, c);
    c.start();
    emit("started " + id + " " + sessionOf(cc));
  }

  private static void dump(String id) {
    CuratorCache c = caches.get(id);
    if (c == null) {
      emit("error " + id + " no such cache");
      return;
    }
    StringBuilder b = new StringBuilder("dump " + id);
    c.stream().sorted(Comparator.comparing(ChildData::getPath)).forEach(d -> b.append(' ').append(node(d)));
    emit(b.toString());
  }
}
