"""MCP tools whose server-side names break the contract, the MCP rule, or the 64-character limit.

These are duck-typed stand-ins for ``toolnexus_ref.mcp.McpTool``: the naming checks
read only the declaration and ``conformance_extra()``, never the connection.
"""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.corpus import Entry
from toolnexus_ref import ToolResult, sanitize


class RemoteTool:
    source = "mcp"
    description = "A tool served by an MCP server."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, server: str, original: str) -> None:
        self.server_name = server
        self.original_name = original
        self.name = f"{sanitize(server)}_{sanitize(original)}"

    def conformance_extra(self) -> dict[str, Any]:
        return {"original_name": self.original_name, "server_name": self.server_name}

    async def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


CORPUS = [
    Entry(
        RemoteTool("files", "read.file"),
        frozenset({"TN151"}),
        "a dotted name: valid MCP, refused by OpenAI and Anthropic",
    ),
    Entry(
        RemoteTool("files", "read file"),
        frozenset({"TN151", "TN152"}),
        "a space: neither MCP nor the providers allow it",
    ),
    Entry(
        RemoteTool("a-very-long-server-name-for-documents", "search_documents_by_full_text"),
        frozenset({"TN153"}),
        "server and tool names that pass 64 characters once prefixed",
    ),
]
