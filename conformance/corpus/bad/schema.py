"""Known-bad input schemas (TN30x): non-JSON data, pathological sizes, invalid JSON Schema."""

from __future__ import annotations

from typing import Any

from toolnexus_ref import ToolResult
from toolnexus_conformance.corpus import Entry


class Schemed:
    name = "schemed_tool"
    description = "Look something up."
    source = "custom"

    def __init__(self, input_schema: Any) -> None:
        self.input_schema = input_schema

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


class NoSchema:
    name = "schemaless_tool"
    description = "Look something up."
    source = "custom"

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


class RaisingSchema(NoSchema):
    @property
    def input_schema(self) -> dict[str, Any]:
        raise RuntimeError("schema generation failed")


def obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


def nested(levels: int) -> dict[str, Any]:
    """``levels`` objects inside each other, built without recursion."""
    root: dict[str, Any] = {"type": "object"}
    current = root
    for _ in range(levels):
        child: dict[str, Any] = {"type": "object"}
        current["properties"] = {"a": child}
        current = child
    return root


STRING = {"type": "string"}

CORPUS = [
    Entry(NoSchema(), frozenset({"TN301"}), "no input_schema attribute"),
    Entry(RaisingSchema(), frozenset({"TN301", "TN302", "TN303"}), "input_schema raises"),
    Entry(Schemed(("type", "object")), frozenset({"TN301"}), "a tuple instead of a dict"),
    Entry(Schemed(obj({"a": {"enum": {"x", "y"}}})), frozenset({"TN301"}), "a set inside"),
    Entry(Schemed(obj({"a": {"enum": ("x", "y")}})), frozenset({"TN301"}), "a tuple inside"),
    Entry(Schemed(obj({"a": {"type": "number", "maximum": float("nan")}})), frozenset({"TN301"}), "NaN"),
    Entry(Schemed({"type": "object", 1: STRING}), frozenset({"TN301"}), "a non-string key"),
    Entry(Schemed(obj({"a": {"default": object()}})), frozenset({"TN301"}), "an arbitrary object"),
    Entry(Schemed(nested(5000)), frozenset({"TN302"}), "5,000 levels deep", hostile=True),
    Entry(
        Schemed(obj({"a": {"type": "string", "enum": [str(i) for i in range(200_000)]}})),
        frozenset({"TN302"}),
        "200,000 enum values",
        hostile=True,
    ),
    Entry(Schemed(obj({"a": {"type": "strng"}})), frozenset({"TN303"}), "a misspelt type"),
    Entry(Schemed(obj({"a": {"type": "string", "pattern": "(["}})), frozenset({"TN303"}), "a broken regex"),
    Entry(Schemed({**obj({"a": STRING}), "required": "a"}), frozenset({"TN303"}), "required is a string"),
    Entry(
        Schemed({**obj({"a": STRING}), "$schema": "https://example.com/my-dialect"}),
        frozenset({"TN303"}),
        "an unknown $schema",
    ),
    Entry(Schemed({**obj({"a": STRING}), "$schema": 7}), frozenset({"TN303"}), "$schema not a string"),
    Entry(Schemed({"properties": {"a": STRING}}), frozenset({"TN304"}), "no top-level type"),
    Entry(Schemed({"type": "string"}), frozenset({"TN304", "TN402", "TN410", "TN421"}), "a bare string schema"),
    Entry(Schemed({"type": ["object", "null"], "properties": {}}), frozenset({"TN304"}), "a nullable root"),
    Entry(Schemed({"type": "object", "properties": ["a", "b"]}), frozenset({"TN305"}), "properties is a list"),
    Entry(Schemed(obj({"a": "string"})), frozenset({"TN305"}), "a property that is not a schema"),
    Entry(
        Schemed({"type": "object", "properties": {"a": STRING}, "required": ["a", "b"]}),
        frozenset({"TN306"}),
        "required names an undeclared property",
    ),
    Entry(
        Schemed(obj({"inner": {"type": "object", "properties": {"x": STRING}, "required": ["y"]}})),
        frozenset({"TN306"}),
        "a nested required name that is not declared",
    ),
    Entry(Schemed(obj({"a": {"$ref": "#/$defs/Missing"}}, **{"$defs": {}})), frozenset({"TN307"}), "a dangling $ref"),
    Entry(
        Schemed(obj({"a": {"$ref": "https://example.com/schemas/address.json"}})),
        frozenset({"TN307"}),
        "a remote $ref",
    ),
    Entry(Schemed(obj({"a": {"$ref": "#/properties/zz"}})), frozenset({"TN307"}), "a pointer to nothing"),
]
