"""How the runner turns what a check does into a verdict: findings, Skip, Fail, a crash."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolnexus_conformance import (
    Category,
    ExecuteMode,
    Fail,
    Finding,
    Outcome,
    RunOptions,
    Severity,
    Skip,
)
from toolnexus_conformance._model import CheckInfo
from toolnexus_conformance._registry import Check
from toolnexus_conformance._runner import run_check
from toolnexus_conformance._subject import read_subject


class Tool:
    name = "t"
    description = "A tool."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}
    source = "custom"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        return None


def _verdict(body: Any) -> Any:
    info = CheckInfo("TX999", "probe", "probe", Category.NAMING, Severity.ERROR, "why", "fix")
    return run_check(Check(info, body), read_subject(Tool(), "target"), RunOptions())


def _helper_that_fails() -> str:
    raise Fail(Finding("the name cannot be read", path="name"))


def test_a_helper_can_end_the_check_with_its_finding() -> None:
    def body(subject: Any, options: Any) -> Iterable[Finding]:
        _helper_that_fails()
        yield Finding("never reached")

    verdict = _verdict(body)
    assert verdict.outcome is Outcome.FAILED
    assert [(f.message, f.path) for f in verdict.findings] == [("the name cannot be read", "name")]


def test_skip_findings_and_crashes() -> None:
    def skips(subject: Any, options: Any) -> Iterable[Finding]:
        raise Skip("not today")

    def passes(subject: Any, options: Any) -> Iterable[Finding]:
        return []

    def crashes(subject: Any, options: Any) -> Iterable[Finding]:
        raise KeyError("boom")

    skipped = _verdict(skips)
    assert (skipped.outcome, skipped.message) == (Outcome.SKIPPED, "not today")
    assert _verdict(passes).outcome is Outcome.PASSED
    crashed = _verdict(crashes)
    assert crashed.outcome is Outcome.FAILED
    assert crashed.message == "checking this tool raised KeyError: 'boom'"


def test_a_check_returning_a_coroutine_or_a_plain_list_is_judged_as_one_yielding() -> None:
    async def awaits(subject: Any, options: Any) -> list[Finding]:
        return [Finding("found after an await")]

    def lists(subject: Any, options: Any) -> list[Finding]:
        return [Finding("found in a list")]

    assert _verdict(awaits).message == "found after an await"
    assert _verdict(lists).message == "found in a list"


def test_a_live_check_on_a_tool_that_may_not_be_called_is_skipped_as_not_called() -> None:
    def never(subject: Any, options: Any) -> Iterable[Finding]:
        raise AssertionError("a tool that may not be called is not explored")

    info = CheckInfo(
        "TX998", "live-probe", "probe", Category.RESULT, Severity.ERROR, "why", "fix", live=True
    )
    options = RunOptions(execute=ExecuteMode.NONE)
    verdict = run_check(Check(info, never), read_subject(Tool(), "target"), options)
    assert verdict.outcome is Outcome.SKIPPED
    assert (verdict.not_called, verdict.kit_failure) == (True, False)
    assert "static checks only" in verdict.message
    record = verdict.as_record()
    assert (record["outcome"], record["not_called"]) == ("skipped", True)
