"""Valid arguments: every value the generator makes validates, without the final guard."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _arguments_table import SCHEMAS, UNSATISFIABLE
from hypothesis import given, settings
from hypothesis import strategies as st
from toolnexus_conformance.arguments import UnsupportedSchema, args_for, values_for
from toolnexus_conformance.arguments._api import unguarded

from toolnexus_ref._validation import validator_for


def _validator(schema: Any) -> Any:
    if isinstance(schema, bool):
        from jsonschema import Draft202012Validator

        return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return validator_for(schema)


def _round_trips(value: object) -> bool:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")  # no lone surrogates
    return json.loads(text) == value


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_generated_values_validate_without_the_guard(name: str) -> None:
    schema = SCHEMAS[name]
    validator = _validator(schema)

    @settings(max_examples=25)
    @given(unguarded(schema, 3, True))
    def check(value: object) -> None:
        assert isinstance(value, dict)
        errors = [e.message for e in validator.iter_errors(value)]
        assert not errors, f"{name}: generated {value!r} is invalid: {errors}"
        assert _round_trips(value)

    check()


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_public_strategy_draws_objects_without_health_check_failures(name: str) -> None:
    @settings(max_examples=10)
    @given(args_for(SCHEMAS[name]))
    def check(value: dict[str, Any]) -> None:
        assert isinstance(value, dict)

    check()


@pytest.mark.parametrize("name", sorted(UNSATISFIABLE))
def test_a_schema_no_object_satisfies_is_refused_at_build_time(name: str) -> None:
    with pytest.raises(UnsupportedSchema, match="satisfies"):
        args_for(UNSATISFIABLE[name])


def test_values_for_serves_non_object_roots() -> None:
    @settings(max_examples=20)
    @given(values_for({"type": "string", "format": "date"}))
    def check(value: object) -> None:
        assert isinstance(value, str)
        assert _validator({"type": "string", "format": "date"}).is_valid(value)

    check()


def test_strategies_are_cached_per_schema_text() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    same = json.loads(json.dumps(schema))
    assert args_for(schema) is args_for(same)
    assert args_for(schema) is not args_for(schema, max_depth=1)


def test_a_caller_mutating_the_schema_afterwards_changes_nothing() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"a": {"const": 1}},
        "required": ["a"],
    }
    strategy = args_for(schema)
    schema["properties"]["a"]["const"] = 2

    @settings(max_examples=5)
    @given(strategy)
    def check(value: dict[str, Any]) -> None:
        assert value == {"a": 1}

    check()


# -- generation reaches the interesting corners, not only the minimal value -----------------


def _seen(schema: Any, examples: int = 60) -> list[Any]:
    out: list[Any] = []

    @settings(max_examples=examples)
    @given(args_for(schema))
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out


def _depth(tree: dict[str, Any]) -> int:
    return 1 + max((_depth(c) for c in tree.get("children", [])), default=0)


def test_recursive_trees_nest_but_stay_bounded() -> None:
    depths = {_depth(v["tree"]) for v in _seen(SCHEMAS["recursive-tree"])}
    assert max(depths) >= 2
    assert max(depths) <= 3 + 1 + 1  # max_depth 3, then minimal values only


def test_recursive_required_chain_terminates_through_the_non_recursive_branch() -> None:
    for value in _seen(SCHEMAS["recursive-required-linked-list"], 30):
        node, hops = value["l"], 0
        while node is not None:
            node, hops = node["tail"], hops + 1
        assert hops <= 12


def test_if_then_else_reaches_both_branches() -> None:
    countries = {v["country"] for v in _seen(SCHEMAS["if-then-else"])}
    assert "US" in countries
    assert countries - {"US"}


def test_optional_properties_appear_and_dependencies_follow() -> None:
    values = _seen(SCHEMAS["dependentRequired"])
    assert any("card" in v for v in values)
    assert all("billing" in v and "zip" in v for v in values if "card" in v)


def test_one_of_overlap_yields_only_values_matching_exactly_one_branch() -> None:
    seen = {v["v"] for v in _seen(SCHEMAS["oneOf-overlapping"])}
    assert seen
    assert not seen & set(range(5, 11))


def test_float_multiple_of_is_generated_directly() -> None:
    values = [v["p"] for v in _seen(SCHEMAS["multipleOf-0.1"])]
    assert len(set(values)) > 5


@given(st.data())
@settings(max_examples=5)
def test_max_depth_zero_still_generates(data: st.DataObject) -> None:
    value = data.draw(args_for(SCHEMAS["recursive-tree"], max_depth=0))
    assert "tree" in value
