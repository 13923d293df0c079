"""How the runner turns what a check does into a verdict: findings, Skip, Fail, a crash."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolnexus_conformance import (
    Category,
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
