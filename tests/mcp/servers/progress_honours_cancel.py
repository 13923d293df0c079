"""A low-level SDK server whose ``crunch`` reports progress and stops when cancelled.

The handler awaits between progress reports, so the SDK's handling of
``notifications/cancelled`` interrupts it: no progress follows a cancellation.
``quiet`` sleeps without reporting progress at all (nothing for TN752 to judge).
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False)
EMPTY = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(
        name="crunch", description="Crunch numbers.", input_schema=EMPTY, annotations=READ_ONLY
    ),
    types.Tool(
        name="quiet", description="Wait quietly.", input_schema=EMPTY, annotations=READ_ONLY
    ),
]
STEPS = 60
STEP = 0.05


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "crunch":
        for step in range(STEPS):
            await ctx.session.report_progress(step, STEPS)
            await anyio.sleep(STEP)
        return types.CallToolResult(content=[types.TextContent(text="crunched")])
    if params.name == "quiet":
        await anyio.sleep(STEPS * STEP)
        return types.CallToolResult(content=[types.TextContent(text="done")])
    raise ValueError(f"no tool {params.name}")


server = Server("progress", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
