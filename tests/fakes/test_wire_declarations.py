"""The wire modules and the toolkit declare tools identically: one vector file for both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolnexus_ref.wire import anthropic, gemini, openai
from toolnexus_ref.wire._model import ToolDecl

VECTORS = json.loads(
    (
        Path(__file__).resolve().parents[2] / "conformance" / "vectors" / "declarations.json"
    ).read_text()
)
DECLS = [ToolDecl(t["name"], t["description"], t["input_schema"]) for t in VECTORS["tools"]]


@pytest.mark.parametrize(
    ("module", "key"),
    [(openai, "openai"), (anthropic, "anthropic"), (gemini, "gemini_json_schema")],
    ids=["openai", "anthropic", "gemini"],
)
def test_wire_declarations_match_the_toolkit_vectors(module: Any, key: str) -> None:
    expected = VECTORS[key]
    if key.startswith("gemini"):  # one wrapper; the vector covers some of the tools
        names = [d["name"] for d in expected["functionDeclarations"]]
        assert module.declarations([d for d in DECLS if d.name in names]) == [expected]
    else:
        assert module.declarations(DECLS) == expected


def test_toolkit_and_wire_declare_gemini_from_one_function() -> None:
    from _sample_tools import Add

    from toolnexus_ref.toolkit import gemini_declaration

    tool = Add()
    decl = ToolDecl(tool.name, tool.description, dict(tool.input_schema))
    assert (
        gemini_declaration(tool, json_schema=True)
        == gemini.declarations([decl])[0]["functionDeclarations"][0]
    )
    assert gemini_declaration(tool) == gemini.function_declaration(decl, json_schema=False)
