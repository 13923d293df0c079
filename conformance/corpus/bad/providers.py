"""Known-bad declarations for the provider profiles (TN4xx): valid JSON Schema, refused anyway."""

from __future__ import annotations

from typing import Any

from toolnexus_ref import ToolResult
from toolnexus_conformance.corpus import Entry


class Declared:
    source = "custom"

    def __init__(self, input_schema: Any, name: str = "provider_tool") -> None:
        self.name = name
        self.description = "Look something up."
        self.input_schema = input_schema

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


def obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


STRING = {"type": "string"}


def nested(levels: int) -> dict[str, Any]:
    root = obj({})
    current = root
    for _ in range(levels):
        child = obj({})
        current["properties"] = {"a": child}
        current["required"] = ["a"]
        current = child
    return root


CORPUS = [
    Entry(Declared(obj({"q": STRING}), name="fetch.url"), frozenset({"TN401", "TN420"}), "a dot in the name"),
    Entry(Declared({"type": "array", "items": STRING}), frozenset({"TN402"}), "parameters not an object"),
    Entry(
        Declared(obj({"q": STRING}), name="tool_0"),
        frozenset({"TN403"}),
        "129 tools in one target",
        siblings=tuple(Declared(obj({"q": STRING}), name=f"tool_{i}") for i in range(1, 129)),
    ),
    Entry(Declared(obj({"tags": {"type": "array"}})), frozenset({"TN404"}), "an array without items"),
    Entry(
        Declared(obj({"rows": {"type": "array", "items": {"type": ["array", "null"]}}})),
        frozenset({"TN404"}),
        "a nested array without items",
    ),
    Entry(
        Declared({**obj({"a": STRING}), "anyOf": [{"required": ["a"]}]}),
        frozenset({"TN410", "TN422"}),
        "anyOf at the root",
    ),
    Entry(
        Declared({**obj({"a": STRING, "b": STRING}), "required": ["a"]}),
        frozenset({"TN411"}),
        "an optional property",
    ),
    Entry(
        Declared(obj({"where": {"type": "object", "properties": {"x": STRING}, "required": ["x"]}})),
        frozenset({"TN412"}),
        "a nested object without additionalProperties: false",
    ),
    Entry(Declared(obj({"a": {"allOf": [STRING]}})), frozenset({"TN413"}), "allOf"),
    Entry(Declared(obj({"a": {"oneOf": [STRING, {"type": "integer"}]}})), frozenset({"TN413"}), "oneOf"),
    Entry(Declared(obj({"when": {"type": "string", "format": "uri"}})), frozenset({"TN413"}), "an unsupported format"),
    Entry(Declared(obj({"a": {"type": "string", "minLength": 1}})), frozenset({"TN413"}), "minLength"),
    Entry(Declared(obj({"a": {"description": "anything"}})), frozenset({"TN413"}), "a subschema without a type"),
    Entry(Declared(obj({f"p{i}": STRING for i in range(5001)})), frozenset({"TN414"}), "5,001 properties"),
    Entry(Declared(nested(11)), frozenset({"TN414"}), "11 levels of nesting"),
    Entry(
        Declared(obj({"a": {"type": "integer", "enum": list(range(1001))}})),
        frozenset({"TN414"}),
        "1,001 enum values",
    ),
    Entry(
        Declared(obj({"a": {"type": "string", "enum": [f"{i:04d}" + "v" * 60 for i in range(300)]}})),
        frozenset({"TN414"}),
        "one enum of 300 strings over 15,000 characters",
    ),
    Entry(
        Declared(obj({"a": {"type": "string", "enum": ["x" * 60_001, "y" * 60_001]}})),
        frozenset({"TN414"}),
        "over 120,000 characters of enum values",
    ),
    Entry(Declared({"type": "object"}, name="a" * 65), frozenset({"TN420"}), "a name of 65 characters"),
    Entry(Declared({"properties": {"a": STRING}}), frozenset({"TN421"}), "no top-level type"),
    Entry(
        Declared({"type": "object", "oneOf": [obj({"a": STRING}), obj({"b": STRING})]}),
        frozenset({"TN422"}),
        "a zod-style union at the root",
    ),
    Entry(Declared(obj({"q": STRING}), name="1st_tool"), frozenset({"TN430"}), "a name starting with a digit"),
    Entry(Declared(obj({"q": STRING})), frozenset({"TN431"}), "additionalProperties (Gemini refuses it)"),
    Entry(
        Declared({**obj({"q": STRING}), "$schema": "https://json-schema.org/draft/2020-12/schema"}),
        frozenset({"TN431", "TN432"}),
        "$schema (even parametersJsonSchema refuses it)",
    ),
    Entry(
        Declared(obj({"q": {"type": ["string", "null"]}, "n": {"$ref": "#/$defs/N"}}, **{"$defs": {"N": {"type": "integer"}}})),
        frozenset({"TN431"}),
        "type arrays, $ref and $defs",
    ),
    Entry(
        Declared(obj({"n": {"type": "integer", "exclusiveMinimum": 0, "const": 3}})),
        frozenset({"TN431"}),
        "keywords outside the OpenAPI subset",
    ),
]
