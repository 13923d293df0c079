"""Once a search's budget is spent it draws no more examples, and reports its smallest failure.

Past the budget no call is made, so a shrink could only draw candidates that pass
uncalled: on a server with fifteen bugs that was half of all draws, and as costly
to make as the search itself. The search now ends at the budget, and each failure
is reported as far as it was shrunk by then.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _searches import map_searches
from hypothesis import Phase
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live import _search

from toolnexus_ref import ToolResult

CALL = 0.05


class BreaksOverFive:
    """Raises for every count over five: a bug any search finds, and shrinks for long."""

    name = "breaks_over_five"
    description = "Counts up to a number."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string"}}},
        "required": ["items"],
    }

    def __init__(self) -> None:
        self.calls = 0

    def execute(self, args: Any, ctx: Any = None) -> Any:
        self.calls += 1
        time.sleep(CALL)
        items = args.get("items") if isinstance(args, dict) else None
        if isinstance(items, list) and len(items) > 5:
            raise RuntimeError("too many")
        return ToolResult.ok("counted")


def test_no_example_is_drawn_past_the_budget_and_the_failure_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool = BreaksOverFive()
    drawn = [0]

    def counted(value: Any) -> Any:
        drawn[0] += 1
        return value

    map_searches(monkeypatch, counted)
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)  # the budget as given, at any load
    options = RunOptions(execute=ExecuteMode.ALL, examples=5, grace=0.3, call_timeout=2.0, seed=1)
    (verdict,) = check_tools(
        tool, select=["TN601"], options=dataclasses.replace(options, search_budget=0.5)
    )
    assert verdict.outcome is Outcome.FAILED, verdict.message
    assert "too many" in verdict.message
    # Every example drawn was called (a few are drawn twice: hypothesis replays its
    # last failure); none was drawn to be skipped past the budget.
    assert drawn[0] <= tool.calls + 3, (drawn[0], tool.calls)


def test_hypothesis_explains_nothing_the_report_would_not_show() -> None:
    settings = _search._settings(RunOptions())
    assert Phase.explain not in settings.phases
    assert Phase.shrink in settings.phases
    only = _search._settings(RunOptions(), phases=[Phase.generate, Phase.explain])
    assert list(only.phases) == [Phase.generate]


class PassesSlowly:
    """Never fails; each call takes ``CALL``: a search that only its budget can end."""

    name = "passes_slowly"
    description = "Counts items."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }

    def execute(self, args: Any, ctx: Any = None) -> Any:
        time.sleep(CALL)
        return ToolResult.ok("counted")


def test_the_example_a_search_stopped_on_is_not_saved_to_be_replayed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Hypothesis saves the example whose test raised a non-``Exception``, as the search's
    stop is: under load the budget ran out mid-shrink, and the passing candidate then
    under way (``{'n': 500}``) was replayed before the stored failure (``{'n': 1001}``)."""
    monkeypatch.setattr(_search, "stretch", lambda: 1.0)
    options = RunOptions(
        execute=ExecuteMode.ALL,
        examples=1000,  # more than the budget buys: the budget ends the search
        grace=0.3,
        call_timeout=2.0,
        search_budget=0.2,  # calls of 50 ms: it still stops on an example under way
        example_database=tmp_path,  # unseeded: a seeded search saves no example
    )
    (verdict,) = check_tools(PassesSlowly(), select=["TN601"], options=options)
    assert verdict.outcome is Outcome.PASSED, verdict.message
    examples = tmp_path / "examples"
    saved = [p for p in examples.rglob("*") if p.is_file()] if examples.exists() else []
    assert saved == []
