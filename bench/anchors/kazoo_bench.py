#!/usr/bin/env python3
"""kazoo 2.8 running the workloads of ../shared/bench/WORKLOADS.md with the semantics of
bench/locks.ts and bench/others.ts: one JSON line per workload on stdout (impl "kazoo"),
progress on stderr. Workloads in kazoo_locks.py and kazoo_others.py, shared parts in
kazoo_kit.py. scripts/bench-compare.mjs runs it; by hand (Debian: apt-get install -y
python3-kazoo, which installs it for /usr/bin/python3):

    python3 bench/anchors/kazoo_bench.py --connect HOST:PORT [--only w1,w2] [--runs N] [--warmup N]

Recipes: Lock, Semaphore (max_leases 3), ReadLock/WriteLock, Election (its leader function
returns to step down), Queue (at most once; get() does not block, so an idle consumer waits on
a children watch), LockingQueue (queue_at_least_once: get, then consume) and TreeCache (the
cache_* workloads, in kazoo_caches.py). The read-write
lock can deadlock (kazoo#649): a waiter not woken for 10 s (kazoo_locks.RWLOCK_STALL_S) ends
the workload and its line says "deadlocked":1.
"""
import argparse
import json
import os
import sys
import threading

from kazoo_kit import LIMIT_S, Ctx, log
from kazoo_locks import mutex_contended, mutex_uncontended, raw_pipelined, raw_seq, rwlock, semaphore
from kazoo_caches import cache_events, cache_latency, cache_load
from kazoo_others import leader_failover, queue

WORKLOADS = {
    "raw_seq": raw_seq,
    "raw_pipelined": raw_pipelined,
    "mutex_uncontended": mutex_uncontended,
    "mutex_contended": mutex_contended,
    "semaphore": semaphore,
    "rwlock": rwlock,
    "leader_failover": leader_failover,
    "queue": queue,
    "queue_at_least_once": lambda ctx: queue(ctx, at_least_once=True),
    "cache_load": cache_load,
    "cache_latency": cache_latency,
    "cache_events": cache_events,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connect", default=os.environ.get("ZK_CONNECT"))
    ap.add_argument("--only")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=0)
    args = ap.parse_args()
    if not args.connect:
        ap.error("--connect HOST:PORT is required (or ZK_CONNECT)")
    if args.runs < 1:
        ap.error("--runs must be a positive integer")
    if args.warmup < 0:
        ap.error("--warmup must be a non-negative integer")
    only = [w.strip() for w in args.only.split(",")] if args.only else None
    selected = [name for name in WORKLOADS if only is None or name in only]
    # Names of zk-recipes' own extras pass through bench-compare: skip them, loudly.
    for name in only or []:
        if name and name not in WORKLOADS:
            log('kazoo: no workload "%s" here (known: %s); skipped' % (name, ", ".join(WORKLOADS)))
    host, _, port = args.connect.split(",")[0].split("/")[0].partition(":")
    port = int(port or 2181)
    failed = False
    # Warm-up runs come first and print no line: the interpreter and the server warm before anything is measured.
    for r in range(-args.warmup, args.runs):
        raw_seq_rate = None
        for name in selected:
            if r < 0:
                log("[kazoo warmup %d/%d] %s..." % (r + args.warmup + 1, args.warmup, name))
            else:
                log("[kazoo run %d/%d] %s..." % (r + 1, args.runs, name))
            ctx = Ctx(args.connect, name, host, port)
            box = {}

            def work():
                try:
                    box["line"] = WORKLOADS[name](ctx)
                except BaseException as e:
                    box["error"] = e

            # A workload that does not finish is a failure to report, not a reason to hang.
            worker = threading.Thread(target=work, daemon=True)
            worker.start()
            worker.join(LIMIT_S)
            line = box.get("line")
            if line is None:
                failed = True
                log("%s failed: %s" % (name, box.get("error", "did not finish within %d s" % LIMIT_S)))
            else:
                if name == "raw_seq":
                    raw_seq_rate = line["ops_per_s"]
                elif raw_seq_rate and name not in ("raw_pipelined", "leader_failover") and not name.startswith("cache_") and "deadlocked" not in line:
                    line["ratio_to_raw_seq"] = round(line["ops_per_s"] / raw_seq_rate, 2)
                if r >= 0:
                    print(json.dumps(line, separators=(",", ":")), flush=True)
            ctx.cleanup()
    # Daemon threads of a failed workload may still wait: do not let them hold the exit.
    sys.stdout.flush()
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
