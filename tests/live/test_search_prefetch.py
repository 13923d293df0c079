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


class CountsWords(Overlapping):
    """Also keeps each word it was called with (once per call): the search's calls."""

    def __init__(self, *, pause: float) -> None:
        super().__init__(read_only=True, pause=pause)
        self.words: list[str] = []

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if isinstance(args, Mapping):
            with self._lock:
                self.words.append(str(args.get("word")))
        return super().execute(args, ctx)


def test_a_read_only_tool_is_as_slow_as_its_calls_not_shared_among_its_own_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read-only tool's two lanes (and its streams) are in flight together: counted as
    neighbours, they halved its time, and a tool of 0.75 s a call was "fast", its edge
    values given three budgets where a tool called one call at a time got half of one
    (a one-tool target at 0.7 s a call took 22 s, one at 1 s 11 s)."""
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)
    tool = CountsWords(pause=1.5 * _search.FAST_CALL)  # slow alone; "fast" shared by two
    options = dataclasses.replace(OPTIONS, search_budget=2.0, call_timeout=3.0)
    check_tools(tool, select=["TN601", "TN603"], options=options)  # two lanes: a pair a word
    # Half a budget (1 s) of edge values: the simplest arguments, then none that would
    # end past the window. With three budgets it was eight words in 6.3 s.
    assert len(set(tool.words)) <= 3, tool.words


def test_only_other_tools_calls_at_the_same_place_share_a_call() -> None:
    """The share that says how fast a tool is: its neighbours' calls at its place."""
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
    from types import SimpleNamespace

    from toolnexus_conformance.live._explorer import place_of

    first, second = object(), object()

    def subject(source: str, connection: object | None) -> Any:
        extra = {"connection": connection} if connection is not None else {}
        return SimpleNamespace(source=source, target="mcp.json", extra=extra, tool=None)

    assert place_of(subject("mcp", first)) == place_of(subject("mcp", first))
    assert place_of(subject("mcp", first)) != place_of(subject("mcp", second))
    assert place_of(subject("native", None)) == "mcp.json"
