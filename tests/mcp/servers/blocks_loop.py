"""A server one of whose tools blocks its event loop for good: ``block`` runs
``time.sleep`` in ``async def``, so the server answers nothing after, not even a ping,
and every other tool's calls wait in vain. ``fine`` and ``echo`` are healthy."""

from __future__ import annotations

import time

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("blocks_loop")
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY)
async def fine() -> str:
    """Answer normally."""
    return "fine"


@server.tool(annotations=READ_ONLY)
async def echo(text: str = "") -> str:
    """Echo the text."""
    return text


@server.tool(annotations=READ_ONLY)
async def block() -> str:
    """Block the whole server (a synchronous wait inside async code)."""
    time.sleep(3600)
    return "never"


if __name__ == "__main__":
    server.run()
