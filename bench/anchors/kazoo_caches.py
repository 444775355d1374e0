"""The cache workloads of kazoo_bench.py (bench/caches.ts for zk-recipes) with kazoo's
TreeCache (a data and a child watch per node, set again after each fires; its events are
published from one background thread)."""
import threading
import time

from kazoo.recipe.cache import TreeCache, TreeEvent

from kazoo_kit import LIMIT_S, ms_since


def data(tag):
    """32 bytes of data naming tag (as bench/caches.ts's data())."""
    return (tag + "." * 32)[:32].encode("ascii")


def name(i):
    return "n%03d" % i


def build_tree(s, root, fanout, fanout2):
    """root (created with its parents) and fanout children, each with fanout2 children; one
    transaction per 100 nodes or so. Returns the number of nodes."""
    s.ensure_path(root.rsplit("/", 1)[0])
    s.create(root, data("root"))
    nodes, ops = 1, []

    def commit():
        t = s.transaction()
        for path, value in ops:
            t.create(path, value)
        for r in t.commit():
            if isinstance(r, Exception):
                raise r

    for i in range(fanout):
        child = "%s/%s" % (root, name(i))
        ops.append((child, data(child)))
        for j in range(fanout2):
            ops.append(("%s/%s" % (child, name(j)), data(child + str(j))))
        if len(ops) >= 100 or i == fanout - 1:
            commit()
            nodes += len(ops)
            ops = []
    return nodes


def drop_tree(s, root):
    """Removes what build_tree made below root (leaves and their parent in one transaction)."""
    children, ops = s.get_children(root), []
    for i, c in enumerate(children):
        child = "%s/%s" % (root, c)
        ops.extend("%s/%s" % (child, leaf) for leaf in s.get_children(child))
        ops.append(child)
        if len(ops) >= 100 or i == len(children) - 1:
            t = s.transaction()
            for p in ops:
                t.delete(p)
            t.commit()
            ops = []


def cache_load(ctx):
    """3 times a new TreeCache on a 10 101-node tree (100 x 100, 32 bytes each), start() to INITIALIZED."""
    s, = ctx.sessions(1)
    tree = ctx.root + "/tree"
    nodes = build_tree(s, tree, 100, 100)
    try:
        loads, missing, seconds, packets, fires, counted, times, cpu = 3, 0, 0.0, 0.0, 0.0, True, [], 0.0
        for _ in range(loads):
            cache = TreeCache(s, tree)
            init = threading.Event()
            added = [0]

            def listener(event, init=init, added=added):
                if event.event_type == TreeEvent.NODE_ADDED:
                    added[0] += 1
                elif event.event_type == TreeEvent.INITIALIZED:
                    init.set()

            cache.listen(listener)
            before = ctx.counters()
            c = time.process_time()
            t = time.perf_counter()
            cache.start()
            if not init.wait(LIMIT_S):
                raise RuntimeError("not initialized within %d s" % LIMIT_S)
            ms = ms_since(t)
            cpu += time.process_time() - c
            after = ctx.counters()
            times.append(ms)
            seconds += ms / 1000
            if before and after:
                packets += after[0] - before[0]
                fires += after[1] - before[1]
            else:
                counted = False
            missing += max(0, nodes - added[0])
            cache.close()
        line = ctx.result(nodes * loads, seconds, times, None, None)
        if counted:
            line["requests_per_op"] = round(packets / (nodes * loads), 2)
            line["watch_fires_per_op"] = round(fires / (nodes * loads), 2)
        line.update(nodes=nodes, lost=missing, client_cpu_ms_per_1k=round(cpu * 1000 / (nodes * loads) * 1000, 1))
        return line
    finally:
        drop_tree(s, tree)


def changes_listener(on_change):
    def listener(event):
        if event.event_type == TreeEvent.NODE_UPDATED:
            on_change(time.perf_counter(), event.event_data)
    return listener


def started(s, tree, listener):
    cache = TreeCache(s, tree)
    init = threading.Event()
    cache.listen(listener)
    cache.listen(lambda e: e.event_type == TreeEvent.INITIALIZED and init.set())
    cache.start()
    if not init.wait(30):
        raise RuntimeError("not initialized within 30 s")
    return cache


