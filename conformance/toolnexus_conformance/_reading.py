"""Reading foreign objects in bounded time: a property that never returns is a finding, not a hung run.

The static checks read every tool's declaration in the process that loaded it (the
worker process of a Python target, for the plugin; pytest's own for MCP servers and
in-process targets). A property that raises is easy to contain; one that never returns
(it waits on a lock, polls a server that is down, loops forever) would stop the
run for good. So the reads of a whole sequence of objects are made on one daemon
thread while the caller waits:

- the reader says where it is (which object, which step) and since when;
- the caller sleeps until the current step's bound would pass, and wakes early
  when the reader finishes; a read that made progress resets the bound;
- a step that made no progress for ``limit`` seconds is ``Hung``; the object's
  remaining steps are ``NotRead``, the thread is abandoned (a daemon, it cannot keep
  the process alive), and a fresh thread reads on from the next object.

One thread hand-off per call, not per attribute: ten thousand healthy tools cost one
thread start and a few wake-ups. A read that spins in pure Python still lets the
caller run, since the interpreter makes a running thread hand over the GIL every few
milliseconds; the abandoned thread goes on spinning, and costing CPU, until the
process ends. A read that hangs inside C code while holding the GIL cannot be bounded
from inside the process: nothing else in it runs until that code returns.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ATTRIBUTE_LIMIT",
    "Hung",
    "NotRead",
    "Raised",
    "Step",
    "attribute_limit",
    "current_limit",
    "read_bounded",
]

#: How long (seconds) one read of a foreign object may go without returning. A
#: declaration attribute is a value or a cheap computation; five seconds is far past
#: any honest one, and short enough that a hung property costs little.
ATTRIBUTE_LIMIT = 5.0

_LIMIT: ContextVar[float] = ContextVar("toolnexus_attribute_limit", default=ATTRIBUTE_LIMIT)

#: One named read: given the object and the values its earlier steps returned.
Step = tuple[str, Callable[[Any, dict[str, Any]], Any]]


@contextmanager
def attribute_limit(seconds: float) -> Iterator[None]:
    """Reads begun inside this block, by callers that give no bound, use ``seconds``.

    For callers that cannot pass the bound down (the plugin's collection, whose
    reads happen inside code that takes no options).
    """
    token = _LIMIT.set(seconds)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def current_limit() -> float:
    """The bound a read gets when its caller gives none."""
    return _LIMIT.get()


@dataclass(frozen=True, slots=True)
class Raised:
    """The step raised (anything, ``SystemExit`` included); ``error`` is ``Type: message``."""

    error: str


@dataclass(frozen=True, slots=True)
class Hung:
    """The step did not return within ``limit`` seconds; its thread was abandoned."""

    limit: float

    def __str__(self) -> str:
        return f"did not return within {self.limit:g}s"


@dataclass(frozen=True, slots=True)
class NotRead:
    """The step was never made: step ``after`` of the same object hung first."""

    after: str
    limit: float

    def __str__(self) -> str:
        return (
            f"reading {self.after!r} did not return within {self.limit:g}s, so nothing"
            " more was read from this tool"
        )


def _describe(exc: BaseException) -> str:
    try:
        return f"{type(exc).__name__}: {exc}"
    except BaseException:  # a hostile __str__
        return f"{type(exc).__name__} (its message cannot be shown)"


class _Pass:
    """One reader thread's work: ``objects[start:]``, every step of each, in order."""

    __slots__ = ("abandoned", "at", "done", "objects", "results", "start", "steps")

    def __init__(self, objects: Sequence[Any], steps: Sequence[Step], start: int) -> None:
        self.objects = objects
        self.steps = steps
        self.start = start
        self.results: dict[int, dict[str, Any]] = {}
        #: ``(object index, step index, monotonic time it began)``, replaced (never
        #: mutated) at each step, so the caller can tell progress by identity.
        self.at: tuple[int, int, float] = (start, 0, time.monotonic())
        self.abandoned = False
        self.done = threading.Event()

    def run(self) -> None:
        try:
            for index in range(self.start, len(self.objects)):
                target = self.objects[index]
                values: dict[str, Any] = {}
                self.results[index] = values
                for number, (name, read) in enumerate(self.steps):
                    if self.abandoned:  # the caller gave up on us; touch nothing more
                        return
                    self.at = (index, number, time.monotonic())
                    try:
                        values[name] = read(target, values)
                    except BaseException as exc:  # even SystemExit: a verdict, not an exit
                        values[name] = Raised(_describe(exc))
        finally:
            self.done.set()


def read_bounded(
    objects: Sequence[Any], steps: Sequence[Step], *, limit: float | None = None
) -> list[dict[str, Any]]:
    """For each object, each step's value by name; never raises, never waits forever.

    A step that raised is ``Raised``; one that made no progress for ``limit``
    seconds (``current_limit()`` when ``None``; times the load per core on a busy
    machine, ``live._search.stretch``) is ``Hung``, and the object's later
    steps are ``NotRead``. The other objects are read normally, on a fresh thread.
    """
    bound = current_limit() if limit is None else limit
    out: list[dict[str, Any]] = [{} for _ in objects]
    start = 0
    while start < len(objects):
        job = _Pass(objects, steps, start)
        threading.Thread(target=job.run, name="toolnexus-read", daemon=True).start()
        start = _wait(job, bound, out)
    return out


def _wait(job: _Pass, limit: float, out: list[dict[str, Any]]) -> int:
    """Wait for ``job``; fill ``out`` with what it read. Returns where the next pass starts."""
    steps = job.steps
    load: float | None = None  # read once a step has run ``limit``: most reads never do
    while True:
        at = job.at
        if job.done.wait(max(0.0, at[2] + limit * (load or 1.0) - time.monotonic())):
            for index in range(job.start, len(job.objects)):
                out[index] = _complete(job.results.get(index, {}), steps)
            return len(job.objects)
        if job.at is not at:
            continue  # it moved on while we woke: a fresh bound for the new step
        if load is None:
            # Wall seconds, as the calls' bounds are, so stretched by the load as they
            # are: in a process just forked on a busy machine a plain attribute can
            # wait a second for a core, and a tool would be "hung" for the wait.
            from .live._search import stretch

            load = stretch()
            if load > 1.0:
                continue
        job.abandoned = True
        index, number, _ = at
        for earlier in range(job.start, index):
            out[earlier] = job.results[earlier]
        # A copy: the abandoned thread may still write its late value into its own.
        values = dict(job.results.get(index, {}))
        hung = steps[number][0]
        values[hung] = Hung(limit)
        for name, _read in steps[number + 1 :]:
            values[name] = NotRead(hung, limit)
        out[index] = values
        return index + 1


def _complete(values: dict[str, Any], steps: Sequence[Step]) -> dict[str, Any]:
    """Every step present; one the thread never reached (it died mid-way) says so."""
    for name, _read in steps:
        if name not in values:
            values[name] = Raised("the read stopped before reaching it")
    return values
