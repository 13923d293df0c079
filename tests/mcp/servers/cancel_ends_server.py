"""A server whose ``stubborn`` tool, cancelled, ends the whole process a moment after
the cancel, as arxiv-mcp-server does on the mcp SDK 1.x (its handler goes on past the
cancel and answers after all, and the SDK's session fails on the second answer).
Called and left to finish, it answers."""

from __future__ import annotations

import os
import threading

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("cancel_ends_server")
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY)
def fine() -> str:
    """Answer normally."""
    return "fine"


@server.tool(annotations=READ_ONLY)
async def stubborn() -> str:
    """Take two seconds to answer."""
    try:
        await anyio.sleep(2.0)
    except anyio.get_cancelled_exc_class():
        threading.Timer(0.3, os._exit, (5,)).start()
        raise
    return "done"


if __name__ == "__main__":
    server.run()
