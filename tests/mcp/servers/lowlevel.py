"""A low-level SDK server that pages tools/list (2 tools a page) and marks a write tool."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PAGE = 2
TOOLS = [
    types.Tool(
        name=f"item{i}",
        description=f"Return item {i}.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    )
    for i in range(5)
] + [
    types.Tool(
        name="store",
        description="Store a value (writes, so not read-only).",
        input_schema={
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        },
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False),
    )
]


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE
    return types.ListToolsResult(
        tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name.startswith("item"):
        return types.CallToolResult(content=[types.TextContent(text=params.name)])
    if params.name == "store":
        value = (params.arguments or {}).get("value")
        return types.CallToolResult(content=[types.TextContent(text=f"stored {value}")])
    raise ValueError(f"no tool {params.name}")


server = Server("lowlevel", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