def cache_latency(ctx):
    """A TreeCache on 100 children (32 bytes each); another session sets the children's data in
    turn, 500 times, each after the last change arrived; measured: set() call to NODE_UPDATED."""
    reader, writer = ctx.sessions(2)
    tree = ctx.root + "/tree"
    build_tree(writer, tree, 100, 0)
    state = {"expected": None, "at": 0.0, "duplicated": 0}
    arrived = threading.Event()
    seen = set()

    def on_change(now, node):
        key = (node.path, node.data)
        if key in seen:
            state["duplicated"] += 1
        seen.add(key)
        if key == state["expected"]:
            state["at"] = now
            arrived.set()

    cache = started(reader, tree, changes_listener(on_change))
    try:
        n, lost, lat = 500, 0, []
        before = ctx.counters()
        start = time.perf_counter()
        for i in range(n):
            path, value = "%s/%s" % (tree, name(i % 100)), data("v%d" % i)
            arrived.clear()
            state["expected"] = (path, value)
            t = time.perf_counter()
            writer.set(path, value)
            if not arrived.wait(5):
                lost += 1
            else:
                lat.append((state["at"] - t) * 1000)
        seconds = time.perf_counter() - start
        after = ctx.counters()
        return ctx.result(n, seconds, lat, before, after, lost=lost, duplicated=state["duplicated"])
    finally:
        cache.close()


def cache_events(ctx):
    """A TreeCache on 1000 children; 5 bursts in which another session sets all 1000 with up to
    100 set_async in flight; measured: NODE_UPDATED events per second, from the first set of a
    burst to the last event of it (latencies: each set to its event)."""
    reader, writer = ctx.sessions(2)
    tree = ctx.root + "/tree"
    n = 1000
    build_tree(writer, tree, n, 0)
    prefix = len(tree) + 2  # "/n"
    mon = threading.Lock()
    state = {"tag": b"", "received": 0, "duplicated": 0}
    got, event_at, sent_at = [False] * n, [0.0] * n, [0.0] * n
    all_in = threading.Event()

    def on_change(now, node):
        if not node.data.startswith(state["tag"]):
            return
        i = int(node.path[prefix:])
        with mon:
            if got[i]:
                state["duplicated"] += 1
                return
            got[i] = True
            event_at[i] = now
            state["received"] += 1
            if state["received"] == n:
                all_in.set()

    cache = started(reader, tree, changes_listener(on_change))
    try:
        bursts, lost, seconds, lat, errors, cpu = 5, 0, 0.0, [], [], 0.0
        before = ctx.counters()
        for b in range(bursts):
            tag = "b%d-" % b
            with mon:
                for i in range(n):
                    got[i] = False
                state["received"] = 0
                state["tag"] = tag.encode("ascii")
                all_in.clear()
            window = threading.BoundedSemaphore(100)

            def finished(r):
                try:
                    r.get()
                except Exception as e:
                    errors.append(e)
                window.release()

            c = time.process_time()
            start = time.perf_counter()
            for i in range(n):
                window.acquire()
                sent_at[i] = time.perf_counter()
                writer.set_async("%s/%s" % (tree, name(i)), data(tag + str(i))).rawlink(finished)
            complete = all_in.wait(10)
            for _ in range(100):  # every set answered
                window.acquire()
            cpu += time.process_time() - c
            last = start
            with mon:
                for i in range(n):
                    if not got[i]:
                        lost += 1
                        continue
                    last = max(last, event_at[i])
                    lat.append((event_at[i] - sent_at[i]) * 1000)
            if errors:
                raise errors[0]
            seconds += (last if complete else time.perf_counter()) - start
        after = ctx.counters()
        return ctx.result(n * bursts, seconds, lat, before, after, lost=lost, duplicated=state["duplicated"],
                          client_cpu_ms_per_1k=round(cpu * 1000 / (n * bursts) * 1000, 1))
    finally:
        cache.close()
