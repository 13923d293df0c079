"""A server whose exits depend on what earlier calls left in it, so no call replayed
alone on a fresh server ends it: ``count`` ends the process on its 10th call, and
``fire`` ends it once ``arm`` has been called (as arxiv-mcp-server exits when a read
of a paper another tool downloaded is cancelled)."""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("state_crash")
READ_ONLY = ToolAnnotations(read_only_hint=True)
CALLS = {"count": 0}
ARMED: list[bool] = []


@server.tool(annotations=READ_ONLY)
def fine() -> str:
    """Answer normally."""
    return "fine"


@server.tool(annotations=READ_ONLY)
def count() -> str:
    """Count the calls; the 10th ends the server."""
    CALLS["count"] += 1
    if CALLS["count"] >= 10:
        os._exit(6)
    return str(CALLS["count"])


@server.tool(annotations=READ_ONLY)
def arm() -> str:
    """Arm ``fire``."""
    ARMED.append(True)
    return "armed"


@server.tool(annotations=READ_ONLY)
def fire() -> str:
    """End the server once armed."""
    if ARMED:
        os._exit(7)
    return "not armed"


if __name__ == "__main__":
    server.run()
