"""Schemas the generator cannot serve are refused when the strategy is built, naming the keyword."""

from __future__ import annotations

from typing import Any

import pytest
from _arguments_table import UNSUPPORTED
from toolnexus_conformance.arguments import UnsupportedSchema, args_for, invalid_args_for


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_refused_at_build_time_with_the_keyword_named(name: str) -> None:
    schema, keyword = UNSUPPORTED[name]
    with pytest.raises(UnsupportedSchema) as caught:
        args_for(schema)
    assert caught.value.keyword == keyword
    assert f"`{keyword}`" in str(caught.value)
    with pytest.raises(UnsupportedSchema):
        invalid_args_for(schema)


def test_the_path_points_at_the_offending_sub_schema() -> None:
    schema = {"type": "object", "properties": {"a/b": {"$dynamicRef": "#x"}}}
    with pytest.raises(UnsupportedSchema) as caught:
        args_for(schema)
    assert caught.value.path == "/properties/a~1b"
    assert "/properties/a~1b" in str(caught.value)


def test_unsupported_keywords_in_unreferenced_defs_do_not_matter() -> None:
    schema: dict[str, Any] = {
        "$defs": {"unused": {"$dynamicRef": "#x"}},
        "type": "object",
        "properties": {"a": {"type": "integer"}},
    }
    args_for(schema)


def test_a_remote_ref_reached_only_through_a_ref_is_found() -> None:
    schema = {
        "$defs": {"a": {"$ref": "https://example.com/elsewhere.json"}},
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a"}},
    }
    with pytest.raises(UnsupportedSchema, match=r"elsewhere\.json") as caught:
        args_for(schema)
    assert caught.value.path == "/properties/x/$ref"


def test_nothing_is_raised_later_while_drawing() -> None:
    # Building succeeded, so every sub-schema reachable while drawing was already checked.
    from hypothesis import given, settings

    schema = {
        "$defs": {"n": {"type": "object", "properties": {"k": {"$ref": "#/$defs/n"}}}},
        "$ref": "#/$defs/n",
    }

    @settings(max_examples=20)
    @given(args_for(schema))
    def check(value: dict[str, Any]) -> None:
        assert isinstance(value, dict)

    check()


def test_a_hostile_deeply_nested_schema_is_refused_not_a_recursion_error() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(5000):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(UnsupportedSchema, match="nested deeper"):
        args_for(schema)
