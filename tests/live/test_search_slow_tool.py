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
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live import _search

from toolnexus_ref import ToolResult

#: How long a valid call takes, and the search's budget: shorter than one call.
CALL = 1.0
BUDGET = 0.5


class Slow:
    name = "slow"
    description = "Answers valid arguments in a second."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.valid_calls = 0

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if not isinstance(args, Mapping) or set(args) != {"n"} or type(args["n"]) is not int:
            return ToolResult.error("'n' must be an integer, and the only argument")
        self.valid_calls += 1
        time.sleep(CALL)
        return ToolResult.ok(str(args["n"]))


def test_a_call_longer_than_what_is_left_of_the_budget_is_not_begun(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)  # the budget as given, at any load
    options = RunOptions(execute=ExecuteMode.ALL, examples=3, grace=0.3, call_timeout=3 * CALL)
    tool = Slow()
    check_tools(tool, select=["TN601"], options=dataclasses.replace(options, search_budget=BUDGET))
    # The simplest arguments (called before the search, whatever the budget), and the
    # search's first call (nothing says yet how long one takes); then no call fits.
    assert tool.valid_calls == 2
