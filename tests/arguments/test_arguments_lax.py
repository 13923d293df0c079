"""Invalid arguments that catch lax validators: coercible wrong types and enum near misses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase, find, given, settings
from toolnexus_conformance.arguments import InvalidArgs, invalid_args_for
from toolnexus_conformance.arguments._api import _canonical, _compiler
from toolnexus_conformance.arguments._invalid import MAX_MUTATIONS, entries
from toolnexus_conformance.arguments._wrong import (
    LAX_NOTE,
    SPELLED,
    enum_near_misses,
    json_types,
    wrong_values,
)

from toolnexus_ref._validation import validator_for

TYPES = ("integer", "number", "string", "boolean", "array", "object", "null")


def _object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False, **extra}


def _mutations(schema: Any, examples: int = 200) -> dict[str, object]:
    seen: dict[str, object] = {}

    @settings(max_examples=examples)
    @given(invalid_args_for(schema))
    def collect(args: InvalidArgs) -> None:
        seen.setdefault(args.mutation, args.value)

    collect()
    return seen


@pytest.mark.parametrize("declared", [*TYPES, ["integer", "null"], ["string", "number"]])
def test_every_wrong_value_is_refused_by_the_declared_type(declared: Any) -> None:
    validator = validator_for({"type": declared})
    wrong = wrong_values(declared)
    assert wrong
    for one in wrong:
        assert not validator.is_valid(one.value), one


@pytest.mark.parametrize("declared", TYPES)
def test_lax_values_come_first_and_say_so(declared: str) -> None:
    wrong = wrong_values(declared)
    lax = [w for w in wrong if w.lax]
    assert lax, f"no value a lax validator accepts for {declared}"
    assert wrong[: len(lax)] == lax
    assert all(w.label.endswith(f"({LAX_NOTE})") for w in lax if not w.spelled)
    assert all(w.label.endswith(f"({LAX_NOTE}; {SPELLED})") for w in lax if w.spelled)
    if declared in ("integer", "number", "boolean"):  # "1", "1.5", "true": the value as text
        assert any(w.spelled for w in lax), declared
    assert not any(LAX_NOTE in w.label for w in wrong if not w.lax)


def test_the_usual_coercions_are_offered() -> None:
    def values(declared: str) -> list[object]:
        return [w.value for w in wrong_values(declared) if w.lax]

    integer = values("integer")
    assert integer[0] is True  # bool first: the most common coercion
    assert {"1", "1.5"} <= set(map(str, integer))
    assert 1.5 in integer
    assert True in values("number")
    assert "1.5" in values("number")
    assert 1 in values("string")
    assert "true" in values("boolean")
    assert 1 in values("boolean")
    assert {} in values("array")


def test_a_union_keeps_only_values_outside_every_member() -> None:
    offered = [w.value for w in wrong_values(["integer", "string"])]
    assert "1" not in offered
    assert "1.5" not in offered
    assert True in offered
    assert 1.5 in offered


def test_number_admits_integers_so_none_is_offered() -> None:
    assert not any(
        isinstance(w.value, int) and not isinstance(w.value, bool) for w in wrong_values("number")
    )


@pytest.mark.parametrize(
    ("value", "types"),
    [
        (True, {"boolean"}),
        (1, {"integer", "number"}),
        (1.0, {"integer", "number"}),
        (1.5, {"number"}),
        ("1", {"string"}),
        (None, {"null"}),
        ([], {"array"}),
        ({}, {"object"}),
    ],
)
def test_json_types(value: object, types: set[str]) -> None:
    assert json_types(value) == types


def test_pydantic_lax_mode_accepts_what_we_send() -> None:
    """The point of the lax values: a real coercing validator takes them as valid."""
    pydantic = pytest.importorskip("pydantic")
    for declared, python_type in (("integer", int), ("number", float), ("boolean", bool)):
        adapter = pydantic.TypeAdapter(python_type)
        accepted = []
        for one in wrong_values(declared):
            try:
                adapter.validate_python(one.value)
            except pydantic.ValidationError:
                continue
            accepted.append(one)
        assert accepted, declared
        assert all(one.lax for one in accepted), f"{declared}: {accepted} not marked lax"


def test_an_integer_property_gets_its_lax_mutations() -> None:
    seen = _mutations(_object({"n": {"type": "integer"}}, required=["n"]))
    note, spelled = f" ({LAX_NOTE})", f" ({LAX_NOTE}; {SPELLED})"
    assert seen[f"type of 'n' changed to boolean true{note}"] == {"n": True}
    assert seen[f"type of 'n' changed to numeric string '1'{spelled}"] == {"n": "1"}


def test_a_boolean_and_an_array_property() -> None:
    seen = _mutations(_object({"b": {"type": "boolean"}, "l": {"type": "array", "items": {}}}))
    note = f" ({LAX_NOTE})"
    assert f"type of 'b' changed to string 'true' ({LAX_NOTE}; {SPELLED})" in seen
    assert f"type of 'b' changed to number 1{note}" in seen
    assert f"type of 'l' changed to object {{}}{note}" in seen


def test_array_items_get_a_coercible_item() -> None:
    schema = _object({"ids": {"type": "array", "items": {"type": "integer"}}})
    seen = _mutations(schema)
    assert seen[f"items of 'ids' changed to boolean true ({LAX_NOTE})"] == {"ids": [True]}
    assert not validator_for(schema).is_valid({"ids": [True]})


def test_enum_near_misses() -> None:
    misses = dict((value, label) for label, value in enum_near_misses(["celsius", "kelvin"]))
    assert set(misses) == {"CELSIUS", "celsius "}
    assert "another case" in misses["CELSIUS"]
    assert "trailing space" in misses["celsius "]
    assert [v for _, v in enum_near_misses([1, 2])] == ["1"]
    assert [v for _, v in enum_near_misses([True])] == ["true"]
    # a near miss that is itself allowed is not offered
    assert "A" not in [v for _, v in enum_near_misses(["a", "A"])]


def test_an_enum_property_gets_its_near_misses_and_they_are_refused() -> None:
    schema = _object({"unit": {"enum": ["celsius", "kelvin"]}}, required=["unit"])
    seen = _mutations(schema)
    near = {m: v for m, v in seen.items() if "near-missed" in m}
    assert {v["unit"] for v in near.values() if isinstance(v, dict)} == {"CELSIUS", "celsius "}
    assert all(not validator_for(schema).is_valid(v) for v in near.values())


def _first_of_each_entry(schema: Any) -> list[InvalidArgs]:
    """One example per mutation entry, unshrunk: enough where only the mutations count.

    (Shrinking 16 integers per entry costs about a second each, 48 entries a minute.)
    """
    first = settings(database=None, phases=[Phase.generate])
    return [
        find(entry, lambda _: True, settings=first)
        for entry in entries(_compiler(_canonical(schema), 3))
    ]


def _simplest_of_each_entry(schema: Any) -> list[InvalidArgs]:
    """One example per mutation entry, the simplest hypothesis finds (deterministic)."""
    return [
        find(entry, lambda _: True, settings=settings(database=None))
        for entry in entries(_compiler(_canonical(schema), 3))
    ]


def test_many_properties_each_keep_their_most_telling_mutation() -> None:
    """Past the cap on mutations, every property still gets its first lax value."""
    names = [f"p{i:02}" for i in range(16)]
    schema = _object({n: {"type": "integer"} for n in names}, required=names)
    drawn = _first_of_each_entry(schema)
    assert len(drawn) == MAX_MUTATIONS
    mutations = {args.mutation for args in drawn}
    for name in names:
        assert f"type of '{name}' changed to boolean true ({LAX_NOTE})" in mutations, name
        assert f"dropped required '{name}'" in mutations, name


def test_each_integer_property_draws_true_and_a_numeric_string_as_entries_of_their_own() -> None:
    drawn = _simplest_of_each_entry(_object({"n": {"type": "integer"}}))
    mutations = [args.mutation for args in drawn]
    note = f" ({LAX_NOTE})"
    assert f"type of 'n' changed to boolean true{note}" in mutations
    assert f"type of 'n' changed to numeric string '1' ({LAX_NOTE}; {SPELLED})" in mutations
    # the rarer coercions and the plain wrong types share one entry, 1.5 its simplest
    assert f"type of 'n' changed to float 1.5{note}" in mutations
    shared = [m for m in mutations if m.startswith("type of 'n'")]
    assert len(shared) == 3


def test_a_const_property_is_broken_and_near_missed() -> None:
    """A const is read as a one-value enum, near misses included."""
    schema = _object({"kind": {"const": "Point"}}, required=["kind"])
    mutations = {args.mutation: args.value for args in _simplest_of_each_entry(schema)}
    assert "enum of 'kind' broken" in mutations
    near = {v["kind"] for m, v in mutations.items() if "near-missed" in m and isinstance(v, dict)}
    assert near == {"POINT", "Point "}
    assert all(not validator_for(schema).is_valid(v) for v in mutations.values())
