"""A tool that answers valid arguments after a wait: what a search's budget is for."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

from toolnexus_ref import ToolAnnotations, ToolResult


class SleepsOnValid:
    """Refuses anything but ``{"n": <integer>}`` at once; sleeps ``seconds`` on a valid
    call, as a tool waiting on a remote service does, and counts those calls."""

    name = "slow"
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.description = f"Answers valid arguments in {seconds:g} s."
        self.valid_calls = 0

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if not isinstance(args, Mapping) or set(args) != {"n"} or type(args["n"]) is not int:
            return ToolResult.error("'n' must be an integer, and the only argument")
        self.valid_calls += 1
        time.sleep(self.seconds)
        return ToolResult.ok(str(args["n"]))


class ReadOnlySleepsOnValid(SleepsOnValid):
    """Marked read-only: searched with no call made before its search."""

    annotations = ToolAnnotations(read_only=True)
