"""Leader failover and the queues of kazoo_bench.py (bench/others.ts for zk-recipes)."""
import threading
import time
from queue import Empty, Queue as Mailbox

from kazoo_kit import LIMIT_S, Tally, ms_since


def leader_failover(ctx):
    """5 Election participants on one path; 20 times the leader steps down (its leader function
    returns) and rejoins at the back once the next leader is told; measured: step-down to told.
    A round starts once the last round's rejoined participant has entered (its node created)."""
    sessions = ctx.sessions(5)
    path = ctx.root + "/election"
    k, seen, elected = Tally(), set(), Mailbox()
    step_down = [threading.Event() for _ in sessions]
    rejoin = [threading.Event() for _ in sessions]
    stop = threading.Event()
    elections = [s.Election(path, "p%d" % i) for i, s in enumerate(sessions)]

    def lead(i):
        with k.mon:
            k.holders += 1
            if k.holders > 1:
                k.violations += 1
            seen.add(i)
        elected.put(i)
        step_down[i].wait()
        step_down[i].clear()
        with k.mon:
            k.holders -= 1

    def participant(i):
        while not stop.is_set():
            elections[i].run(lead, i)
            rejoin[i].wait()
            rejoin[i].clear()

    threads = [threading.Thread(target=participant, args=(i,), daemon=True) for i in range(5)]
    for t in threads:
        t.start()
    leader = elected.get(timeout=30)
    rounds, times = 20, []
    before = ctx.counters()
    start = time.perf_counter()
    rejoined = None
    for _ in range(rounds):
        # The last round's rejoin entered first (its node created), as in bench/others.ts.
        if rejoined is not None:
            await_entered(elections[rejoined[0]].lock, rejoined[1])
        t = time.perf_counter()
        step_down[leader].set()
        try:
            nxt = elected.get(timeout=30)
        except Empty:
            raise RuntimeError("no next leader within 30 s")
        times.append(ms_since(t))
        rejoined = (leader, elections[leader].lock.node)
        rejoin[leader].set()
        leader = nxt
    seconds = time.perf_counter() - start
    after = ctx.counters()
    stop.set()
    for e in elections:
        e.cancel()
    step_down[leader].set()
    for ev in rejoin:
        ev.set()
    for t in threads:
        t.join(timeout=10)
    # Each failover's time too: bench:compare pools the runs of a round (20 samples make a poor p99).
    return ctx.result(rounds, seconds, times, before, after, leaders_seen=len(seen), violations=k.violations,
                      latencies_ms=[round(t, 3) for t in times])


def await_entered(lock, old_node):
    """Waits until `lock` has created a node other than `old_node` (kazoo tells no event for it:
    its node is polled in memory)."""
    deadline = time.perf_counter() + 30
    while lock.node is None or lock.node == old_node:
        if time.perf_counter() > deadline:
            raise RuntimeError("a rejoined participant did not enter within 30 s")
        time.sleep(0.00002)


def queue(ctx, at_least_once=False):
    """1 producer puts 2000 small items, 4 consumer sessions take them: Queue (at most once) or
    LockingQueue (at least once: get, record, consume)."""
    producer_session, *consumer_sessions = ctx.sessions(5)
    path = ctx.root + "/queue"
    n = 2000
    make = (lambda s: s.LockingQueue(path)) if at_least_once else (lambda s: s.Queue(path))
    producer = make(producer_session)
    producer.put(b"warm-up")
    warm = make(producer_session)
    warm.get()
    if at_least_once:
        warm.consume()
    counts, put_at, lat, received = {}, {}, [], [0]
    taken = [0] * len(consumer_sessions)
    mon = threading.Lock()
    all_in, stop = threading.Event(), threading.Event()
    wakers = [threading.Event() for _ in consumer_sessions]

    def record(data, i):
        key = data.decode()
        with mon:
            taken[i] += 1
            counts[key] = counts.get(key, 0) + 1
            if key in put_at:
                lat.append(ms_since(put_at[key]))
            received[0] += 1
            if received[0] >= n:
                all_in.set()

    def at_most_once(i):
        s = consumer_sessions[i]
        q, changed = s.Queue(path), wakers[i]
        while not stop.is_set():
            item = q.get()
            if item is not None:
                record(item, i)
                continue
            # Empty: wait for the queue's children to change (a put), then try again. A late
            # fire of an older watch only costs one more get().
            changed.clear()
            if not s.get_children(path, watch=lambda _e: changed.set()):
                changed.wait(LIMIT_S)

    def locking(i):
        q = consumer_sessions[i].LockingQueue(path)
        while not stop.is_set():
            # get() blocks on watches; its timeout only lets the loop see stop.
            item = q.get(timeout=1.0)
            if item is not None:
                record(item, i)
                q.consume()

    threads = [threading.Thread(target=locking if at_least_once else at_most_once, args=(i,), daemon=True)
               for i in range(len(consumer_sessions))]
    before = ctx.counters()
    start = time.perf_counter()
    for t in threads:
        t.start()
    for i in range(n):
        key = "item-%d" % i
        with mon:
            put_at[key] = time.perf_counter()
        producer.put(key.encode())
    if not all_in.wait(LIMIT_S):
        raise RuntimeError("only %d of %d items arrived" % (received[0], n))
    seconds = time.perf_counter() - start
    after = ctx.counters()
    stop.set()
    for w in wakers:
        w.set()
    for t in threads:
        t.join(timeout=10)
    lost = sum(1 for i in range(n) if counts.get("item-%d" % i, 0) == 0)
    duplicated = sum(max(0, counts.get("item-%d" % i, 0) - 1) for i in range(n))
    # Not in WORKLOADS.md: how evenly the consumers shared the items (1.0: one took all).
    return ctx.result(n, seconds, lat, before, after, lost=lost, duplicated=duplicated,
                      max_consumer_share=round(max(taken) / received[0], 2))
