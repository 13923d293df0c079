"""What one exploration of a tool saw, which every live check judges.

A tool is explored once per run (``_explorer``): streams of valid and invalid
arguments, calls without a context, cancellations, a deadline, concurrent calls.
Each live check then reads the part it concerns. The per-call rules of the
streams are registered here by the check modules, so one call is judged by every
rule that concerns it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .._model import Fail, Finding, KitFailure, Skip
from .._subject import ToolSubject
from ._crashes import ServerCrash
from ._search import Call, Failure, Judge, Property, SearchResult

__all__ = [
    "PROPERTIES",
    "CancelDuring",
    "Observation",
    "Phase",
    "Stream",
    "TaskCancel",
    "per_call",
    "properties_for",
]


class Stream(StrEnum):
    """A search over generated arguments; each call is judged by every rule of the stream."""

    VALID = "valid"
    INVALID = "invalid"
    NO_CONTEXT = "no-context"


class Phase(StrEnum):
    """A part of the exploration a check may need; the runner makes only the needed ones."""

    VALID = "valid"
    INVALID = "invalid"
    NO_CONTEXT = "no-context"
    CANCEL_BEFORE = "cancel-before"
    CANCEL_DURING = "cancel-during"
    DEADLINE = "deadline"
    TASK_CANCEL = "task-cancel"
    CONCURRENT = "concurrent"
    #: MCP only: after the cancelled call, is the server still answering, and quiet?
    MCP_AFTER_CANCEL = "mcp-after-cancel"


#: Per-call rules by stream, in registration order: ``{stream: {code: judge}}``.
PROPERTIES: dict[Stream, dict[str, Judge]] = {stream: {} for stream in Stream}


def per_call(code: str, stream: Stream) -> Callable[[Judge], Judge]:
    """Register ``judge`` as check ``code``'s rule for every call of ``stream``."""

    def register(judge: Judge) -> Judge:
        PROPERTIES[stream][code] = judge
        return judge

    return register


def properties_for(stream: Stream, codes: frozenset[str] | None) -> list[Property]:
    return [
        Property(code, judge)
        for code, judge in PROPERTIES[stream].items()
        if codes is None or code in codes
    ]


@dataclass(frozen=True, slots=True)
class CancelDuring:
    """The call cancelled from another thread while it ran."""

    call: Call
    #: ``time.monotonic()`` when the cancel fired, or ``None`` if the call ended first.
    fired: float | None
    #: Seconds into the call the cancel came, or was due when the call ended first; for
    #: a watched MCP call, when it came (once the server had the call) or the call ended.
    after: float
    #: MCP: what went wrong when the server was asked to list its tools afterwards.
    server_problem: str | None = None
    #: MCP: seconds after the cancellation at which progress still arrived.
    late_progress: tuple[float, ...] = ()
    progress_total: int = 0
    #: MCP: whether the server could be watched after the cancellation at all.
    watched: bool = False


@dataclass(frozen=True, slots=True)
class TaskCancel:
    """The asyncio task awaiting execute, cancelled while it ran."""

    args: Any
    #: "propagated", "finished-first", "still-running", "swallowed"
    what: str
    detail: str = ""


@dataclass(slots=True)
class Observation:
    """Everything one exploration of one tool saw; checks read, never call."""

    subject: ToolSubject
    #: Why the tool was not called at all (safety, execute mode); checks skip with it.
    not_called: str | None = None
    streams: dict[Stream, SearchResult] = field(default_factory=dict)
    #: Why a stream could not run (its arguments cannot be generated, ...).
    stream_skips: dict[Stream, str] = field(default_factory=dict)
    simplest: Any = None
    simplest_skip: str | None = None
    cancel_before: Call | None = None
    cancel_during: CancelDuring | None = None
    deadline: Call | None = None
    #: The deadline ``deadline``'s call had: 0.2 s, or sooner when a success past it
    #: was made again (``_probes.recheck``).
    deadline_after: float = 0.2
    task_cancel: TaskCancel | None = None
    concurrent: Failure | None = None
    concurrent_skip: str | None = None
    #: The first call that did not come back within the call timeout.
    unresponsive: Call | None = None
    #: The tool blocked the event loop (an ``async def`` that never awaits).
    blocked_loop: str | None = None
    #: Our own failure while exploring: never held against the tool.
    error: str | None = None
    #: ``error`` is the kit's failure (``KitFailure``: the run does not pass), not a limit.
    kit_failed: bool = False
    #: The exploration stopped at its server's exit; it is made again on the restarted
    #: server, unless the kit fails first (then the skip it says is the kit's failure).
    interrupted: bool = False
    #: The exploration ran out of memory, threads or processes: the tool's doing.
    exhausted: str | None = None
    #: MCP: a call of this tool ends its server, reproduced on a fresh one (TN606).
    crashed: ServerCrash | None = None
    calls: int = 0
    elapsed: float = 0.0
    #: The run's bound on one call, for messages.
    call_timeout: float = 0.0
    #: How far a bound on this tool's calls stretches on this machine, as its processes
    #: were held back while it was explored (``_contention``); ``None``: the load's.
    stretch: float | None = None
    #: Makes the timing probes again when nothing else is in flight, if their verdict
    #: could be contention's doing (``Explorations`` calls it at the end of a batch).
    recheck: Callable[[], Awaitable[bool]] | None = None

    # -- what checks read -------------------------------------------------------------
    def _explored(self) -> None:
        """Raise unless the exploration ran: not called, exhausted, failed, crashed, blocked."""
        if self.not_called is not None:
            raise Skip(self.not_called)
        if self.exhausted is not None:
            raise Fail(Finding(self.exhausted))
        if self.error is not None:
            raise (KitFailure if self.kit_failed else Skip)(self.error)
        if self.crashed is not None:
            # A server left answering nothing is TN803's finding (a call that never
            # answers), not TN606's: its process was ended by the kit, not by the call.
            said_by = "TN803" if self.crashed.silent else "TN606"
            raise Skip(f"not judged: {self.crashed.short()} ({said_by})")
        if self.blocked_loop is not None:
            raise Skip(f"not judged: {self.blocked_loop} (TN501)")

    def usable(self) -> None:
        """Skip unless the tool was called and came back at all."""
        self._explored()
        if self.unresponsive is not None:
            raise Skip(f"not judged: the tool did not answer within {self.call_timeout:g}s (TN803)")

    def stream(self, stream: Stream) -> SearchResult:
        """A stream's calls and failures, or ``Skip`` saying why there are none."""
        self.usable()
        if stream in self.stream_skips:
            raise Skip(self.stream_skips[stream])
        found = self.streams.get(stream)
        if found is None:
            raise Skip(f"the {stream.value} stream was not explored")
        if found.skipped is not None:
            raise Skip(found.skipped)
        return found

    def call_count(self) -> int:
        """Calls made by the streams (the single-call probes are a handful more)."""
        return sum(len(result.calls) for result in self.streams.values())

    def needs_simplest(self) -> Any:
        """The simplest arguments the single-call probes used, or ``Skip`` saying why none."""
        self._explored()
        if self.simplest_skip is not None:
            raise Skip(self.simplest_skip)
        return self.simplest
