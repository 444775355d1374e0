"""The raw floor and the lock recipes of kazoo_bench.py (bench/locks.ts for zk-recipes)."""
import threading
import time

from kazoo.exceptions import CancelledError, LockTimeout

from kazoo_kit import LIMIT_S, Tally, log, ms_since, run_all

RWLOCK_STALL_S = 10.0


def raw_seq(ctx):
    """One session: 1000 x (create ephemeral-sequential, delete). The floor of a lock cycle."""
    s, = ctx.sessions(1)
    s.ensure_path(ctx.root)
    n, lat = 1000, []
    before = ctx.counters()
    start = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        p = s.create(ctx.root + "/n-", ephemeral=True, sequence=True)
        s.delete(p)
        lat.append(ms_since(t))
    seconds = time.perf_counter() - start
    return ctx.result(n, seconds, lat, before, ctx.counters())


def raw_pipelined(ctx):
    """One session: 2000 async creates with up to 100 in flight, then 2000 deletes likewise."""
    s, = ctx.sessions(1)
    s.ensure_path(ctx.root)
    n, lat, paths, errors = 2000, [], [], []
    window = threading.BoundedSemaphore(100)

    def in_flight(calls):
        done = threading.Semaphore(0)
        for call in calls:
            window.acquire()
            t = time.perf_counter()

            def finished(r, t=t):
                try:
                    v = r.get()
                    if isinstance(v, str):
                        paths.append(v)
                except Exception as e:
                    errors.append(e)
                lat.append(ms_since(t))
                window.release()
                done.release()

            call().rawlink(finished)
        for _ in calls:
            if not done.acquire(timeout=LIMIT_S):
                raise RuntimeError("a request got no reply within %d s" % LIMIT_S)

    before = ctx.counters()
    start = time.perf_counter()
    in_flight([lambda: s.create_async(ctx.root + "/n-", ephemeral=True, sequence=True)] * n)
    in_flight([lambda p=p: s.delete_async(p) for p in list(paths)])
    seconds = time.perf_counter() - start
    if errors:
        raise errors[0]
    return ctx.result(2 * n, seconds, lat, before, ctx.counters())


def mutex_uncontended(ctx):
    """One session, one Lock: 500 x (acquire, release)."""
    s, = ctx.sessions(1)
    lock = s.Lock(ctx.root + "/lock")
    lock.acquire()  # creates the directory outside the timed part
    lock.release()
    n, lat = 500, []
    before = ctx.counters()
    start = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        lock.acquire(timeout=LIMIT_S)
        lock.release()
        lat.append(ms_since(t))
    seconds = time.perf_counter() - start
    return ctx.result(n, seconds, lat, before, ctx.counters())


def mutex_contended(ctx):
    """8 sessions, one Lock each on one path, until 800 acquisitions; p50/p99 are waits."""
    sessions = ctx.sessions(8)
    path = ctx.root + "/lock"
    sessions[0].ensure_path(path)
    total, k = 800, Tally()

    def participant(i):
        lock = sessions[i].Lock(path)
        while k.granted < total:
            t = time.perf_counter()
            lock.acquire(timeout=LIMIT_S)
            with k.mon:
                k.waits.append(ms_since(t))
                k.granted += 1
                k.holders += 1
                if k.holders != 1:
                    k.violations += 1
            with k.mon:
                k.holders -= 1
            lock.release()

    before = ctx.counters()
    start = time.perf_counter()
    run_all(8, participant)
    seconds = time.perf_counter() - start
    return ctx.result(k.granted, seconds, k.waits, before, ctx.counters(), violations=k.violations)


def semaphore(ctx):
    """8 sessions, Semaphore(max_leases=3), acquire, hold 2 ms, release, until 600 leases."""
    sessions = ctx.sessions(8)
    path = ctx.root + "/sem"
    total, k = 600, Tally()
    first = sessions[0].Semaphore(path, max_leases=3)
    first.acquire()
    first.release()

    def participant(i):
        sem = sessions[i].Semaphore(path, max_leases=3)
        while k.granted < total:
            t = time.perf_counter()
            if not sem.acquire(timeout=LIMIT_S):
                raise RuntimeError("no lease within %d s" % LIMIT_S)
            with k.mon:
                k.waits.append(ms_since(t))
                k.granted += 1
                k.holders += 1
                k.max_concurrent = max(k.max_concurrent, k.holders)
                if k.holders > 3:
                    k.violations += 1
            time.sleep(0.002)  # the hold of WORKLOADS.md, not a synchronization
            with k.mon:
                k.holders -= 1
            sem.release()

    before = ctx.counters()
    start = time.perf_counter()
    run_all(8, participant)
    seconds = time.perf_counter() - start
    return ctx.result(k.granted, seconds, k.waits, before, ctx.counters(),
                      max_concurrent=k.max_concurrent, violations=k.violations)


def rwlock(ctx):
    """6 ReadLock and 2 WriteLock sessions on one path, 600 acquisitions, each holding 2 ms."""
    sessions = ctx.sessions(8)
    path = ctx.root + "/rw"
    sessions[0].ensure_path(path)
    total, k = 600, Tally()
    locks = [s.WriteLock(path) if i < 2 else s.ReadLock(path) for i, s in enumerate(sessions)]
    stalled = threading.Event()
    last_grant = [0.0]

    def participant(i):
        writer, lock = i < 2, locks[i]
        while k.granted < total and not stalled.is_set():
            t = time.perf_counter()
            try:
                # kazoo's timeout bounds each wait for a wake-up: none for this long is the
                # deadlock of kazoo#649 (holds are 2 ms).
                lock.acquire(timeout=RWLOCK_STALL_S)
            except LockTimeout:
                stalled.set()
                for other in locks:
                    other.cancel()
                return
            except CancelledError:
                return
            with k.mon:
                k.waits.append(ms_since(t))
                k.granted += 1
                last_grant[0] = time.perf_counter()
                if writer:
                    k.writers += 1
                    if k.writers > 1 or k.readers > 0:
                        k.violations += 1
                else:
                    k.readers += 1
                    k.max_readers = max(k.max_readers, k.readers)
                    if k.writers > 0:
                        k.violations += 1
            time.sleep(0.002)  # the hold of WORKLOADS.md, not a synchronization
            with k.mon:
                if writer:
                    k.writers -= 1
                else:
                    k.readers -= 1
            lock.release()

    before = ctx.counters()
    start = last_grant[0] = time.perf_counter()
    run_all(8, participant)
    # A deadlocked run's time ends at its last grant, not after the stall.
    seconds = (last_grant[0] if stalled.is_set() else time.perf_counter()) - start
    extra = {"max_concurrent_readers": k.max_readers, "violations": k.violations}
    if stalled.is_set():
        log("kazoo rwlock: no grant for %d s after %d acquisitions: deadlocked (kazoo#649)" % (RWLOCK_STALL_S, k.granted))
        extra["deadlocked"] = 1
    return ctx.result(k.granted, max(seconds, 1e-3), k.waits, before, ctx.counters(), **extra)
