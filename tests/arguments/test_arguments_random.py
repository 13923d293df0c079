"""Random satisfiable schemas from a small grammar: generation never yields an invalid value."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from toolnexus_conformance.arguments._api import unguarded

from toolnexus_ref._validation import validator_for

_NAMES = st.sampled_from(["a", "b", "c", "x-y", "n_1", "long_name"])
_PATTERNS = st.sampled_from(["^[a-z]{1,5}$", "[0-9]", "^x", "ab*c", "^$|^[A-Z]+$"])
_FORMATS = st.sampled_from(
    ["date", "date-time", "email", "uuid", "ipv4", "ipv6", "uri", "x-unknown"]
)
_JSON_LEAVES = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
_TREE_DEF = {
    "type": "object",
    "properties": {
        "v": {"type": "integer"},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
    },
    "required": ["v"],
}


@st.composite
def _integer(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    step = draw(st.sampled_from([None, 1, 2, 3, 0.5, 2.5]))
    if step is not None:
        schema["multipleOf"] = step
    low = draw(st.none() | st.integers(-100, 100))
    if low is not None:
        schema["minimum" if draw(st.booleans()) else "exclusiveMinimum"] = low
    if draw(st.booleans()):
        # wide enough to hold two multiples, so the schema stays satisfiable
        schema["maximum"] = (low or 0) + draw(st.integers(2 + 2 * math.ceil(step or 1), 50))
    return schema


@st.composite
def _number(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "number"}
    low = draw(st.none() | st.floats(-100, 100))
    if low is not None:
        schema["minimum" if draw(st.booleans()) else "exclusiveMinimum"] = low
        if draw(st.booleans()):
            schema["exclusiveMaximum"] = low + draw(st.floats(0.5, 100))
    if draw(st.booleans()):
        schema["multipleOf"] = draw(st.sampled_from([0.1, 0.25, 0.01, 3]))
        schema.pop("exclusiveMaximum", None)
    return schema


@st.composite
def _string(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    choice = draw(st.sampled_from(["plain", "pattern", "format"]))
    if choice == "pattern":
        schema["pattern"] = draw(_PATTERNS)
    elif choice == "format":
        schema["format"] = draw(_FORMATS)
    else:
        low = draw(st.integers(0, 4))
        schema["minLength"] = low
        if draw(st.booleans()):
            schema["maxLength"] = low + draw(st.integers(0, 4))
    return schema


_LEAF = st.one_of(
    st.just({"type": "null"}),
    st.just({"type": "boolean"}),
    _integer(),
    _number(),
    _string(),
    st.lists(_JSON_LEAVES, min_size=1, max_size=4).map(lambda v: {"enum": v}),
    _JSON_LEAVES.map(lambda v: {"const": v}),
    st.just(True),
    st.just({}),
    st.just({"$ref": "#/$defs/tree"}),
)


def _object(child: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def make(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(_NAMES, child, max_size=4))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        schema["required"] = [n for n in props if draw(st.booleans())]
        extra = draw(st.sampled_from(["absent", "false", "schema"]))
        if extra == "false":
            schema["additionalProperties"] = False
        elif extra == "schema":
            schema["additionalProperties"] = draw(_LEAF)
        if draw(st.booleans()):
            schema["patternProperties"] = {"^p_": draw(_LEAF)}
        if len(props) >= 2 and draw(st.booleans()):
            first, second = list(props)[:2]
            schema["dependentRequired"] = {first: [second]}
        return schema

    return make()


def _array(child: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def make(draw: st.DrawFn) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "array", "items": draw(child)}
        if draw(st.booleans()):
            schema["prefixItems"] = draw(st.lists(child, min_size=1, max_size=3))
        low = draw(st.integers(0, 2))
        schema["minItems"] = low
        if draw(st.booleans()):
            schema["maxItems"] = low + draw(st.integers(0, 3))
        return schema

    return make()


def _combined(child: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    distinct = st.lists(
        st.sampled_from(
            [{"type": "null"}, {"type": "boolean"}, {"type": "string"}, {"type": "array"}]
        ),
        min_size=1,
        max_size=3,
        unique_by=lambda s: s["type"],
    )
    return st.one_of(
        st.lists(child, min_size=1, max_size=3).map(lambda bs: {"anyOf": bs}),
        distinct.map(lambda bs: {"oneOf": bs}),
        child.map(lambda c: {"allOf": [c, c, {"description": "same"}]}),
        _integer().map(lambda i: {**i, "not": {"const": 0}}),
        st.tuples(child, child).map(
            lambda t: {
                "if": {"type": "string"},
                "then": {"type": "string", "maxLength": 3},
                "else": t[0],
            }
        ),
    )


_SCHEMAS = st.recursive(
    _LEAF, lambda child: _object(child) | _array(child) | _combined(child), max_leaves=8
)


@settings(max_examples=int(__import__("os").environ.get("RS_N", "120")))
@given(st.data())
def test_random_schemas_never_yield_invalid_values(data: st.DataObject) -> None:
    body = data.draw(_SCHEMAS, label="schema")
    schema = {"$defs": {"tree": _TREE_DEF}, "allOf": [body]}
    validator = validator_for(schema)
    strategy = unguarded(schema, 2, False)
    for _ in range(3):
        value = data.draw(strategy, label="value")
        assert validator.is_valid(value), list(validator.iter_errors(value))
