"""A server that reads its settings from a file in the user's home folder as it starts
(many keep them under ``~/.config``): with none there, it never starts. Otherwise it
serves one healthy tool."""

from __future__ import annotations

from pathlib import Path

settings = (Path.home() / ".needs_home.toml").read_text()  # raises where there is none

from mcp.server.mcpserver import MCPServer  # noqa: E402  (the read comes first)
from mcp_types import ToolAnnotations  # noqa: E402

server = MCPServer("needs_home")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run()
