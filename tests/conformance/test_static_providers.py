"""Provider profiles (TN4xx): OpenAI, OpenAI strict, Anthropic, Gemini."""

from __future__ import annotations

from typing import Any

import pytest
from _conformance_helpers import Plain, failed, passed, schema_tool
from toolnexus_conformance._model import Severity
from toolnexus_conformance._registry import load_catalog

STRING = {"type": "string"}


def strict(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


def test_every_provider_check_is_a_warning_with_a_reference() -> None:
    providers = [c.info for c in load_catalog() if c.info.code.startswith("TN4")]
    assert len(providers) >= 13
    for info in providers:
        assert info.severity is Severity.WARNING, info.code
        assert info.reference, info.code


@pytest.mark.parametrize(
    ("code", "name"),
    [("TN401", "a.b"), ("TN420", "a" * 65), ("TN430", "9lives"), ("TN430", "has space")],
)
def test_provider_name_rules(code: str, name: str) -> None:
    assert "rejects the name" in failed(code, Plain(name=name))


def test_gemini_allows_dots_and_colons_openai_does_not() -> None:
    tool = Plain(name="files.read:v1")
    assert passed("TN430", tool)
    failed("TN401", tool)
    failed("TN420", tool)


def test_openai_parameters_may_be_omitted_but_not_be_an_array() -> None:
    class NoSchema:
        name = "x"
        description = "x"
        source = "custom"

    assert passed("TN402", NoSchema())
    assert "type object" in failed("TN402", schema_tool({"type": "array", "items": STRING}))


def test_openai_tool_count_is_a_target_check() -> None:
    tools = tuple(Plain(name=f"t{i}") for i in range(128))
    assert passed("TN403", tools[0], siblings=tools[1:])
    message = failed("TN403", tools[0], siblings=(*tools[1:], Plain(name="t128")))
    assert "129 tools" in message


def test_openai_array_items() -> None:
    message = failed("TN404", schema_tool(strict({"tags": {"type": ["array", "null"]}})))
    assert "input_schema.properties.tags" in message


def test_strict_root() -> None:
    assert "anyOf at the root" in failed("TN410", schema_tool({**strict({}), "anyOf": [{}]}))


def test_strict_required_names_each_optional_property() -> None:
    schema = strict({"a": STRING, "inner": strict({"x": STRING, "y": STRING})})
    schema["properties"]["inner"]["required"] = ["x"]
    assert "input_schema.properties.inner.properties.y is optional" in failed(
        "TN411", schema_tool(schema)
    )


def test_strict_additional_properties_on_every_object() -> None:
    schema = strict(
        {"inner": {"type": "object", "properties": {}}},
        **{"$defs": {"D": {"type": "object", "additionalProperties": True}}},
    )
    message = failed("TN412", schema_tool(schema))
    assert "input_schema" in message
    assert "(+1 more)" in message
    assert passed("TN412", Plain())


@pytest.mark.parametrize(
    ("sub", "expected"),
    [
        ({"allOf": [STRING]}, "'allOf'"),
        ({"type": "string", "not": {"const": "x"}}, "'not'"),
        ({"oneOf": [STRING]}, "'oneOf'"),
        ({"type": "string", "format": "uri"}, "format 'uri'"),
        ({"type": "array", "items": STRING, "uniqueItems": True}, "'uniqueItems'"),
        ({"description": "untyped"}, "has no type"),
    ],
)
def test_strict_keywords(sub: dict[str, Any], expected: str) -> None:
    message = failed("TN413", schema_tool(strict({"a": sub})))
    assert expected in message
    assert "input_schema.properties.a" in message


@pytest.mark.parametrize(
    "sub",
    [
        {"type": "string", "format": "date-time", "pattern": "^2"},
        {"type": "number", "minimum": 0, "exclusiveMaximum": 5, "multipleOf": 0.5},
        {"type": "array", "items": STRING, "minItems": 1, "maxItems": 3},
        {"anyOf": [STRING, {"type": "null"}]},
        {"type": ["string", "null"]},
        {"enum": ["a", "b"]},
        {"$ref": "#/$defs/D"},
    ],
)
def test_strict_supported_keywords_pass(sub: dict[str, Any]) -> None:
    assert passed("TN413", schema_tool(strict({"a": sub}, **{"$defs": {"D": STRING}})))


def nested(levels: int) -> dict[str, Any]:
    root = strict({})
    current = root
    for _ in range(levels):
        child = strict({})
        current["properties"] = {"a": child}
        current["required"] = ["a"]
        current = child
    return root


def test_strict_limits() -> None:
    assert passed("TN414", schema_tool(nested(10)))
    assert "nested more than 10 levels" in failed("TN414", schema_tool(nested(11)))
    assert "5,001 properties" in failed(
        "TN414", schema_tool(strict({f"p{i}": STRING for i in range(5001)}))
    )
    assert "1,001 enum values" in failed(
        "TN414", schema_tool(strict({"a": {"enum": list(range(1001))}}))
    )
    assert "120,000" in failed(
        "TN414", schema_tool(strict({"a": {"enum": ["x" * 70_000, "y" * 70_000]}}))
    )
    big = [f"{i:03d}" + "v" * 60 for i in range(251)]
    assert "251 strings" in failed(
        "TN414", schema_tool(strict({"a": {"type": "string", "enum": big}}))
    )


def test_anthropic_input_schema_is_required() -> None:
    class NoSchema:
        name = "x"
        description = "x"
        source = "custom"

    assert "see TN301" in failed("TN421", NoSchema())
    assert "'object'" in failed("TN421", schema_tool({"type": "string"}))


@pytest.mark.parametrize("keyword", ["oneOf", "allOf", "anyOf"])
def test_anthropic_root_composition(keyword: str) -> None:
    schema = {**strict({"a": STRING}), keyword: [{"required": ["a"]}]}
    assert f"input_schema.{keyword}" in failed("TN422", schema_tool(schema))
    assert passed("TN422", schema_tool(strict({"a": {keyword: [STRING]}})))


def test_gemini_subset_names_each_path_and_the_alternative() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "n": {"type": ["integer", "null"]},
        },
        "required": ["when"],
        "additionalProperties": False,
    }
    message = failed("TN431", schema_tool(schema))
    assert (
        "input_schema.additionalProperties" in message
        or "input_schema.properties.n.type" in message
    )
    assert "parametersJsonSchema" in message
    assert "accepted as-is" in message


def test_gemini_says_schema_keyword_blocks_parameters_json_schema_too() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {},
    }
    message = failed("TN431", schema_tool(schema))
    assert "input_schema.$schema" in message
    assert "even parametersJsonSchema refuses $schema" in message


def test_gemini_accepts_its_subset() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time", "description": "d", "nullable": True},
            "n": {"type": "integer", "minimum": 0, "maximum": 9, "default": 1, "example": 3},
            "tags": {"type": "array", "items": STRING, "minItems": 0, "maxItems": 4},
            "either": {"anyOf": [STRING, {"type": "null"}]},
        },
        "required": ["when"],
        "propertyOrdering": ["when", "n"],
    }
    assert passed("TN431", schema_tool(schema))
