"""Tools that end, crash or freeze the process they run in, and the tools beside them.

In pytest's own process each of these ends the session (``os._exit(0)``: a green
build with no verdicts) or stops it for good. They are checked in a worker
process, one process per tool (``check_target``): each must get its TN606 finding
and the run must go on. The corpus test runs them by their ``spec``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolnexus_conformance.corpus import Entry

from toolnexus_ref import ToolResult

_EMPTY: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
#: What ``LeavesChildren`` starts: a sleep long enough to be seen, marked so a test can find it.
ORPHAN_SECONDS = "86399.123"
#: The file ``WritesLate`` leaves in whatever directory it finds itself in.
LATE_FILE = "config.json"


class _Duck:
    name = "duck"
    description = "A hostile tool of the process corpus: what it does is in its class name."
    source = "custom"
    input_schema: Mapping[str, Any] = _EMPTY

    def execute(self, args: Any, ctx: Any = None) -> Any:
        return ToolResult.ok("fine")


class ExitsZero(_Duck):
    name = "exits_zero"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        os._exit(0)


class ExitsThree(_Duck):
    name = "exits_three"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        print("giving up", file=sys.stderr, flush=True)
        os._exit(3)


class Segfaults(_Duck):
    name = "segfaults"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(5)
        return ToolResult.ok("unreachable")


class HoldsTheGil(_Duck):
    """A regular expression that backtracks for ever: ``re`` never releases the GIL."""

    name = "holds_the_gil"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        re.match(r"(a|aa)+$", "a" * 200 + "b")
        return ToolResult.ok("unreachable")


class FreezesTheClock(_Duck):
    """What ``freezegun`` does to a process, left in place; then a call that never returns.

    In-process, the frozen clock stopped every later bound of the session, so the
    hanging call was never given up and the run never ended.
    """

    name = "freezes_the_clock"
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"n": {"type": "integer", "description": "Any number."}},
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.calls = 0

    def execute(self, args: Any, ctx: Any = None) -> Any:
        self.calls += 1
        if self.calls == 1:
            frozen = time.monotonic()
            time.monotonic = lambda: frozen
            return ToolResult.ok("the time is now fixed")
        threading.Event().wait()
        return ToolResult.ok("unreachable")


class RemovesAVariable(_Duck):
    name = "removes_a_variable"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        os.environ.pop("TOOLNEXUS_CORPUS_KEY", None)
        return ToolResult.ok("removed")


class NeedsTheVariable(_Duck):
    """Healthy while the environment holds what it was started with."""

    name = "needs_the_variable"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if ctx is not None and ctx.is_cancelled():
            return ToolResult.error("Cancelled")
        if "TOOLNEXUS_CORPUS_KEY" not in os.environ:
            raise KeyError("TOOLNEXUS_CORPUS_KEY")
        return ToolResult.ok("the key is there")


class LeavesChildren(_Duck):
    name = "leaves_children"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        subprocess.Popen(["sleep", ORPHAN_SECONDS])
        return ToolResult.ok("started a helper")


class WritesLate(_Duck):
    """Writes into its working directory after its call was abandoned (a slow save)."""

    name = "writes_late"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        time.sleep(float(os.environ.get("TOOLNEXUS_CORPUS_LATE", "3")))
        Path(LATE_FILE).write_text("{}")
        return ToolResult.ok("saved")


class KillsItsWorker(_Duck):
    """Signals the process that started its own (``os.getppid()``): the worker, under the kit."""

    name = "kills_its_worker"
    signum = signal.SIGKILL

    def execute(self, args: Any, ctx: Any = None) -> Any:
        os.kill(os.getppid(), self.signum)
        time.sleep(1.0)  # its own process is killed with the worker's: it never returns
        return ToolResult.ok("the worker is gone")


class TermsItsWorker(KillsItsWorker):
    name = "terms_its_worker"
    signum = signal.SIGTERM


#: The address space a memory bomb allows itself past what its process holds already.
BOMB_HEADROOM = 64 << 20
_HOARD: list[bytearray] = []


class MemoryBomb(_Duck):
    """Caps its process's address space (RLIMIT_AS), then allocates until MemoryError and keeps it.

    The kit's own next allocation in that process fails too: the exploration runs
    out of memory, which is the tool's doing.
    """

    name = "memory_bomb"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        import resource

        if not _HOARD:
            size = int(re.findall(r"VmSize:\s+(\d+)", Path("/proc/self/status").read_text())[0])
            cap = size * 1024 + BOMB_HEADROOM
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        for chunk in (8 << 20, 64 << 10):  # big pieces first, then what is left
            try:
                while True:
                    _HOARD.append(bytearray(chunk))
            except MemoryError:
                pass
        return ToolResult.ok("holding it all")


exits_zero = ExitsZero()
exits_three = ExitsThree()
segfaults = Segfaults()
holds_the_gil = HoldsTheGil()
freezes_the_clock = FreezesTheClock()
kills_its_worker = KillsItsWorker()
terms_its_worker = TermsItsWorker()
memory_bomb = MemoryBomb()
#: A target of two: the first removes what the second needs. Apart, both are judged alone.
neighbours = [RemovesAVariable(), NeedsTheVariable()]
leaves_children = LeavesChildren()
writes_late = WritesLate()

_ENDS = "ends its process"
CORPUS = [
    Entry(
        exits_zero, frozenset({"TN606"}), f"{_ENDS} with status 0", spec="live_process:exits_zero"
    ),
    Entry(
        exits_three, frozenset({"TN606"}), f"{_ENDS} with status 3", spec="live_process:exits_three"
    ),
    Entry(
        segfaults,
        frozenset({"TN606"}),
        "kills its process with SIGSEGV",
        spec="live_process:segfaults",
    ),
    Entry(
        holds_the_gil,
        frozenset({"TN606"}),
        "holds the GIL for ever: no thread of its process runs again",
        spec="live_process:holds_the_gil",
    ),
    Entry(
        freezes_the_clock,
        frozenset({"TN606"}),
        "replaces time.monotonic: every later bound of its process stops",
        spec="live_process:freezes_the_clock",
    ),
    Entry(
        kills_its_worker,
        frozenset({"TN606"}),
        "SIGKILLs the worker process that started its own",
        spec="live_process:kills_its_worker",
    ),
    Entry(
        memory_bomb,
        frozenset({"TN606"}),
        "allocates until MemoryError under its own RLIMIT_AS, and keeps it",
        spec="live_process:memory_bomb",
    ),
]
