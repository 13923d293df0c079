"""How fast a tool is, for its edge values' window: a call's time shared among its neighbours'.

A fast tool's explicit arguments (edge values, which find the most bugs) may go on
past half a budget, because neighbours slow every call down: the tools of one MCP
server queue behind each other. A call's own cost is its time shared among the
calls of other tools in flight at the same place; the tool's own calls in flight
(its lanes, its streams, its prefetched edge values) are not neighbours.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import Counter
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live import _search
from toolnexus_conformance.live._explorer import place_of

from toolnexus_ref import ToolAnnotations, ToolResult


class Lookup:
    """Read-only, slow alone (half again ``FAST_CALL``); keeps each word it is called with."""

    name = "lookup"
    description = "Looks a word up."
    source = "custom"
    annotations = ToolAnnotations(read_only=True, idempotent=True)
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"word": {"type": "string", "maxLength": 30}},
        "required": ["word"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.words: list[str] = []
        self._lock = threading.Lock()

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if not isinstance(args, Mapping) or not isinstance(args.get("word"), str):
            return ToolResult.error("'word' must be a string")
        with self._lock:
            self.words.append(args["word"])
        time.sleep(1.5 * _search.FAST_CALL)
        return ToolResult.ok(args["word"])


def test_a_read_only_tool_is_as_slow_as_its_calls_not_shared_among_its_own_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its two lanes (with and without a context) are in flight together: counted as
    neighbours, they halved its time, and a tool of 0.75 s a call was "fast", its edge
    values given three budgets where a tool called one call at a time got half of one
    (a one-tool target at 0.7 s a call took 22 s to explore, one at 1 s 11 s)."""
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)
    tool = Lookup()
    options = RunOptions(execute=ExecuteMode.ALL, examples=2, depth=0, grace=0.3)
    options = dataclasses.replace(options, search_budget=2.0, call_timeout=3.0)
    check_tools(tool, select=["TN601", "TN603"], options=options)  # two lanes: a pair a word
    # Half a budget (1 s) of edge values: the simplest arguments, then none that would
    # end past the window. With three budgets it was eight words in 6.3 s.
    assert len(set(tool.words)) <= 3, tool.words


def test_only_other_tools_calls_at_the_same_place_share_a_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_search, "_in_flight", Counter())
    assert _search._enter("server-a", "lookup") == 1
    assert _search._enter("server-a", "lookup") == 1  # its own second call: not company
    assert _search._enter("server-b", "other") == 1  # another server's: not company
    assert _search._enter("server-a", "other") == 3  # two calls of lookup beside it
    assert _search._leave("server-a", "lookup") == 2  # other's call beside it, and itself
    for place, tool in [("server-a", "lookup"), ("server-b", "other"), ("server-a", "other")]:
        _search._leave(place, tool)
    assert not _search._in_flight


def test_the_tools_of_one_mcp_server_share_a_place_and_another_servers_do_not() -> None:
    """An mcp.json is one target of several servers: only a tool's own server queues."""
    first, second = object(), object()

    def subject(source: str, connection: object | None) -> Any:
        extra = {"connection": connection} if connection is not None else {}
        return SimpleNamespace(source=source, target="mcp.json", extra=extra, tool=None)

    assert place_of(subject("mcp", first)) == place_of(subject("mcp", first))
    assert place_of(subject("mcp", first)) != place_of(subject("mcp", second))
    assert place_of(subject("native", None)) == "mcp.json"
