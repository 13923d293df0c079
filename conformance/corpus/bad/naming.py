"""Known-bad names and sources (TN10x), including hostile attributes that raise."""

from __future__ import annotations

from typing import Any

from toolnexus_ref import ToolResult
from toolnexus_conformance.corpus import Entry

OK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "The query."}},
    "required": ["q"],
    "additionalProperties": False,
}


class Plain:
    """A duck-typed tool with plain attributes; each entry breaks one of them."""

    def __init__(self, **attributes: Any) -> None:
        self.name = "plain_tool"
        self.description = "Echo the query back."
        self.input_schema = OK_SCHEMA
        self.source = "custom"
        for key, value in attributes.items():
            setattr(self, key, value)

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


class NoName:
    description = "A tool without a name."
    input_schema = OK_SCHEMA
    source = "custom"

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


class RaisingName(NoName):
    @property
    def name(self) -> str:
        raise RuntimeError("the name is computed from a server that is down")


class RaisingSource(Plain):
    @property
    def source(self) -> str:  # type: ignore[override]
        raise KeyError("source")

    @source.setter
    def source(self, value: str) -> None:
        pass


CORPUS = [
    Entry(NoName(), frozenset({"TN101"}), "no name attribute at all"),
    Entry(RaisingName(), frozenset({"TN101", "TN102", "TN103"}), "name property raises"),
    Entry(Plain(name=42), frozenset({"TN101", "TN102"}), "name is an int"),
    Entry(Plain(name=""), frozenset({"TN101", "TN401", "TN420", "TN430"}), "empty name"),
    Entry(Plain(name="get weather/now"), frozenset({"TN102", "TN401", "TN420", "TN430"}), "space and slash"),
    Entry(Plain(name="météo"), frozenset({"TN102"}), "non-ASCII letters"),
    Entry(
        Plain(name="github_" + "x" * 60),
        frozenset({"TN103", "TN401", "TN420", "TN430"}),
        "a prefixed MCP name past 64 characters",
    ),
    Entry(
        Plain(name="search"),
        frozenset({"TN104"}),
        "two tools named alike in one target",
        siblings=(Plain(name="search"),),
    ),
    Entry(Plain(source="plugin"), frozenset({"TN105"}), "unknown source name"),
    Entry(Plain(source=None), frozenset({"TN105"}), "source is None"),
    Entry(RaisingSource(), frozenset({"TN105"}), "source property raises"),
]
