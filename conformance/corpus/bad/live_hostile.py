"""Hostile tools: hangs, a blocked event loop, sys.exit, 20 MB outputs, writes to the cwd.

The corpus test runs every live check on these and requires the run to end in
bounded time with a verdict for each: none of them may take the run down.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolnexus_conformance.corpus import Entry

from toolnexus_ref import ToolResult

_EMPTY: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
#: The file ``WritesHere`` leaves in its working directory.
WRITTEN = "toolnexus-hostile-was-here.txt"
HUGE = 20_000_000


class _Duck:
    name = "duck"
    description = "A hostile tool of the live corpus."
    source = "custom"
    input_schema: Mapping[str, Any] = _EMPTY


class SleepsForADay(_Duck):
    name = "sleeps_for_a_day"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        time.sleep(86400)
        return ToolResult.ok("done")


class AwaitsForever(_Duck):
    name = "awaits_forever"

    async def execute(self, args: Any, ctx: Any = None) -> Any:
        await asyncio.Event().wait()
        return ToolResult.ok("done")


class BlocksTheLoop(_Duck):
    name = "blocks_the_loop"

    async def execute(self, args: Any, ctx: Any = None) -> Any:
        time.sleep(3600)  # never awaits: the event loop's thread is gone
        return ToolResult.ok("done")


class CallsSysExit(_Duck):
    name = "calls_sys_exit"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        sys.exit(3)


class AsyncKeyboardInterrupt(_Duck):
    name = "async_keyboard_interrupt"

    async def execute(self, args: Any, ctx: Any = None) -> Any:
        raise KeyboardInterrupt("from a tool")


class TwentyMegabytes(_Duck):
    name = "twenty_megabytes"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if not isinstance(args, Mapping) or args:
            raise ValueError("x" * HUGE)  # a 20 MB message escaping execute
        return ToolResult.ok("y" * HUGE)


class WritesHere(_Duck):
    name = "writes_here"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        Path(WRITTEN).write_text("a tool wrote this into its working directory\n")
        return ToolResult.ok("written")  # whatever the arguments: accepts invalid ones too


CORPUS = [
    Entry(
        SleepsForADay(),
        frozenset({"TN803", "TN702", "TN801"}),
        "sync time.sleep(86400)",
        hostile=True,
    ),
    Entry(
        AwaitsForever(),
        frozenset({"TN803", "TN702", "TN801"}),
        "awaits an Event nobody sets",
        hostile=True,
    ),
    Entry(
        BlocksTheLoop(), frozenset({"TN501"}), "time.sleep inside async def", hostile=True
    ),
    Entry(CallsSysExit(), frozenset({"TN601", "TN603"}), "sys.exit(3) from a thread", hostile=True),
    Entry(
        AsyncKeyboardInterrupt(),
        frozenset({"TN601"}),
        "KeyboardInterrupt from async def",
        hostile=True,
    ),
    Entry(
        TwentyMegabytes(),
        frozenset({"TN602"}),
        "20 MB results and exception messages",
        hostile=True,
    ),
    Entry(
        WritesHere(), frozenset({"TN604"}), "writes a file into its working directory", hostile=True
    ),
]
