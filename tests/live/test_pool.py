"""The worker pool: never more than its size alive, idle workers stopped to make room."""

from __future__ import annotations

import threading
import time

from toolnexus_conformance.process._pool import WorkerPool, available_memory, default_workers


class Fake:
    def __init__(self, name: str, alive: set[str], lock: threading.Lock) -> None:
        self.name, self.alive, self.lock = name, alive, lock
        self.suspended = 0

    def start(self) -> None:
        with self.lock:
            self.alive.add(self.name)

    def suspend(self) -> None:
        with self.lock:
            self.alive.discard(self.name)
        self.suspended += 1


def _fakes(count: int) -> tuple[list[Fake], set[str], threading.Lock]:
    alive: set[str] = set()
    lock = threading.Lock()
    return [Fake(f"w{i}", alive, lock) for i in range(count)], alive, lock


def test_an_idle_worker_is_stopped_to_make_room_and_a_busy_one_never() -> None:
    (a, b, c), alive, _ = _fakes(3)
    pool = WorkerPool(2)
    for worker in (a, b):
        pool.acquire(worker)
        worker.start()
    pool.release(a)  # idle, kept
    pool.acquire(c)  # full: a (idle) makes room, b (busy) does not
    c.start()
    assert a.suspended == 1
    assert b.suspended == 0
    assert alive == {"w1", "w2"}
    assert pool.holding() == 2


def test_the_last_use_without_keep_stops_the_worker_and_frees_its_slot() -> None:
    (a, b), _, _ = _fakes(2)
    pool = WorkerPool(1)
    pool.acquire(a)
    pool.acquire(a)  # a second use of the same worker needs no second slot
    pool.release(a, keep=False)
    assert a.suspended == 0  # still in use
    pool.release(a, keep=False)
    assert a.suspended == 1
    pool.acquire(b)
    assert pool.holding() == 1


def test_many_threads_never_hold_more_than_the_pool_and_all_finish() -> None:
    workers, alive, lock = _fakes(40)
    pool = WorkerPool(3)
    most = [0]

    def use(worker: Fake) -> None:
        pool.acquire(worker)
        worker.start()
        with lock:
            most[0] = max(most[0], len(alive))
        time.sleep(0.005)
        pool.release(worker, keep=worker.name.endswith(("1", "3", "5")))

    threads = [threading.Thread(target=use, args=(w,)) for w in workers for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(t.is_alive() for t in threads)  # nobody waits forever
    assert most[0] <= 3
    assert pool.peak <= 3


def test_a_dropped_idle_worker_is_stopped_and_a_busy_one_is_left_alone() -> None:
    (a, b), _, _ = _fakes(2)
    pool = WorkerPool(2)
    pool.acquire(a)
    pool.acquire(b)
    pool.release(a)
    pool.drop(a)
    pool.drop(b)
    assert a.suspended == 1
    assert b.suspended == 0
    assert pool.holding() == 1


def test_the_default_follows_memory_within_the_concurrency() -> None:
    gib = 2**30
    assert default_workers(16, memory=32 * gib) == 16  # room for all: the concurrency
    assert default_workers(64, memory=32 * gib) == 64
    assert default_workers(16, memory=2 * gib) == 8  # a quarter of 2 GiB, 64 MiB each
    assert default_workers(16, memory=256 * 2**20) == 4  # never fewer than 4
    assert default_workers(1, memory=32 * gib) == 1  # nor more than are explored at once


def test_without_a_memory_figure_the_default_follows_the_cores() -> None:
    assert default_workers(16, cpus=2, memory=None) == 4
    assert default_workers(16, cpus=6, memory=None) == 12
    assert default_workers(16, cpus=64, memory=None) == 16
    assert default_workers(1, cpus=8, memory=None) == 1


def test_the_memory_figure_is_read_where_the_kernel_gives_it() -> None:
    import sys

    found = available_memory()
    if sys.platform.startswith("linux"):
        assert found is not None
        assert found > 0
    else:
        assert found is None
