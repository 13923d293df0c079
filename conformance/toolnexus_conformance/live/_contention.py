"""How long the processes running a tool waited for a CPU: how far its search stretches.

The search's budgets are wall seconds. On a machine with more work than cores they
stretch (``_search.search_stretch``, from the load and the CPUs' pressure), so that a
search buys the calls it buys on a quiet machine. That holds for a tool whose calls
compute. A tool whose calls wait (a sleep, a timer, a remote service) takes as long on
a busy machine as on a quiet one, and a stretched budget only buys it more calls: the
reference MCP server's ``trigger-long-running-operation`` (ten seconds a call) was
called once on a quiet machine and six times at a load of two per core, and the
server's whole run took 53 s instead of 13.

Linux counts, for each thread, the time it was ready to run but waited for a CPU
(``/proc/PID/task/TID/schedstat``, its second field). Over a tool's first calls, the
thread of its processes that waited longest says which share of the wall time went to
waiting for a CPU: as much as the load says for a tool that computes, next to nothing
for one that sleeps. Where that cannot be read (not Linux, a process gone), the
machine's stretch stands.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from ._crashes import connection_of

#: The shortest span of a tool's own calls that says how it spends its time: over a
#: fast tool's few milliseconds the machine's stretch stands.
MIN_WINDOW = 1.0
#: How often a process group's members are read again (``group_members``).
RENAME = 5.0


def thread_waits(pids: Iterable[int]) -> dict[tuple[int, int], int] | None:
    """Nanoseconds each thread of ``pids`` has waited for a CPU since it started, by
    (pid, thread id); ``None`` where no process's threads could be read."""
    waits: dict[tuple[int, int], int] = {}
    read = False
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as handle:
                    fields = handle.read().split()
                waits[(pid, int(tid))] = int(fields[1])
            except (OSError, ValueError, IndexError):
                continue  # ended meanwhile
            read = True
    return waits if read else None


def group_members(pgid: int) -> list[int]:
    """The processes of a process group (an MCP server and what it started), by ``/proc``.

    Read again at most every ``RENAME`` seconds: the tools of one server share it, and
    finding it reads every process's entry.
    """
    from toolnexus_ref.mcp._stdio import group_states  # only MCP servers have groups

    now = time.monotonic()
    known = _GROUPS.get(pgid)
    if known is not None and now - known[0] < RENAME:
        return known[1]
    members = list(group_states(pgid) or ()) or [pgid]
    _GROUPS[pgid] = (now, members)
    return members


#: Each process group's members as last read, and when (``group_members``).
_GROUPS: dict[int, tuple[float, list[int]]] = {}


def processes_of(subject: Any) -> Callable[[], list[int]]:
    """The processes that run a tool's calls: its MCP server's process group, or this
    process (a worker's, where the tool is imported; the session's otherwise). An MCP
    server reached over HTTP has none here."""
    connection = connection_of(subject)
    if connection is None:
        return lambda: [os.getpid()]

    def group() -> list[int]:
        pid = getattr(getattr(connection, "process", None), "pid", None)
        return group_members(pid) if isinstance(pid, int) else []

    return group


class Contention:
    """The waits of a tool's processes since the machine was first seen loaded while
    the tool was explored.

    ``pids`` names the processes that run the tool's calls, asked at each reading (a
    server restarted is another process group; ``processes_of``). Nothing is read
    while the machine is quiet: the window begins with the exploration where
    ``machine`` (the stretch then) says it is loaded, else at the first reading on a
    loaded one.
    """

    def __init__(self, pids: Callable[[], Iterable[int]], machine: float = 1.0) -> None:
        self._pids = pids
        self._started: float | None = None
        self._waits: dict[tuple[int, int], int] | None = None
        if machine > 1.0:
            self._begin()

    def _begin(self) -> None:
        self._started, self._waits = time.monotonic(), thread_waits(self._pids())

    def stretch(self, machine: float, most: float) -> float:
        """``machine`` (the search's stretch), capped by how much the tool's processes
        were held back: wall time over wall time less the longest wait of one of their
        threads, at most ``most``. ``machine`` itself while that says nothing yet."""
        if machine <= 1.0:
            return machine
        if self._started is None:
            self._begin()
        if self._waits is None or self._started is None:
            return machine
        elapsed = time.monotonic() - self._started
        if elapsed < MIN_WINDOW:
            return machine
        now = thread_waits(self._pids())
        if now is None:
            return machine
        before = self._waits
        waited = max((ns - before.get(key, 0) for key, ns in now.items()), default=0) / 1e9
        held = elapsed / max(elapsed - waited, elapsed / most)
        return min(machine, max(1.0, held))
