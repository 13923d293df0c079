"""Shared helpers for the static-check tests: build a tool, run one check, get its verdict."""

from __future__ import annotations

from typing import Any

from toolnexus_conformance._model import Outcome, Scope, Verdict
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import load_catalog
from toolnexus_conformance._runner import run_check
from toolnexus_conformance._subject import TargetSubject, read_subjects

from toolnexus_ref import ToolResult

GOOD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "The query."}},
    "required": ["q"],
    "additionalProperties": False,
}


class Plain:
    """A duck-typed tool whose attributes the test chooses."""

    def __init__(self, **attributes: Any) -> None:
        self.name = "lookup"
        self.description = "Look something up."
        self.input_schema = GOOD_SCHEMA
        self.source = "custom"
        for key, value in attributes.items():
            setattr(self, key, value)

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


def verdict(code: str, tool: Any, *, siblings: tuple[Any, ...] = ()) -> Verdict:
    check = load_catalog()[code]
    subjects = read_subjects([tool, *siblings], "target")
    subject: Any = subjects[0]
    if check.info.scope is Scope.TARGET:
        subject = TargetSubject("target", subjects)
    return run_check(check, subject, RunOptions())


def failed(code: str, tool: Any, **kwargs: Any) -> str:
    """The failure message; fails the test when the check passed or was skipped."""
    result = verdict(code, tool, **kwargs)
    assert result.outcome is Outcome.FAILED, f"{code} did not fail: {result}"
    assert result.message
    return result.message


def passed(code: str, tool: Any, **kwargs: Any) -> bool:
    result = verdict(code, tool, **kwargs)
    assert result.outcome is Outcome.PASSED, f"{code} did not pass: {result.message}"
    return True


def schema_tool(schema: Any, **attributes: Any) -> Plain:
    return Plain(input_schema=schema, **attributes)
