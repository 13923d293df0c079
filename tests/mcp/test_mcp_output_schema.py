"""A tool's declared output schema, judged on every call without re-checking the schema."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp")

from toolnexus_ref import _validation
from toolnexus_ref.mcp._results import output_schema_errors

SCHEMA = {
    "type": "object",
    "properties": {"time": {"type": "string"}, "dst": {"type": "boolean"}},
    "required": ["time"],
}


def test_conforming_content_has_no_errors() -> None:
    assert output_schema_errors(SCHEMA, {"time": "12:00", "dst": False}) == []


def test_each_way_the_content_breaks_the_schema_is_named() -> None:
    problems = output_schema_errors(SCHEMA, {"dst": "no"})
    assert any("'time' is a required property" in p for p in problems), problems
    assert any(p.startswith("dst:") for p in problems), problems


def test_missing_structured_content_is_an_error() -> None:
    assert output_schema_errors(SCHEMA, None) == [
        "the tool declares an output schema but returned no structured content"
    ]


def test_an_invalid_schema_is_said_on_every_call() -> None:
    broken = {"type": "object", "properties": {"n": {"type": "integr"}}}
    for _ in range(2):
        (problem,) = output_schema_errors(broken, {"n": 1})
        assert problem.startswith("the output schema itself is invalid:"), problem


def test_the_schema_is_checked_once_not_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    real = _validation.validator_for

    def counting(schema: Any) -> Any:
        built.append(schema)
        return real(schema)

    monkeypatch.setattr(_validation, "validator_for", counting)
    schema = {**SCHEMA, "title": "checked once"}  # not cached by another test
    for index in range(5):
        assert output_schema_errors(schema, {"time": str(index)}) == []
    assert len(built) == 1
    assert output_schema_errors(schema, {"time": 5}) == ["time: 5 is not of type 'string'"]
    assert len(built) == 1
