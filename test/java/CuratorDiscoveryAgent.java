// Apache Curator's curator-x-discovery (ServiceDiscovery, ServiceProvider, ServiceCache), driven
// by the discovery interop tests over stdin/stdout. Compiled by test/java/curator.ts with javac
// into a temp dir and run against Debian's Curator. Every discovery is built as Java shops build
// it: ServiceDiscoveryBuilder.builder(Map.class) with the builder's default serializer
// (JsonInstanceSerializer in its compatible mode).
//
// Usage: java CuratorDiscoveryAgent <connectString>
// Prints "ready 0x<sessionId>" once connected. JSON travels as hex of its UTF-8 ("-" for none),
// so that no word holds a space. Commands (one a line); each prints "ok <req> [result]" or
// "error <req> <message>":
//   open <req> <d> <basePath>             a ServiceDiscovery <d> on basePath; start()
//   register <req> <d> <hexSpec>          registerService of the instance <hexSpec> describes
//                                         (below): ok <req> <hexInstance>
//   update <req> <d> <hexSpec>            updateService (the instance <hexSpec> describes)
//   unregister <req> <d> <name> <id>      unregisterService
//   names <req> <d>                       queryForNames: ok <req> name ... (sorted)
//   instances <req> <d> <name>            queryForInstances: ok <req> <hex of a JSON array>
//   instance <req> <d> <name> <id>        queryForInstance: ok <req> <hexInstance> or "-"
//   provider <req> <d> <p> <name> <strategy> [<downTimeoutMs> <errorThreshold>]
//                                         a started ServiceProvider <p>; strategy roundRobin,
//                                         random or sticky (sticky over round robin)
//   get <req> <p>                         getInstance(): ok <req> <hexInstance> or "-"
//   gets <req> <p> <n>                    getInstance() n times: ok <req> id ... ("-" for null)
//   all <req> <p>                         getAllInstances(): ok <req> <hex of a JSON array>
//   noteError <req> <p> <id>              noteError of the instance of getAllInstances() with <id>
//   closeProvider <req> <p>
//   cache <req> <d> <c> <name>            a started ServiceCache <c>: ok <req> <hex of a JSON
//                                         array>; from then on each cacheChanged() prints
//                                         "cache <c> <hex of a JSON array>" (its getInstances())
//   cached <req> <c>                      getInstances(): ok <req> <hex of a JSON array>
//   closeCache <req> <c>
//   close <req> <d>                       closes discovery <d> (it unregisters its services)
//   expire <req>                          ends this client's session on the server (a second
//                                         ZooKeeper handle on the same session id closes it)
//   quit                                  closes everything and the client, and exits.
// The client's connection states are printed as "state <STATE> 0x<sessionId>" (RECONNECTED
// after an expiry carries the new session).
//
// An instance spec: {"name","id","address","port","sslPort","payload","registrationTimeUTC",
// "serviceType","uriSpec" (a template such as "{scheme}://{address}:{port}"),"enabled"}; a
// missing or null field is null (registrationTimeUTC: now, serviceType: DYNAMIC, enabled: true).
// An instance printed back is what Curator holds, field by field, plus "payloadClass" (the
// Java class of its payload), "uriParts" (its UriSpec's parts) and "uri" (buildUriSpec()).
// The agent exits when its stdin closes.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.x.discovery.DownInstancePolicy;
import org.apache.curator.x.discovery.ProviderStrategy;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceProviderBuilder;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.curator.x.discovery.strategies.RandomStrategy;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;
import org.apache.curator.x.discovery.strategies.StickyStrategy;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

@SuppressWarnings({"rawtypes", "unchecked"})
public final class CuratorDiscoveryAgent {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Map<String, ServiceDiscovery<Map>> discoveries = new ConcurrentHashMap<>();
  private static final Map<String, ServiceInstance<Map>> registered = new ConcurrentHashMap<>();
  private static final Map<String, ServiceProvider<Map>> providers = new ConcurrentHashMap<>();
  private static final Map<String, ServiceCache<Map>> caches = new ConcurrentHashMap<>();

  static String hex(String s) {
    return HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
  }

  static JsonNode unhex(String h) throws Exception {
    return JSON.readTree(new String(HexFormat.of().parseHex(h), StandardCharsets.UTF_8));
  }

