"""A slow tool's search begins no call that would end past its budget.

A tool whose calls take ten seconds (server-everything's long-running operation)
was called again two seconds before its budget ended, so each stream of its search
ran a call longer than the budget: 30 s to explore it where 10 s did before. The
next call is now expected to take as long as the last, and begun only if it fits.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from _slow_tools import SleepsOnValid
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live import _search

from toolnexus_ref import ToolResult

#: How long a valid call takes, and the search's budget: shorter than one call.
CALL = 1.0
BUDGET = 0.5


def test_a_call_longer_than_what_is_left_of_the_budget_is_not_begun(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)  # the budget as given, at any load
    options = RunOptions(execute=ExecuteMode.ALL, examples=3, grace=0.3, call_timeout=3 * CALL)
    tool = SleepsOnValid(CALL)
    check_tools(tool, select=["TN601"], options=dataclasses.replace(options, search_budget=BUDGET))
    # The simplest arguments (called before the search, whatever the budget), and the
    # search's first call (nothing says yet how long one takes); then no call fits.
    assert tool.valid_calls == 2


#: The names a slow lookup knows: data (a list), which the kit does not read from the
#: code as values to call, so only the description names them.
KNOWN = ["alpha", "beta", "gamma"]


class SlowNamed:
    """Slow for the names its description quotes; every other word is refused at once."""

    name = "slow_named"
    description = "Looks a name up in a second."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "A name, e.g. 'alpha', 'beta' or 'gamma'."}
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.named: list[str] = []

    def execute(self, args: Any, ctx: Any = None) -> Any:
        name = args.get("name") if isinstance(args, Mapping) else None
        if name not in KNOWN:
            return ToolResult.error(f"unknown name {name!r}")
        self.named.append(name)
        time.sleep(CALL)
        return ToolResult.ok(name)


def test_an_explicit_value_is_not_begun_past_the_explicit_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The explicit values of a slow tool get half a budget: 1.5 s here. The first named
    value takes a second; the second would end at 2 s, past the window, so it is not
    begun (it was, before: a server-everything edge value then ran to the call timeout)."""
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)
    options = RunOptions(execute=ExecuteMode.ALL, examples=1, grace=0.3, call_timeout=3 * CALL)
    tool = SlowNamed()
    check_tools(tool, select=["TN601"], options=dataclasses.replace(options, search_budget=3.0))
    assert tool.named[:1] == ["alpha"]
    assert "beta" not in tool.named
