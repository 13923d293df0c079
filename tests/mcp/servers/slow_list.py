"""A server that answers the handshake at once but takes ``argv[1]`` seconds to list tools."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    await anyio.sleep(DELAY)
    return types.ListToolsResult(
        tools=[types.Tool(name="late", description="Listed late.", input_schema={"type": "object"})]
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text="late")])


server = Server("slow_list", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
