"""Known-bad timing (TN70x, TN80x, TN90x): cancels ignored, deadlines overrun, calls mixed up."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from toolnexus_conformance.corpus import Entry

from toolnexus_ref import ToolAnnotations, ToolResult

_EMPTY: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
#: How long a tool works before it answers: past the latest a cancel "a moment in"
#: lands (0.05 s, stretched up to tenfold by a busy machine's load), so the cancel
#: always finds it working. A shorter window let it finish first under load, and a
#: check it is here to trip then passed.
WORK = 1.0


class _Duck:
    name = "duck"
    description = "A tool of the live corpus."
    source = "custom"
    input_schema: Mapping[str, Any] = _EMPTY

    def refuse(self, args: Any) -> ToolResult | None:
        if not isinstance(args, Mapping) or args:
            return ToolResult.error("this tool takes no arguments")
        return None


class IgnoresEarlyCancel(_Duck):
    name = "ignores_early_cancel"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        return self.refuse(args) or ToolResult.ok("done")


class SlowCleanupOnCancel(_Duck):
    name = "slow_cleanup_on_cancel"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        if ctx is not None and ctx.wait(WORK):
            time.sleep(2.0)  # "cleanup" that ignores the grace period
            return ToolResult.error("Cancelled")
        return ToolResult.ok("done")


class SwallowsTaskCancel(_Duck):
    name = "swallows_task_cancel"

    async def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        try:
            await asyncio.sleep(0.3)
        except asyncio.CancelledError:
            return ToolResult.error("Cancelled")  # swallowed: the task never learns
        return ToolResult.ok("done")


class FinishesAnywayOnCancel(_Duck):
    name = "finishes_anyway_on_cancel"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        if ctx is not None and ctx.wait(WORK):
            return ToolResult.ok("partial results")  # success although it was cancelled
        return ToolResult.ok("done")


class IgnoresDeadline(_Duck):
    name = "ignores_deadline"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        if ctx is not None and ctx.deadline is not None:
            time.sleep(1.5)  # works on, whatever the deadline says
        return ToolResult.ok("done")


class LateSuccess(_Duck):
    name = "late_success"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        if ctx is not None and ctx.deadline is not None:
            time.sleep(0.35)  # past the deadline but within the grace period
        return ToolResult.ok("done")


class SharedState(_Duck):
    """Read-only and idempotent by its hints, but it keeps the call's input on itself."""

    name = "shared_state"
    annotations = ToolAnnotations(read_only=True, idempotent=True)
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.current: Any = None

    async def execute(self, args: Any, ctx: Any = None) -> Any:
        if not isinstance(args, Mapping) or not isinstance(args.get("n"), int):
            return ToolResult.error("'n' must be an integer")
        self.current = args["n"]
        await asyncio.sleep(0.01)
        return ToolResult.ok(f"n={self.current}")


CORPUS = [
    Entry(IgnoresEarlyCancel(), frozenset({"TN701"}), "does the work although ctx was cancelled"),
    Entry(SlowCleanupOnCancel(), frozenset({"TN702"}), "on cancel, a 2 s cleanup past the grace"),
    Entry(SwallowsTaskCancel(), frozenset({"TN703"}), "turns CancelledError into a result"),
    Entry(FinishesAnywayOnCancel(), frozenset({"TN704"}), "returns success after a cancel"),
    Entry(IgnoresDeadline(), frozenset({"TN801"}), "sleeps 1.5 s whatever the deadline"),
    Entry(LateSuccess(), frozenset({"TN802"}), "returns success 0.35 s in, past a 0.2 s deadline"),
    Entry(
        SharedState(), frozenset({"TN901"}), "answers concurrent calls with another call's input"
    ),
]
