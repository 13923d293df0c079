"""A bound on the worker processes alive at once, shared by loading and exploring.

Each Python target has a worker process (``_isolation.TargetWorker``), and each
costs tens of megabytes and a start-up; a run of a thousand targets cannot have
them all at once. A worker holds one of the pool's slots while it is in use
(loading its target, or exploring one of its tools) and may keep it afterwards,
idle, so that its next use does not start it again. A use that finds every slot
taken stops an idle worker (``suspend``: the next use starts and imports it
again) rather than wait; it waits only while every slot is in use, and uses
always end, so loading never waits on an exploration that has not begun.
"""

from __future__ import annotations

import itertools
import os
import threading
from typing import Protocol

__all__ = [
    "WORKER_MEMORY",
    "Suspendable",
    "WorkerPool",
    "available_memory",
    "default_workers",
]


class Suspendable(Protocol):
    def suspend(self) -> None:
        """Stop the process; the next use starts it again."""


#: What a worker forked from the warm template costs, its tools' processes included:
#: about 31 MiB of proportional memory each, measured (20 one-tool targets, 4 against
#: 16 workers: ``benchmarks/bench_many_targets.py`` reports the tree's PSS); rounded up.
WORKER_MEMORY = 64 * 2**20
#: The share of the memory available at start that the pool may plan to use.
MEMORY_SHARE = 0.25


def available_memory() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes; ``None`` where there is none."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def default_workers(concurrency: int = 16, cpus: int | None = None, memory: int | None = -1) -> int:
    """As many workers as tools are explored at once, while memory allows; at least 4.

    A worker mostly waits: on its tools' processes, and on the tools themselves
    (a tool that sleeps, or waits on a service, uses no CPU). What bounds the work
    in flight is ``concurrency``, the tools explored at once, across all targets;
    what bounds the workers is memory. Twenty one-tool targets whose tools wait get
    explored side by side, not four at a time. Where the memory available is not
    known (no ``/proc``), twice the cores, as before: a bound that cannot overcommit.
    """
    ceiling = max(concurrency, 1)
    available = available_memory() if memory == -1 else memory
    if available is None:
        cores = cpus if cpus is not None else (os.cpu_count() or 1)
        return max(1, min(max(4, 2 * cores), ceiling))
    affordable = int(available * MEMORY_SHARE) // WORKER_MEMORY
    return max(1, min(max(4, affordable), ceiling))


class WorkerPool:
    """At most ``size`` workers alive; the idle ones are stopped to make room."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._cond = threading.Condition()
        #: Workers holding a slot: how many uses each has going (0: idle, evictable).
        self._uses: dict[Suspendable, int] = {}
        #: When each idle worker last finished a use (the most recent is stopped first:
        #: the oldest are the next to be explored, targets being explored in order).
        self._idle_since: dict[Suspendable, int] = {}
        self._stopping: set[Suspendable] = set()
        self._clock = itertools.count()
        #: The most workers that held a slot at once.
        self.peak = 0

    def acquire(self, worker: Suspendable) -> None:
        """A use of ``worker`` begins; blocks until it holds a slot."""
        victim: Suspendable | None = None
        with self._cond:
            while True:
                if worker in self._stopping:
                    self._cond.wait()
                    continue
                if worker in self._uses:
                    self._uses[worker] += 1
                    self._idle_since.pop(worker, None)
                    return
                if len(self._uses) < self.size:
                    break
                idle = [w for w in self._uses if self._uses[w] == 0]
                if idle:
                    victim = max(idle, key=lambda w: self._idle_since.get(w, -1))
                    del self._uses[victim]
                    self._idle_since.pop(victim, None)
                    self._stopping.add(victim)
                    break
                self._cond.wait()
            self._uses[worker] = 1
            self.peak = max(self.peak, len(self._uses))
        if victim is not None:
            self._stop(victim)

    def release(self, worker: Suspendable, *, keep: bool = True) -> None:
        """A use of ``worker`` ends; without ``keep`` (or its last use), it is stopped now."""
        stop = False
        with self._cond:
            uses = self._uses.get(worker)
            if uses is None:
                return
            if uses > 1:
                self._uses[worker] = uses - 1
                return
            if keep:
                self._uses[worker] = 0
                self._idle_since[worker] = next(self._clock)
            else:
                del self._uses[worker]
                self._idle_since.pop(worker, None)
                self._stopping.add(worker)
                stop = True
            self._cond.notify_all()
        if stop:
            self._stop(worker)

    def drop(self, worker: Suspendable) -> None:
        """``worker`` will not be used again soon: stopped now if it idles in a slot."""
        with self._cond:
            if self._uses.get(worker) != 0:
                return
            del self._uses[worker]
            self._idle_since.pop(worker, None)
            self._stopping.add(worker)
        self._stop(worker)

    def holding(self) -> int:
        with self._cond:
            return len(self._uses)

    def _stop(self, worker: Suspendable) -> None:
        try:
            worker.suspend()
        finally:
            with self._cond:
                self._stopping.discard(worker)
                self._cond.notify_all()
