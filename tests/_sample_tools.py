"""Two small tools shared by the fake-LLM and host-loop tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolnexus_ref import BaseTool, ToolContext


class Add(BaseTool):
    name = "add"
    description = "Add two integers."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return str(args["a"] + args["b"])


class Echo(BaseTool):
    name = "echo"
    description = "Repeat a text."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1}},
        "required": ["text"],
    }

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return args["text"]
