"""A server whose ``crash`` tool kills the process mid-call, after a word on stderr."""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("crashy")
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY)
def fine() -> str:
    """Answer normally."""
    return "fine"


@server.tool(annotations=READ_ONLY)
def crash() -> str:
    """Exit the whole server with code 3."""
    sys.stderr.write("crashy: segfault imminent (simulated)\n")
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    server.run()