  static String text(JsonNode spec, String field) {
    JsonNode v = spec.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  static Integer integer(JsonNode spec, String field) {
    JsonNode v = spec.get(field);
    return v == null || v.isNull() ? null : v.asInt();
  }

  static ServiceInstance<Map> instanceOf(JsonNode spec) throws Exception {
    JsonNode payload = spec.get("payload");
    Map p = payload == null || payload.isNull() ? null : JSON.convertValue(payload, LinkedHashMap.class);
    JsonNode time = spec.get("registrationTimeUTC");
    String type = text(spec, "serviceType");
    String uri = text(spec, "uriSpec");
    JsonNode enabled = spec.get("enabled");
    return new ServiceInstance<Map>(
        text(spec, "name"),
        text(spec, "id"),
        text(spec, "address"),
        integer(spec, "port"),
        integer(spec, "sslPort"),
        p,
        time == null || time.isNull() ? System.currentTimeMillis() : time.asLong(),
        type == null ? ServiceType.DYNAMIC : ServiceType.valueOf(type),
        uri == null ? null : new UriSpec(uri),
        enabled == null || enabled.isNull() || enabled.asBoolean());
  }

  /** What Curator holds of an instance, field by field. */
  static Map<String, Object> describe(ServiceInstance<Map> i) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", i.getName());
    m.put("id", i.getId());
    m.put("address", i.getAddress());
    m.put("port", i.getPort());
    m.put("sslPort", i.getSslPort());
    m.put("payload", i.getPayload());
    m.put("payloadClass", i.getPayload() == null ? null : i.getPayload().getClass().getName());
    m.put("registrationTimeUTC", i.getRegistrationTimeUTC());
    m.put("serviceType", i.getServiceType() == null ? null : i.getServiceType().name());
    m.put("enabled", i.isEnabled());
    if (i.getUriSpec() == null) {
      m.put("uriParts", null);
      m.put("uri", null);
    } else {
      List<Map<String, Object>> parts = new ArrayList<>();
      for (UriSpec.Part part : i.getUriSpec()) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("value", part.getValue());
        p.put("variable", part.isVariable());
        parts.add(p);
      }
      m.put("uriParts", parts);
      m.put("uri", i.buildUriSpec());
    }
    return m;
  }

  static String one(ServiceInstance<Map> i) throws Exception {
    return i == null ? "-" : hex(JSON.writeValueAsString(describe(i)));
  }

  static String many(Collection<ServiceInstance<Map>> list) throws Exception {
    List<Map<String, Object>> out = new ArrayList<>();
    for (ServiceInstance<Map> i : list) out.add(describe(i));
    out.sort((a, b) -> String.valueOf(a.get("id")).compareTo(String.valueOf(b.get("id"))));
    return hex(JSON.writeValueAsString(out));
  }

  static ServiceDiscovery<Map> discovery(String d) {
    ServiceDiscovery<Map> sd = discoveries.get(d);
    if (sd == null) throw new IllegalArgumentException("no discovery " + d);
    return sd;
  }

  static ProviderStrategy<Map> strategy(String name) {
    return switch (name) {
      case "roundRobin" -> new RoundRobinStrategy<>();
      case "random" -> new RandomStrategy<>();
      case "sticky" -> new StickyStrategy<>(new RoundRobinStrategy<>());
      default -> throw new IllegalArgumentException("unknown strategy " + name);
    };
  }

  /** Ends the client's session on the server: a second handle on it closes it. */
  static void expire(String connectString, CuratorFramework client) throws Exception {
    ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
    CountDownLatch connected = new CountDownLatch(1);
    Watcher w = e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
    };
    ZooKeeper twin = new ZooKeeper(connectString, 4000, w, zk.getSessionId(), zk.getSessionPasswd());
    try {
      if (!connected.await(20, TimeUnit.SECONDS)) throw new IllegalStateException("the twin handle did not connect");
    } finally {
      twin.close();
    }
  }

  public static void main(String[] args) throws Exception {
    String connectString = args[0];
    CuratorFramework client = AgentLoop.connect(connectString, 4000);
    client.getConnectionStateListenable().addListener((c, state) -> {
      String session = "-";
      try {
        if (state.isConnected()) session = AgentLoop.sessionOf(c);
      } catch (Exception e) {
        // no session to name
      }
      AgentLoop.emit("state " + state.name() + " " + session);
    });
    AgentLoop.serve(client, (w, line) -> {
      switch (w[0]) {
        case "open" -> AgentLoop.reply(w[1], () -> {
          ServiceDiscovery<Map> sd = ServiceDiscoveryBuilder.builder(Map.class).client(client).basePath(w[3]).build();
          sd.start();
          discoveries.put(w[2], sd);
          return "";
        });
        case "register" -> AgentLoop.reply(w[1], () -> {
          ServiceInstance<Map> i = instanceOf(unhex(w[3]));
          discovery(w[2]).registerService(i);
          registered.put(w[2] + "/" + i.getName() + "/" + i.getId(), i);
          return one(i);
        });
        case "update" -> AgentLoop.reply(w[1], () -> {
          ServiceInstance<Map> i = instanceOf(unhex(w[3]));
          discovery(w[2]).updateService(i);
          registered.put(w[2] + "/" + i.getName() + "/" + i.getId(), i);
          return one(i);
        });
        case "unregister" -> AgentLoop.reply(w[1], () -> {
          ServiceInstance<Map> i = registered.remove(w[2] + "/" + w[3] + "/" + w[4]);
          if (i == null) i = new ServiceInstance<Map>(w[3], w[4], null, null, null, null, 0L, ServiceType.DYNAMIC, null);
          discovery(w[2]).unregisterService(i);
          return "";
        });
        case "names" -> AgentLoop.reply(w[1], () -> String.join(" ", new TreeSet<>(discovery(w[2]).queryForNames())));
        case "instances" -> AgentLoop.reply(w[1], () -> many(discovery(w[2]).queryForInstances(w[3])));
        case "instance" -> AgentLoop.reply(w[1], () -> one(discovery(w[2]).queryForInstance(w[3], w[4])));
        case "provider" -> AgentLoop.reply(w[1], () -> {
          ServiceProviderBuilder<Map> b = discovery(w[2]).serviceProviderBuilder().serviceName(w[4]).providerStrategy(strategy(w[5]));
          if (w.length > 7) b = b.downInstancePolicy(new DownInstancePolicy(Long.parseLong(w[6]), TimeUnit.MILLISECONDS, Integer.parseInt(w[7])));
          ServiceProvider<Map> p = b.build();
          p.start();
          providers.put(w[3], p);
          return "";
        });
        case "get" -> AgentLoop.reply(w[1], () -> one(providers.get(w[2]).getInstance()));
        case "gets" -> AgentLoop.reply(w[1], () -> {
          ServiceProvider<Map> p = providers.get(w[2]);
          StringBuilder sb = new StringBuilder();
          for (int n = Integer.parseInt(w[3]), k = 0; k < n; k++) {
            ServiceInstance<Map> i = p.getInstance();
            if (k > 0) sb.append(' ');
            sb.append(i == null ? "-" : i.getId());
          }
          return sb.toString();
        });
        case "all" -> AgentLoop.reply(w[1], () -> many(providers.get(w[2]).getAllInstances()));
        case "noteError" -> AgentLoop.reply(w[1], () -> {
          ServiceProvider<Map> p = providers.get(w[2]);
          for (ServiceInstance<Map> i : p.getAllInstances()) {
            if (i.getId().equals(w[3])) {
              p.noteError(i);
              return "";
            }
          }
          throw new IllegalArgumentException("provider " + w[2] + " has no instance " + w[3]);
        });
        case "closeProvider" -> AgentLoop.reply(w[1], () -> {
          providers.remove(w[2]).close();
          return "";
        });
        case "cache" -> AgentLoop.reply(w[1], () -> {
          ServiceCache<Map> c = discovery(w[2]).serviceCacheBuilder().name(w[4]).build();
          String id = w[3];
          c.addListener(new ServiceCacheListener() {
            @Override
            public void cacheChanged() {
              try {
                AgentLoop.emit("cache " + id + " " + many(c.getInstances()));
              } catch (Exception e) {
                AgentLoop.emit("cache-error " + id + " " + AgentLoop.describe(e));
              }
            }

            @Override
            public void stateChanged(CuratorFramework cf, ConnectionState s) {}
          });
          c.start();
          caches.put(id, c);
          return many(c.getInstances());
        });
        case "cached" -> AgentLoop.reply(w[1], () -> many(caches.get(w[2]).getInstances()));
        case "closeCache" -> AgentLoop.reply(w[1], () -> {
          caches.remove(w[2]).close();
          return "";
        });
        case "close" -> AgentLoop.reply(w[1], () -> {
          discoveries.remove(w[2]).close();
          return "";
        });
        case "expire" -> AgentLoop.reply(w[1], () -> {
          expire(connectString, client);
          return "";
        });
        default -> {
          return false;
        }
      }
      return true;
    }, () -> {
      for (ServiceCache<Map> c : caches.values()) c.close();
      for (ServiceProvider<Map> p : providers.values()) p.close();
      for (ServiceDiscovery<Map> d : discoveries.values()) d.close();
    });
  }
}
