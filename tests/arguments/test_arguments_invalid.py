"""Invalid arguments: every value is refused by the schema (or is no object) and says why."""

from __future__ import annotations

from typing import Any

import pytest
from _arguments_table import SCHEMAS
from hypothesis import given, settings
from toolnexus_conformance.arguments import InvalidArgs, invalid_args_for
from toolnexus_conformance.arguments._api import _canonical, _compiler
from toolnexus_conformance.arguments._invalid import candidates

from toolnexus_ref._validation import validator_for

_OBJECT_SCHEMAS = sorted(n for n, s in SCHEMAS.items() if isinstance(s, dict))


@pytest.mark.parametrize("name", _OBJECT_SCHEMAS)
def test_mutations_are_refused_by_construction_without_the_guard(name: str) -> None:
    schema = SCHEMAS[name]
    validator = validator_for(schema)

    @settings(max_examples=30)
    @given(candidates(_compiler(_canonical(schema), 3)))
    def check(args: InvalidArgs) -> None:
        assert args.mutation
        refused = not isinstance(args.value, dict) or not validator.is_valid(args.value)
        assert refused, f"{name}: mutation {args.mutation!r} left {args.value!r} valid"

    check()


@pytest.mark.parametrize("name", _OBJECT_SCHEMAS)
def test_every_invalid_value_is_refused(name: str) -> None:
    schema = SCHEMAS[name]
    validator = validator_for(schema)

    @settings(max_examples=30)
    @given(invalid_args_for(schema))
    def check(args: InvalidArgs) -> None:
        assert args.mutation
        if isinstance(args.value, dict):
            assert not validator.is_valid(args.value), args
        else:
            assert args.mutation == "not an object"

    check()


def _mutations(schema: Any, examples: int = 80) -> set[str]:
    seen: set[str] = set()

    @settings(max_examples=examples)
    @given(invalid_args_for(schema))
    def collect(args: InvalidArgs) -> None:
        seen.add(args.mutation)

    collect()
    return seen


def test_each_kind_of_mutation_is_offered() -> None:
    schema = {
        "type": "object",
        "properties": {
            "x": {"type": "string"},
            "n": {"type": "integer", "maximum": 5},
            "mode": {"enum": ["a", "b"]},
            "s": {"type": "string", "pattern": "^[a-z]+$"},
        },
        "required": ["x"],
        "additionalProperties": False,
    }
    seen = _mutations(schema, 200)
    expected = {
        "dropped required 'x'",
        "broke maximum of 'n'",
        "enum of 'mode' broken",
        "unknown key 'zz' where additionalProperties is false",
        "not an object",
        "broke pattern of 's'",
    }
    assert expected <= seen, expected - seen
    assert any(m.startswith("type of 'x' changed to ") for m in seen)


def test_nested_properties_are_mutated_by_dotted_path() -> None:
    seen = _mutations(SCHEMAS["recursive-tree"], 120)
    assert "dropped required 'tree.value'" in seen
    assert "unknown key 'tree.zz' where additionalProperties is false" in seen


@pytest.mark.parametrize("schema", [{}, {"type": "object"}, True])
def test_a_schema_admitting_every_object_still_yields_non_objects(schema: Any) -> None:
    @settings(max_examples=10)
    @given(invalid_args_for(schema))
    def check(args: InvalidArgs) -> None:
        assert not isinstance(args.value, dict)
        assert args.mutation == "not an object"

    check()


def test_invalid_args_is_a_frozen_value() -> None:
    args = InvalidArgs({"a": 1}, "dropped required 'b'")
    with pytest.raises(AttributeError):
        args.mutation = "x"  # type: ignore[misc]
