"""Invented keys among the edge values: each once, for objects that take unnamed properties."""

from __future__ import annotations

from typing import Any

import pytest
from toolnexus_conformance.arguments import edge_args_for
from toolnexus_conformance.arguments._edges import EDGE_KEYS

BASE = {"message": ""}


def _schema(**extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        **extra,
    }


def _unknown(edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each edge's keys beyond the declared property, with their values."""
    return [{k: v for k, v in e.items() if k != "message"} for e in edges if set(e) - {"message"}]


def test_each_invented_key_is_called_once_alone_and_the_value_types_take_turns() -> None:
    unknown = _unknown(edge_args_for(_schema(), BASE))
    assert all(len(added) == 1 for added in unknown), unknown
    keys = [next(iter(added)) for added in unknown]
    assert keys == ["extra", *EDGE_KEYS]
    values = [next(iter(added.values())) for added in unknown]
    assert {type(v) for v in values} == {str, int}


def test_the_values_come_from_the_schema_of_unnamed_properties() -> None:
    unknown = _unknown(edge_args_for(_schema(additionalProperties={"type": "boolean"}), BASE))
    assert [next(iter(added)) for added in unknown] == ["extra", *EDGE_KEYS]
    assert all(isinstance(v, bool) for added in unknown for v in added.values())


@pytest.mark.parametrize(
    "closed",
    [{"additionalProperties": False}, {"patternProperties": {"^x_": {"type": "string"}}}],
    ids=["additional-false", "pattern-properties"],
)
def test_an_object_that_names_its_keys_gets_no_invented_one(closed: dict[str, Any]) -> None:
    assert _unknown(edge_args_for(_schema(**closed), BASE)) == []
