"""A server that opens a log file in its working directory before it serves, as some do
in their own installation (excel-mcp-server, at import): where that folder is read-only,
it never starts. Otherwise it serves one healthy tool."""

from __future__ import annotations

import sys
from pathlib import Path

log = Path("writes_at_start.log").open("a")  # noqa: SIM115  (kept open, as a logging handler)
log.write("started\n")
log.flush()

from mcp.server.mcpserver import MCPServer  # noqa: E402  (the write comes first)
from mcp_types import ToolAnnotations  # noqa: E402

server = MCPServer("writes_at_start")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    sys.stderr.write("writes_at_start: serving\n")
    server.run()
