"""Schema checks (TN30x): JSON data, bounds, dialect, object root, required, refs; hostile schemas."""

from __future__ import annotations

from typing import Any

import pytest
from _conformance_helpers import GOOD_SCHEMA, Plain, failed, passed, schema_tool, verdict
from hypothesis import given
from hypothesis import strategies as st
from toolnexus_conformance._model import Outcome
from toolnexus_conformance.checks._walk import MAX_DEPTH

SCHEMA_CODES = ["TN301", "TN302", "TN303", "TN304", "TN305", "TN306", "TN307"]
STRING = {"type": "string"}


def obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), **extra}


def nested(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object"}
    current = root
    for _ in range(levels):
        child: dict[str, Any] = {"type": "object"}
        current["properties"] = {"a": child}
        current = child
    return root


@pytest.mark.parametrize("code", SCHEMA_CODES)
def test_a_good_schema_passes(code: str) -> None:
    assert passed(code, Plain())


@pytest.mark.parametrize(
    ("schema", "path"),
    [
        (obj({"a": {"enum": {"x"}}}), "input_schema.properties.a.enum: set"),
        (obj({"a": {"enum": ("x",)}}), "input_schema.properties.a.enum: tuple"),
        (obj({"a": {"maximum": float("inf")}}), "input_schema.properties.a.maximum: the float inf"),
        (obj({"a": {"default": object()}}), "input_schema.properties.a.default: object"),
        ({"type": "object", 3: {}}, "has the key int 3"),
        (obj({"odd key": {"x": b"1"}}), 'input_schema.properties["odd key"].x: bytes'),
    ],
)
def test_non_json_data_names_the_path(schema: dict[str, Any], path: str) -> None:
    assert path in failed("TN301", schema_tool(schema))


def test_every_schema_check_fails_without_crashing_on_a_set_inside() -> None:
    tool = schema_tool(obj({"a": {"enum": {"x", "y"}}}))
    for code in SCHEMA_CODES[2:]:
        assert "see TN301" in failed(code, tool)
    assert verdict("TN302", tool).outcome is Outcome.PASSED


@pytest.mark.parametrize("value", [("type", "object"), "object", None, 1])
def test_a_schema_that_is_not_a_dict(value: Any) -> None:
    assert "must be a JSON object" in failed("TN301", schema_tool(value))


def test_a_schema_property_that_raises() -> None:
    class Raising(Plain):
        @property
        def input_schema(self) -> Any:  # type: ignore[override]
            raise RuntimeError("generator failed")

        @input_schema.setter
        def input_schema(self, value: Any) -> None:
            pass

    assert "RuntimeError: generator failed" in failed("TN301", Raising())
    for code in SCHEMA_CODES[1:]:
        failed(code, Raising())


def test_a_5000_level_schema_is_a_verdict_not_a_recursion_error() -> None:
    tool = schema_tool(nested(5000))
    assert f"more than {MAX_DEPTH} levels" in failed("TN302", tool)
    for code in SCHEMA_CODES:
        failed(code, tool)


def test_depth_limit_is_inclusive() -> None:
    # nested(n) puts the deepest value at JSON depth 2n + 1 (properties -> a -> type).
    assert passed("TN302", schema_tool(nested((MAX_DEPTH - 1) // 2)))
    failed("TN302", schema_tool(nested(MAX_DEPTH)))


def test_a_huge_schema_is_bounded() -> None:
    tool = schema_tool(obj({"a": {"type": "string", "enum": ["v"] * 200_000}}))
    assert "100,000 JSON nodes" in failed("TN302", tool)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (obj({"a": {"type": "strng"}}), "input_schema.properties.a.type"),
        (obj({"a": {"type": "string", "pattern": "(["}}), "input_schema.properties.a.pattern"),
        ({**obj({}), "required": "a"}, "input_schema.required"),
        ({**obj({}), "$schema": "https://example.com/mine"}, "not a JSON Schema dialect"),
        ({**obj({}), "$schema": 4}, "dialect URI string"),
    ],
)
def test_dialect_validation(schema: dict[str, Any], expected: str) -> None:
    assert expected in failed("TN303", schema_tool(schema))


def test_declared_draft7_is_validated_as_draft7() -> None:
    draft7 = {
        **obj({"a": {"type": "array", "items": [STRING]}}),
        "$schema": "http://json-schema.org/draft-07/schema#",
    }
    assert passed("TN303", schema_tool(draft7))
    bad = {
        **obj({"a": {"type": "array", "items": [STRING]}}),
        "$schema": "https://json-schema.org/draft/2020-12/schema",
    }
    assert "Draft202012Validator" in failed("TN303", schema_tool(bad))


@pytest.mark.parametrize(
    "schema", [{"properties": {}}, {"type": "string"}, {"type": ["object", "null"]}]
)
def test_root_must_be_object(schema: dict[str, Any]) -> None:
    assert "input_schema" in failed("TN304", schema_tool(schema))


def test_properties_must_be_objects() -> None:
    assert "input_schema.properties is list" in failed(
        "TN305", schema_tool({"type": "object", "properties": ["a"]})
    )
    message = failed("TN305", schema_tool(obj({"outer": obj({"inner": "string"})})))
    assert "input_schema.properties.outer.properties.inner" in message


def test_required_names_at_every_level() -> None:
    assert "input_schema.required[1] names 'b'" in failed(
        "TN306", schema_tool({**obj({"a": STRING}), "required": ["a", "b"]})
    )
    inner = obj({"x": {"type": "object", "properties": {"y": STRING}, "required": ["z"]}})
    assert "input_schema.properties.x.required[0] names 'z'" in failed("TN306", schema_tool(inner))
    in_defs = {**obj({}), "$defs": {"D": {"type": "object", "required": ["q"]}}}
    assert "input_schema.$defs.D.required[0]" in failed("TN306", schema_tool(in_defs))


def test_required_from_a_composing_branch_is_not_flagged() -> None:
    either = {
        **obj({"a": STRING, "b": STRING}),
        "required": [],
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
    }
    assert passed("TN306", schema_tool(either))
    conditional = {
        **obj({"a": STRING}),
        "if": {"properties": {"a": {"const": "x"}}},
        "then": {"required": ["a"]},
    }
    assert passed("TN306", schema_tool(conditional))


def test_a_property_named_like_a_keyword_is_a_name() -> None:
    schema = obj({"$ref": STRING, "required": STRING, "properties": STRING})
    for code in SCHEMA_CODES:
        assert passed(code, schema_tool(schema))


@pytest.mark.parametrize(
    "ref",
    [
        "#",
        "#/$defs/A",
        "#/definitions/B",
        "#/$defs/A/properties/x",
        "#/$defs/with~1slash",
        "#/$defs/with%20space",
        "#anchor",
        "urn:inner#/$defs/C",
    ],
)
def test_local_refs_resolve(ref: str) -> None:
    schema = {
        **obj({"r": {"$ref": ref}}),
        "$defs": {
            "A": obj({"x": STRING}),
            "with/slash": STRING,
            "with space": STRING,
            "anchored": {"$anchor": "anchor", "type": "string"},
            "inner": {"$id": "urn:inner", "$defs": {"C": STRING}},
        },
        "definitions": {"B": STRING},
    }
    assert passed("TN307", schema_tool(schema))


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("#/$defs/Missing", "nothing at 'Missing'"),
        ("https://example.com/s.json", "points outside this schema"),
        ("other.json#/x", "points outside this schema"),
        ("#nowhere", "no $anchor"),
        ("#/required/0", "not a schema"),
    ],
)
def test_unresolvable_refs(ref: str, expected: str) -> None:
    schema = {**obj({"r": {"$ref": ref}}), "$defs": {}}
    message = failed("TN307", schema_tool(schema))
    assert "input_schema.properties.r.$ref" in message
    assert expected in message


