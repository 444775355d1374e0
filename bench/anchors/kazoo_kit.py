"""What every kazoo workload gets (as bench/context.ts and bench/metrics.ts): sessions closed
afterwards, a fresh root path, the server counters from mntr, the result line."""
import math
import secrets
import socket
import sys
import threading
import time

from kazoo.client import KazooClient

LIMIT_S = 120.0
WATCH_SUMS = ("zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count",
              "zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count")


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def server_counters(host, port):
    """(packets received, watch notifications) from mntr, or None when the server does not answer."""
    try:
        with socket.create_connection((host, port), timeout=3) as s:
            s.sendall(b"mntr")
            chunks = []
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        m = dict(line.split("\t", 1) for line in b"".join(chunks).decode().splitlines() if "\t" in line)
        fires = sum(float(m[k]) for k in WATCH_SUMS if k in m)
        return float(m["zk_packets_received"]), fires
    except (OSError, KeyError, ValueError):
        return None


def percentile(values, p):
    """p-th percentile (0..100), as bench/metrics.ts computes it."""
    if not values:
        return 0
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))]


def ms_since(t):
    return (time.perf_counter() - t) * 1000


class Ctx:
    """Shared state of one workload run: sessions closed afterwards and a fresh root path."""

    def __init__(self, connect, workload, host, port):
        self.connect, self.workload, self.host, self.port = connect, workload, host, port
        self.root = "/bench/kazoo/%s/%s" % (workload, secrets.token_hex(4))
        self.clients = []

    def sessions(self, n):
        """Opens n sessions (10 s session timeout, as WORKLOADS.md says)."""
        made = [KazooClient(hosts=self.connect, timeout=10.0) for _ in range(n)]
        self.clients.extend(made)
        for c in made:
            c.start(timeout=20)
        return made

    def counters(self):
        return server_counters(self.host, self.port)

    def result(self, ops, seconds, lat, before, after, **extra):
        line = {"impl": "kazoo", "workload": self.workload, "ops": ops, "seconds": round(seconds, 3),
                "ops_per_s": round(ops / seconds, 1), "p50_ms": round(percentile(lat, 50), 3),
                "p99_ms": round(percentile(lat, 99), 3)}
        if before and after and ops > 0:  # a deadlocked rwlock may grant nothing
            line["requests_per_op"] = round((after[0] - before[0]) / ops, 2)
            line["watch_fires_per_op"] = round((after[1] - before[1]) / ops, 2)
        line.update(extra)
        return line

    def cleanup(self):
        if self.clients:
            try:
                self.clients[0].delete(self.root, recursive=True)
            except Exception:  # best effort, as bench/context.ts
                pass
        for c in self.clients:
            try:
                c.stop()
                c.close()
            except Exception:
                pass


def run_all(n, fn):
    """Runs fn(i) for i < n on threads and waits for all; the first failure is raised."""
    errors = []

    def wrap(i):
        try:
            fn(i)
        except BaseException as e:  # reported by the caller
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class Tally:
    """Counters shared by the participants of one workload, under one lock."""

    def __init__(self):
        self.mon = threading.Lock()
        self.granted = self.holders = self.readers = self.writers = 0
        self.max_concurrent = self.max_readers = self.violations = 0
        self.waits = []
