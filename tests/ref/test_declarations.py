"""Declarations: the vectors' exact shapes, plain data out, and no aliasing with the tool."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from toolnexus_ref import ToolResult
from toolnexus_ref.toolkit import (
    Toolkit,
    anthropic_declaration,
    gemini_declaration,
    gemini_declarations,
    openai_declaration,
    openai_declarations,
)

VECTORS = json.loads(
    (Path(__file__).parents[2] / "conformance" / "vectors" / "declarations.json").read_text(
        encoding="utf-8"
    )
)


@dataclass
class DeclaredTool:
    name: str
    description: str
    input_schema: Any
    source: str = "custom"
    calls: list[Mapping[str, Any]] = field(default_factory=list)

    def execute(self, args: Mapping[str, Any], ctx: object = None) -> ToolResult:
        return ToolResult.ok("ok")


def vector_tools(names: set[str] | None = None) -> list[DeclaredTool]:
    return [
        DeclaredTool(t["name"], t["description"], copy.deepcopy(t["input_schema"]))
        for t in VECTORS["tools"]
        if names is None or t["name"] in names
    ]


def names_in(declarations: list[dict[str, Any]]) -> set[str]:
    return {d.get("name") or d["function"]["name"] for d in declarations}


def test_openai_shape_matches_vector() -> None:
    assert Toolkit(vector_tools()).to_openai() == VECTORS["openai"]


def test_openai_strict_only_adds_the_flag() -> None:
    expected = VECTORS["openai_strict"]
    assert Toolkit(vector_tools(names_in(expected))).to_openai(strict=True) == expected


def test_anthropic_shape_matches_vector() -> None:
    assert Toolkit(vector_tools()).to_anthropic() == VECTORS["anthropic"]


def test_gemini_is_one_wrapper_matching_vector() -> None:
    assert Toolkit(vector_tools()).to_gemini() == VECTORS["gemini"]


def test_gemini_json_schema_variant_matches_vector() -> None:
    expected = VECTORS["gemini_json_schema"]
    tools = vector_tools(names_in(expected["functionDeclarations"]))
    assert Toolkit(tools).to_gemini(json_schema=True) == expected


def test_module_functions_agree_with_toolkit_methods() -> None:
    tools = vector_tools()
    assert openai_declarations(tools) == [openai_declaration(t) for t in tools]
    assert [anthropic_declaration(t) for t in tools] == VECTORS["anthropic"]
    assert gemini_declarations(tools)["functionDeclarations"] == [
        gemini_declaration(t) for t in tools
    ]


def test_declarations_are_json_round_trippable_plain_data() -> None:
    schema = MappingProxyType(
        {"type": "object", "properties": MappingProxyType({"x": {"enum": ("a", "b")}})}
    )
    tool = DeclaredTool("t", "d", schema)
    for declaration in (
        openai_declaration(tool),
        anthropic_declaration(tool),
        gemini_declaration(tool),
    ):
        assert json.loads(json.dumps(declaration)) == declaration
    assert anthropic_declaration(tool)["input_schema"]["properties"]["x"]["enum"] == ["a", "b"]


@pytest.mark.parametrize(
    ("emit", "path"),
    [
        (lambda t: openai_declaration(t), ("function", "parameters")),
        (lambda t: anthropic_declaration(t), ("input_schema",)),
        (lambda t: gemini_declaration(t), ("parameters",)),
        (lambda t: gemini_declaration(t, json_schema=True), ("parametersJsonSchema",)),
    ],
)
def test_editing_a_declaration_never_edits_the_tool(emit: Any, path: tuple[str, ...]) -> None:
    tool = vector_tools({"get_weather"})[0]
    before = copy.deepcopy(tool.input_schema)
    declared = emit(tool)
    for key in path:
        declared = declared[key]
    declared["properties"]["city"]["type"] = "integer"
    declared["required"].append("unit")
    assert tool.input_schema == before


def test_a_tool_without_schema_is_declared_as_taking_nothing() -> None:
    tool = DeclaredTool("t", "d", None)
    assert anthropic_declaration(tool)["input_schema"] == {"type": "object", "properties": {}}


def test_empty_toolkit_declares_nothing() -> None:
    kit = Toolkit()
    assert kit.to_openai() == []
    assert kit.to_anthropic() == []
    assert kit.to_gemini() == {"functionDeclarations": []}
