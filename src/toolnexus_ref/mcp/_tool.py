"""An MCP server's tool as a Tool of the contract."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._context import ToolContext
from .._naming import Source, sanitize
from .._result import ToolResult
from .._tool import ToolAnnotations

if TYPE_CHECKING:
    import mcp_types

    from ._connection import ServerConnection

__all__ = ["McpTool", "exposed_name"]


def exposed_name(server: str, tool: str) -> str:
    """The name a model sees: ``sanitize(server) + "_" + sanitize(tool)``, never truncated."""
    return f"{sanitize(server)}_{sanitize(tool)}"


def _annotations(tool: mcp_types.Tool) -> ToolAnnotations:
    hints = tool.annotations
    title = tool.title or (hints.title if hints is not None else None)
    if hints is None:
        return ToolAnnotations(title=title)
    return ToolAnnotations(
        read_only=hints.read_only_hint,
        destructive=hints.destructive_hint,
        idempotent=hints.idempotent_hint,
        open_world=hints.open_world_hint,
        title=title,
    )


class McpTool:
    """One tool of a connected server. ``execute`` never raises for what the server does.

    The declaration (description, input schema, output schema) is the server's,
    verbatim; only the name is prefixed and sanitized, and ``original_name`` keeps
    what the server called it, so the checks can judge the server's own choice.
    """

    source: str = Source.MCP.value

    def __init__(self, connection: ServerConnection, declared: mcp_types.Tool) -> None:
        self._connection = connection
        self._declared = declared
        self.name = exposed_name(connection.config.name, declared.name)
        self.original_name = declared.name
        self.server_name = connection.config.name
        self.description = declared.description or ""
        self.input_schema: Mapping[str, Any] = declared.input_schema
        self.output_schema: Mapping[str, Any] | None = declared.output_schema
        self.annotations = _annotations(declared)
        #: One wall-clock budget per call in seconds, or ``None`` (the context's deadline rules).
        self.timeout: float | None = None
        #: ``execution.taskSupport`` as declared: ``"required"`` means a plain call is refused.
        execution = declared.execution
        self.task_support: str | None = execution.task_support if execution is not None else None

    def __repr__(self) -> str:
        return f"<McpTool {self.name!r} server={self.server_name!r} tool={self.original_name!r}>"

    @property
    def connection(self) -> ServerConnection:
        return self._connection

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        return await self._connection.call(self._declared, args, ctx, timeout=self.timeout)

    def conformance_extra(self) -> dict[str, Any]:
        """What the MCP checks read beside the declaration."""
        return {
            "original_name": self.original_name,
            "server_name": self.server_name,
            "output_schema": self.output_schema,
            "annotations": self.annotations,
            "server_status": self._connection.status,
            "connection": self._connection,
            "task_support": self.task_support,
        }
