"""A well-behaved low-level server: valid names, error results, honest output, cancellable."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False)
TOOLS = [
    types.Tool(
        name="lookup",
        description="Look up a word in the glossary and return its definition.",
        input_schema={
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "required": ["word"],
            "additionalProperties": False,
        },
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="count_words",
        description="Count the words in a text.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        },
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="wait",
        description="Wait up to half a second, stopping early when cancelled.",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 0.5}},
            "additionalProperties": False,
        },
        annotations=READ_ONLY,
    ),
]
GLOSSARY = {"tool": "a function a model may call"}


def text(value: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)], is_error=error)


def problems(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    properties = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in args:
            return f"missing required argument {key!r}"
    for key, value in args.items():
        if key not in properties:
            return f"unknown argument {key!r}"
        expected = properties[key].get("type")
        if expected == "string" and not isinstance(value, str):
            return f"{key!r} must be a string"
        if expected == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"{key!r} must be a number"
            low, high = properties[key].get("minimum"), properties[key].get("maximum")
            if (low is not None and value < low) or (high is not None and value > high):
                return f"{key!r} must be between {low} and {high}"
    return None


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    tool = next((t for t in TOOLS if t.name == params.name), None)
    if tool is None:
        return text(f"unknown tool {params.name!r}", error=True)
    args = params.arguments or {}
    problem = problems(tool.input_schema, args)
    if problem is not None:
        return text(f"Invalid arguments: {problem}", error=True)
    if tool.name == "lookup":
        word = args["word"]
        return text(GLOSSARY.get(word, f"{word!r} is not in the glossary"))
    if tool.name == "count_words":
        count = len(args["text"].split())
        return types.CallToolResult(
            content=[types.TextContent(text=str(count))], structured_content={"count": count}
        )
    await anyio.sleep(float(args.get("seconds", 0)))
    return text("waited")


server = Server("good", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
