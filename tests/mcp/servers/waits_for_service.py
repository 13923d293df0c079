"""A server whose tool needs a service (a database) and waits for it: each call tries
to connect to the service's port (its argument), and while nothing answers it logs the
failure on stderr and tries again, as a database driver's retry loop does. Given the
service, the call answers."""

from __future__ import annotations

import asyncio
import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

PORT = int(sys.argv[1])
server = MCPServer("waits_for_service")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def lookup(key: str) -> str:
    """Look the key up in the service."""
    while True:
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", PORT)
        except OSError as exc:
            print(f"lookup failed, retrying in 0.2s ({exc})", file=sys.stderr, flush=True)
            await asyncio.sleep(0.2)
            continue
        writer.close()
        return f"{key}: found"


if __name__ == "__main__":
    server.run()
