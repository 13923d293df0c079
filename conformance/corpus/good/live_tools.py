"""Known-good live behaviour: quick tools, and tools that honour cancellation sync and async.

None of these may trip any live check.
"""

from __future__ import annotations

import asyncio
import errno
import os
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from toolnexus_conformance.corpus import Entry

from toolnexus_ref import BaseTool, ToolAnnotations, ToolContext, ToolResult
from toolnexus_ref._calling import cancelled_result

_EMPTY: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
#: How long the slow good tools work when nobody stops them.
WORK = 0.25


class Double(BaseTool):
    name = "double"
    description = "Doubles an integer."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 10**6}},
        "required": ["n"],
        "additionalProperties": False,
    }
    annotations = ToolAnnotations(read_only=True, idempotent=True)

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return {"doubled": args["n"] * 2}


class _Duck:
    description = "A well-behaved duck-typed tool."
    source = "custom"
    input_schema: Mapping[str, Any] = _EMPTY

    def refuse(self, args: Any) -> ToolResult | None:
        if not isinstance(args, Mapping) or args:
            return ToolResult.error("this tool takes no arguments")
        return None


class PollingSyncTool(_Duck):
    """Sync work in steps, polling the context between them."""

    name = "polling_sync"

    def execute(self, args: Any, ctx: ToolContext | None = None) -> ToolResult:
        if (refused := self.refuse(args)) is not None:
            return refused
        end = time.monotonic() + WORK
        while time.monotonic() < end:
            if ctx is not None and ctx.is_cancelled():
                return cancelled_result(ctx)
            time.sleep(0.01)
        return ToolResult.ok("done")


class WaitingSyncTool(_Duck):
    """Sync work that blocks in ``ctx.wait`` so a cancel wakes it at once."""

    name = "waiting_sync"

    def execute(self, args: Any, ctx: ToolContext | None = None) -> ToolResult:
        if (refused := self.refuse(args)) is not None:
            return refused
        if ctx is None:
            time.sleep(WORK)
        elif ctx.wait(WORK):
            return cancelled_result(ctx)
        return ToolResult.ok("done")


class RacingAsyncTool(_Duck):
    """Async work raced against ``ctx.wait_cancelled()``; task cancellation just propagates."""

    name = "racing_async"

    async def execute(self, args: Any, ctx: ToolContext | None = None) -> ToolResult:
        if (refused := self.refuse(args)) is not None:
            return refused
        if ctx is None:
            await asyncio.sleep(WORK)
            return ToolResult.ok("done")
        if ctx.is_cancelled():
            return cancelled_result(ctx)
        work = asyncio.ensure_future(asyncio.sleep(WORK))
        stop = asyncio.ensure_future(ctx.wait_cancelled())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            work.cancel()
            stop.cancel()
        if ctx.is_cancelled():
            return cancelled_result(ctx)
        return ToolResult.ok("done")


class SlowBaseTool(BaseTool):
    """A BaseTool whose ``run`` ignores the context: the guarded execute honours it anyway."""

    name = "slow_base_tool"
    description = "Sleeps a little."
    input_schema = _EMPTY

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        await asyncio.sleep(WORK)
        return "done"


class SavesToReadOnlyDisk(BaseTool):
    """Saves a note where the file system refuses writes (the sandbox's read-only project,
    a read-only mount) and says so: every call fails, and the tool is not to blame (TN605)."""

    name = "save_note"
    description = "Saves a note to the notes file."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), "/srv/notes/notes.txt")


class ReadsSpelledNumbers:
    """Reads "3" as 3, as models often send numbers, and refuses every other wrong type."""

    name = "triple"
    description = "Triples an integer."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": -(10**6), "maximum": 10**6}},
        "required": ["n"],
        "additionalProperties": False,
    }

    def execute(self, args: Any, ctx: ToolContext | None = None) -> ToolResult:
        if ctx is not None and ctx.is_cancelled():
            return cancelled_result(ctx)
        if not isinstance(args, Mapping) or set(args) != {"n"}:
            return ToolResult.error("give exactly one argument, 'n'")
        n = args["n"]
        if isinstance(n, str) and n.lstrip("-").isdigit():
            n = int(n)
        if isinstance(n, bool) or not isinstance(n, int) or abs(n) > 10**6:
            return ToolResult.error(f"'n' must be an integer within a million, got {n!r}")
        return ToolResult.ok(str(n * 3))


CORPUS = [
    Entry(Double(), note="a quick BaseTool, read-only and idempotent"),
    Entry(ReadsSpelledNumbers(), note='reads "3" as 3, refuses true and 1.5 (not TN604)'),
    Entry(PollingSyncTool(), note="sync, polls ctx.is_cancelled() between steps"),
    Entry(WaitingSyncTool(), note="sync, blocks in ctx.wait()"),
    Entry(RacingAsyncTool(), note="async, races its work against ctx.wait_cancelled()"),
    Entry(SlowBaseTool(), note="BaseTool's guarded execute honours ctx for a careless run()"),
    Entry(SavesToReadOnlyDisk(), note="every call refused by a read-only file system (not TN605)"),
]
