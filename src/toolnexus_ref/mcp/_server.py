"""The mirror: any list of Tools served as an MCP server (in memory, stdio, streamable HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import mcp_types
from mcp import Client, MCPError
from mcp.server.lowlevel import Server
from mcp_types import INVALID_PARAMS

from .._calling import call_tool
from .._context import ToolContext
from .._output import to_jsonable
from .._tool import annotations_of

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["build_server", "http_app", "mcp_client", "run_http", "serve_stdio"]

#: ``_meta`` key under which a served result's metadata travels, when it is JSON.
METADATA_KEY = "io.toolnexus/metadata"
CANCELLED_BY_CLIENT = "cancelled by the MCP client"


def _as_tool_list(tools: Any) -> list[Any]:
    """The tools to serve, by the one rule for what a value holds."""
    from toolnexus_ref._resolve import as_tools

    return as_tools(tools, label="the tools to serve")


def _declaration(tool: Any) -> mcp_types.Tool:
    hints = annotations_of(tool)
    annotations = None
    if any(
        v is not None
        for v in (
            hints.read_only,
            hints.destructive,
            hints.idempotent,
            hints.open_world,
            hints.title,
        )
    ):
        annotations = mcp_types.ToolAnnotations(
            title=hints.title,
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            idempotent_hint=hints.idempotent,
            open_world_hint=hints.open_world,
        )
    return mcp_types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=dict(tool.input_schema),
        annotations=annotations,
    )


def build_server(
    tools: Any,
    *,
    name: str = "toolnexus",
    version: str = "",
    page_size: int | None = None,
    timeout: float | None = None,
) -> Server[Any]:
    """A low-level SDK server whose ``tools/list`` gives the tools' declarations verbatim.

    ``tools/call`` runs the tool through ``call_tool``: an exception inside it comes
    back as an error result, and when the client cancels the request the tool's
    context is cancelled. ``page_size`` pages ``tools/list`` (for testing clients);
    ``timeout`` bounds every call.
    """
    listed = _as_tool_list(tools)
    by_name: dict[str, Any] = {}
    for tool in listed:
        if tool.name in by_name:
            raise ValueError(f"two tools are named {tool.name!r}; MCP tool names must be unique")
        by_name[tool.name] = tool
    declarations = [_declaration(tool) for tool in listed]

    async def on_list_tools(
        ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        if page_size is None:
            return mcp_types.ListToolsResult(tools=declarations)
        cursor = params.cursor if params is not None else None
        try:
            start = int(cursor) if cursor else 0
        except ValueError:
            raise MCPError(INVALID_PARAMS, f"invalid cursor {cursor!r}") from None
        end = start + page_size
        more = str(end) if end < len(declarations) else None
        return mcp_types.ListToolsResult(tools=declarations[start:end], next_cursor=more)

    async def on_call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        context = ToolContext()
        try:
            result = await call_tool(tool, params.arguments or {}, context, timeout=timeout)
        except asyncio.CancelledError:
            context.cancel(CANCELLED_BY_CLIENT)  # a sync tool in its thread hears it too
            raise
        meta: dict[str, Any] | None = None
        if result.metadata:
            with contextlib.suppress(TypeError):
                meta = {METADATA_KEY: to_jsonable(result.metadata)}
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=result.output)],
            is_error=result.is_error,
            _meta=meta,
        )

    return Server(name, version=version, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


@contextlib.asynccontextmanager
async def mcp_client(
    tools: Any, *, mode: str = "auto", name: str = "toolnexus", page_size: int | None = None
) -> AsyncIterator[Client]:
    """An in-process MCP client session around ``tools``.

    ``mode="legacy"`` runs the JSON-RPC stream loop with the ``initialize``
    handshake, as a pre-2026 client would see the server.
    """
    async with Client(build_server(tools, name=name, page_size=page_size), mode=mode) as client:
        yield client


async def serve_stdio(tools: Any, *, name: str = "toolnexus") -> None:
    """Serve over this process's stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    server = build_server(tools, name=name)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_app(
    tools: Any, *, name: str = "toolnexus", path: str = "/mcp", host: str = "127.0.0.1"
) -> Starlette:
    """An ASGI app serving ``tools`` over streamable HTTP at ``path``.

    ``host`` picks the DNS-rebinding protection the SDK applies for loopback hosts.
    """
    return build_server(tools, name=name).streamable_http_app(streamable_http_path=path, host=host)


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening socket; port 0 picks a free port (read it back from ``getsockname``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def run_http(
    tools: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    name: str = "toolnexus",
    on_ready: Callable[[str], None] | None = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve ``tools`` over streamable HTTP with uvicorn until interrupted.

    ``on_ready`` receives the endpoint URL once the socket listens (port 0 included).
    """
    import uvicorn

    listening = sock or bind(host, port)
    bound_host, bound_port = listening.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    url = f"http://{shown}:{bound_port}{path}"
    app = http_app(tools, name=name, path=path, host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(url)
    asyncio.run(server.serve(sockets=[listening]))
