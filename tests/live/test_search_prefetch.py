"""A read-only tool's explicit arguments are called a few at a time; any other tool's alone.

The explicit arguments (named values, edge values) are known before the search, and
over MCP most of a fast call is the round trip: a tool marked read-only says
concurrent calls are harmless, so up to ``PREFETCH`` examples are in flight at once.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live import _search

from toolnexus_ref import ToolAnnotations, ToolResult

#: No depth: past its two generated examples, what overlaps is the explicit arguments alone.
OPTIONS = RunOptions(execute=ExecuteMode.ALL, examples=2, depth=0, grace=0.3, call_timeout=2.0)


class Overlapping:
    """Counts how many of its calls overlap; every call takes a little while."""

    name = "overlapping"
    description = "Looks a word up."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"word": {"type": "string", "maxLength": 30}},
        "required": ["word"],
        "additionalProperties": False,
    }

    def __init__(self, *, read_only: bool, pause: float = 0.02) -> None:
        self.annotations = ToolAnnotations(read_only=read_only, idempotent=read_only)
        self.pause = pause
        self._lock = threading.Lock()
        self._now = 0
        self.most = 0

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if not isinstance(args, Mapping) or not isinstance(args.get("word"), str):
            return ToolResult.error("'word' must be a string")
        with self._lock:
            self._now += 1
            self.most = max(self.most, self._now)
        time.sleep(self.pause)
        with self._lock:
            self._now -= 1
        return ToolResult.ok(args["word"])


@pytest.mark.parametrize("read_only", [True, False])
def test_explicit_arguments_overlap_only_for_a_read_only_tool(
    read_only: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)
    tool = Overlapping(read_only=read_only)
    check_tools(tool, select=["TN601"], options=OPTIONS)
    if read_only:
        # Two lanes (with and without a context) per example, several examples at once.
        assert 2 < tool.most <= 2 * _search.PREFETCH
    else:
        assert tool.most == 1


def test_a_slow_read_only_tool_gets_its_explicit_arguments_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ten seconds a call (server-everything's long-running operation): four at once
    would each run past the window, one of them to the call timeout."""
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)
    tool = Overlapping(read_only=True, pause=_search.FAST_CALL + 0.1)
    options = dataclasses.replace(OPTIONS, search_budget=3.0)
    check_tools(tool, select=["TN601"], options=options)
    assert tool.most <= 2  # at most the two lanes of one example, never two examples
