"""An MCP server over streamable HTTP on loopback, with or without DNS-rebinding protection.

``--open`` turns the SDK's Host/Origin validation off, as a server built on a bare
HTTP stack (or with ``host="0.0.0.0"`` settings) ends up: it answers any ``Host`` and
any ``Origin``. Prints ``listening on <url>`` on stderr once ready.
"""

from __future__ import annotations

import asyncio
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations

from toolnexus_ref.mcp._server import bind

server = MCPServer("origin")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text."""
    return text


def main() -> None:
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    if "--open" in sys.argv:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    else:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
        )
    app = server.streamable_http_app(transport_security=security)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    sys.stderr.write(f"listening on http://127.0.0.1:{port}/mcp\n")
    sys.stderr.flush()
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
