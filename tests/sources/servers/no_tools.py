"""An MCP server that starts, answers, and lists no tools at all."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("no-tools")

if __name__ == "__main__":
    server.run()
