"""Tools of the contract (BaseTool), for ``toolnexus-serve served_tools:TOOLS`` in tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from toolnexus_ref import BaseTool, ToolAnnotations, ToolContext


class Greet(BaseTool):
    name = "greet"
    description = "Greet someone by name."
    input_schema = {
        "type": "object",
        "properties": {"who": {"type": "string"}},
        "required": ["who"],
    }
    annotations = ToolAnnotations(read_only=True, destructive=False)

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> str:
        return f"hello {args['who']}"


class Nap(BaseTool):
    """Async, cooperative: returns as soon as its context is cancelled."""

    name = "nap"
    description = "Sleep for the given seconds unless cancelled."
    input_schema = {"type": "object", "properties": {"seconds": {"type": "number"}}}
    annotations = ToolAnnotations(read_only=True)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> str:
        await asyncio.sleep(float(args.get("seconds", 1)))
        return "rested"


class Spin(BaseTool):
    """Sync, in a thread: it can only stop by watching its context."""

    name = "spin"
    description = "Busy-wait in a thread until cancelled; report whether it saw the cancel."
    input_schema = {"type": "object", "properties": {"seconds": {"type": "number"}}}
    seen: list[str] = []

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> str:
        deadline = time.monotonic() + float(args.get("seconds", 5))
        while time.monotonic() < deadline:
            if ctx is not None and ctx.is_cancelled():
                Spin.seen.append(ctx.cancel_reason or "")
                return "stopped"
            time.sleep(0.01)
        return "spun"


class Broken(BaseTool):
    name = "broken"
    description = "Always raises inside execute (a buggy tool)."
    input_schema = {"type": "object", "properties": {}}

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> Any:
        raise RuntimeError("bug in the tool")

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> str:  # pragma: no cover
        return ""


TOOLS = [Greet(), Nap(), Spin(), Broken()]
