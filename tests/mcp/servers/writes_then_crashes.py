"""A server whose ``crash`` tool leaves a file where it runs, then ends the process:
the calls that replay it to find what ended the server write it too, unless they run
in the sandbox the first process ran in."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("writes_then_crashes")
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY)
def fine() -> str:
    """Answer normally."""
    return "fine"


@server.tool(annotations=READ_ONLY)
def crash() -> str:
    """Write a file in the working directory, then exit the whole server."""
    try:
        Path(sys.argv[1]).joinpath("written-by-crash").write_text("here")
    except OSError as exc:
        print(f"writes_then_crashes: {exc}", file=sys.stderr, flush=True)
    os._exit(3)


if __name__ == "__main__":
    server.run()