def test_a_recursive_ref_is_fine() -> None:
    tree = {**obj({"children": {"type": "array", "items": {"$ref": "#"}}})}
    assert passed("TN307", schema_tool(tree))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_any_json_value_inside_a_schema_is_accepted_as_json_data(value: Any) -> None:
    assert passed("TN301", schema_tool({**GOOD_SCHEMA, "examples": [value]}))


@given(json_values)
def test_no_static_check_raises_on_arbitrary_json(value: Any) -> None:
    from toolnexus_conformance._registry import load_catalog

    tool = schema_tool(value if isinstance(value, dict) else {"type": "object", "x": value})
    for check in load_catalog():
        if not check.info.live and check.info.code.startswith(("TN3", "TN4")):
            result = verdict(check.code, tool)
            assert "raised" not in result.message, result.message


keyword_values = st.sampled_from(
    [
        ("type", "string"),
        ("type", ["string", "null"]),
        ("type", ["string", "string"]),
        ("type", "strng"),
        ("type", []),
        ("required", ["a"]),
        ("required", ["a", "a"]),
        ("required", "a"),
        ("minLength", 1),
        ("minLength", -1),
        ("minLength", 1.0),
        ("minLength", True),
        ("multipleOf", 0),
        ("multipleOf", 0.5),
        ("pattern", "^a+$"),
        ("pattern", "(["),
        ("enum", []),
        ("enum", "a"),
        ("$ref", "#/$defs/x"),
        ("$ref", "#/$defs/a b"),
        ("items", [{"type": "string"}]),
        ("items", True),
        ("anyOf", []),
        ("anyOf", [{"type": "string"}]),
        ("nullable", True),
        ("dependentRequired", {"a": ["b"]}),
        ("dependentRequired", {"a": "b"}),
        ("examples", 3),
        ("deprecated", "yes"),
        ("$schema", "https://json-schema.org/draft/2020-12/schema"),
    ]
)


@given(st.lists(keyword_values, max_size=4), st.lists(keyword_values, max_size=3))
def test_the_fast_dialect_path_never_calls_an_invalid_schema_valid(
    root: list[tuple[str, Any]], inner: list[tuple[str, Any]]
) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from toolnexus_conformance.checks._dialect import plainly_valid
    from toolnexus_conformance.checks._walk import schema_nodes

    schema: dict[str, Any] = {"type": "object", **dict(root), "properties": {"a": dict(inner)}}
    if plainly_valid(schema_nodes(schema)):
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:  # pragma: no cover - the failure this test exists for
            pytest.fail(f"fast path accepted an invalid schema {schema}: {exc.message}")
