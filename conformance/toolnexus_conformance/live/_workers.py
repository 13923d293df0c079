"""Long-lived daemon threads for the hypothesis searches of a run.

Hypothesis is synchronous, and the first search on a new thread registers a random
generator of its own for that thread, with a ``gc.collect()`` and a
``gc.get_referrers()`` whose cost grows with the heap of the user's test process: a
second or more each in a test session that imported a few agent frameworks. A
thread per search paid that for every search; these workers are kept, and each is
given its generator without the walks (``_own_random``). They are daemons, so a
search wedged by a tool (one that holds the GIL, or a call that never comes back)
cannot keep the interpreter alive; the pool then grows by one so the run goes on.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
from collections.abc import Callable
from random import Random
from typing import Any, TypeVar

from .._imports import import_whole

#: How many times its CPU bound a job may take in wall-clock time on a busy machine.
WALL_FACTOR = 6.0

__all__ = ["SearchWorkers", "shared_workers"]

T = TypeVar("T")

_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


class SearchWorkers:
    """A bounded pool of daemon threads, started on demand and kept for the whole run."""

    def __init__(self, size: int = 4, *, name: str = "toolnexus-search") -> None:
        self._size = max(1, size)
        self._name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._builders: SearchWorkers | None = None

    @property
    def builders(self) -> SearchWorkers:
        """A pool of its own for compiling schemas and finding simplest examples.

        That work never waits for a tool; queued behind searches that wait for a slow
        server, its bound would measure the queue instead of the work.
        """
        with self._lock:
            if self._builders is None:
                self._builders = SearchWorkers(self._size, name="toolnexus-build")
            return self._builders

    @property
    def threads(self) -> int:
        """How many worker threads were started so far (for the benchmarks)."""
        return self._threads

    def resize(self, size: int) -> None:
        with self._lock:
            self._size = max(self._size, size)

    def run(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Run ``fn`` on a worker; the result arrives as a future of the running loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        bound = contextvars.copy_context().run
        self._jobs.put((lambda: bound(fn), loop, future))
        with self._lock:
            if self._idle == 0 and self._threads < self._size:
                self._threads += 1
                threading.Thread(
                    target=self._serve, name=f"{self._name}-{self._threads}", daemon=True
                ).start()
            else:
                self._idle -= 1 if self._idle else 0
        return future

    async def bounded(self, fn: Callable[[], T], limit: float) -> tuple[bool, T | None]:
        """Run ``fn`` on a worker for at most ``limit`` seconds of its own CPU time.

        ``(True, result)``, or ``(False, None)`` when ``fn`` is still computing (its
        thread is given up and replaced). Where the thread's CPU clock can be read, the
        bound is on the work itself: on a loaded machine, or while other tools' searches
        share the GIL, a cheap build can take many wall-clock seconds without being
        large. The wall clock is then bounded at ``WALL_FACTOR`` times ``limit``.
        """
        clock: list[int] = []
        started: list[float] = []

        def timed() -> T:
            reader = getattr(time, "pthread_getcpuclockid", None)
            if reader is not None:
                try:
                    clock.append(reader(threading.get_ident()))
                    started.append(time.clock_gettime(clock[0]))
                except OSError:
                    clock.clear()
            return fn()

        work = self.run(timed)
        end = time.monotonic() + WALL_FACTOR * limit
        wait = limit
        while True:
            done, _ = await asyncio.wait({work}, timeout=wait)
            if done:
                return True, work.result()
            left = end - time.monotonic()
            used = time.clock_gettime(clock[0]) - started[0] if clock and started else None
            if used is None or used >= limit or left <= 0:
                self.wedged()
                return False, None
            wait = min(limit - used, left)  # not its CPU yet: contention; keep waiting

    def wedged(self) -> None:
        """A job did not come back in time: its thread is lost, so start another now
        (jobs already queued behind it must not wait for it)."""
        with self._lock:
            self._size += 1
            self._threads += 1
            threading.Thread(
                target=self._serve, name=f"{self._name}-{self._threads}", daemon=True
            ).start()

    def _serve(self) -> None:
        _own_random()
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, loop, future = job
            try:
                value = fn()
            except BaseException as exc:  # delivered to the awaiting task, not lost here
                outcome: tuple[str, Any] = ("exception", exc)
            else:
                outcome = ("result", value)
            try:
                loop.call_soon_threadsafe(_settle, future, outcome)
            except RuntimeError:  # the loop is gone; nobody awaits this any more
                pass
            with self._lock:
                self._idle += 1


def _own_random() -> None:
    """Give this thread hypothesis's per-thread random generator now, unregistered.

    Hypothesis makes it at a thread's first search (``deterministic_PRNG``) and
    registers it among the generators it seeds and restores around every example,
    in whichever thread. Registering checks that something refers to it:
    ``gc.collect()`` then ``gc.get_referrers()``, each a walk of the heap, which grows
    with the user's test process (a second or more once a few agent frameworks are
    imported; 18-26 ms of CPU a thread, 41 threads, on one seeded MCP server). And
    once registered, reseeding one generator per search thread around every example
    was a sixth of a live run on a five-server mcp.json. A thread's generator only
    draws the seed of a search given none (``get_random_for_wrapped_test`` makes it
    the same way, unregistered), never inside an example, so reseeding it buys
    nothing: the thread gets one of its own and hypothesis, finding it made, never
    registers it. The ``random`` module's own generator, which a tool run in this
    process may use, stays managed.
    """
    try:  # after a warm-up under way, never beside it (``IMPORTS``)
        threadlocal: Any = import_whole("hypothesis.core").threadlocal
    except (ImportError, AttributeError):  # moved: the first search makes and registers one
        return
    try:
        if threadlocal._hypothesis_global_random is None:
            threadlocal._hypothesis_global_random = Random()
    except AttributeError:  # no longer hypothesis's name for it: as above
        return


def _settle(future: asyncio.Future[Any], outcome: tuple[str, Any]) -> None:
    if future.done():
        return
    kind, value = outcome
    if kind == "result":
        future.set_result(value)
    else:
        future.set_exception(value)


_shared: SearchWorkers | None = None
_shared_lock = threading.Lock()


def shared_workers(size: int = 4) -> SearchWorkers:
    """The process's pool: every run in this process reuses the same threads."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = SearchWorkers(size)
        else:
            _shared.resize(size)
        return _shared
