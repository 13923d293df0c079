"""A server that exits on its own half a second after it starts, whatever it is sent."""

from __future__ import annotations

import os
import sys
import threading

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("exit_soon")
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Echo the text."""
    return text


@server.tool(annotations=READ_ONLY)
def length(text: str) -> int:
    """The length of the text."""
    return len(text)


def _leave() -> None:
    sys.stderr.write("exit_soon: lease expired, exiting (simulated)\n")
    sys.stderr.flush()
    os._exit(2)


if __name__ == "__main__":
    threading.Timer(0.5, _leave).start()
    server.run()
