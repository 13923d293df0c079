"""A server that connects to a service as it starts (a database, an API it checks its
key with) and will not start without it. The service's port is its argument; given
it, it serves one healthy tool."""

from __future__ import annotations

import socket
import sys

socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()

from mcp.server.mcpserver import MCPServer  # noqa: E402  (the connection comes first)
from mcp_types import ToolAnnotations  # noqa: E402

server = MCPServer("needs_network")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run()
