"""A server that exits only when two calls overlap: ``strike`` ends it while a ``hold``
call is in flight. No call replayed alone, nor the calls replayed one at a time in the
order sent, ends a fresh server; each tool explored alone passes."""

from __future__ import annotations

import asyncio
import os

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("race_crash")
READ_ONLY = ToolAnnotations(read_only_hint=True)
HOLDING: list[bool] = []


@server.tool(annotations=READ_ONLY)
def fine() -> str:
    """Answer normally."""
    return "fine"


@server.tool(annotations=READ_ONLY)
async def hold() -> str:
    """Take a while to answer."""
    HOLDING.append(True)
    try:
        await asyncio.sleep(0.3)
    finally:
        HOLDING.pop()
    return "held"


@server.tool(annotations=READ_ONLY)
def strike() -> str:
    """End the server while a ``hold`` call is in flight."""
    if HOLDING:
        os._exit(8)
    return "struck nothing"


if __name__ == "__main__":
    server.run()
