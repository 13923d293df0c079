"""A server that will not start without its token, as many that wrap an API do
(server-brave-search: "BRAVE_API_KEY environment variable is required"). Given it,
it serves one healthy tool."""

from __future__ import annotations

import os
import sys

if not os.environ.get("NEEDS_VARIABLE_TOKEN"):
    sys.exit("NEEDS_VARIABLE_TOKEN environment variable is required")

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("needs_variable")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run()
