"""A process the tool left without memory is the tool's finding, never a skip.

A tool that hoards memory in its own process (a cap it set itself, a leak) leaves
the search no memory for its next example: hypothesis's draw then raises
``MemoryError``. That was read as the kit failing to generate arguments, and every
live check of the tool skipped, so the tool that used up its process passed
unseen; the exploration now ends as used up (TN606 where the tool has a process of
its own), as when the call itself runs out.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from _searches import map_searches
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_tools

from toolnexus_ref import ToolResult


class Hoarder:
    """Answers; once it has answered, nothing more can be allocated (as under a cap it set)."""

    name = "hoarder"
    description = "Answers at once."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }

    def __init__(self) -> None:
        self.calls = 0

    def execute(self, args: Any, ctx: Any = None) -> Any:
        self.calls += 1
        return ToolResult.ok("ok")


def test_running_out_of_memory_after_the_tools_calls_fails_its_checks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool = Hoarder()

    def no_memory_left(value: Any) -> Any:
        if tool.calls:
            raise MemoryError
        return value

    map_searches(monkeypatch, no_memory_left)
    options = RunOptions(execute=ExecuteMode.ALL, examples=5, grace=0.3, call_timeout=2.0)
    verdicts = check_tools(tool, select=["TN601"], options=options)
    assert tool.calls >= 1  # the simplest arguments were called before the search drew
    (verdict,) = verdicts
    assert verdict.outcome is Outcome.FAILED, verdict.message
    assert "ran out of memory" in verdict.message
