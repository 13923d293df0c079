"""A well-behaved server on the SDK's high-level MCPServer: read-only tools, honest results."""

from __future__ import annotations

import base64

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ImageContent, TextContent, ToolAnnotations

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
server = MCPServer("highlevel")


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=READ_ONLY)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(annotations=READ_ONLY)
async def wait(seconds: float) -> str:
    """Sleep for a while, cancellably; used to test cancellation and deadlines."""
    await anyio.sleep(min(seconds, 30))
    return "waited"


@server.tool(annotations=READ_ONLY, structured_output=False)
def picture() -> list[TextContent | ImageContent]:
    """Return a caption and a tiny PNG."""
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8).decode()
    return [TextContent(text="a picture"), ImageContent(data=png, mime_type="image/png")]


if __name__ == "__main__":
    server.run()
