"""MCP both ways: MCP servers' tools as Tools, and any Tools served as an MCP server.

Needs the ``mcp`` extra; everything else in ``toolnexus_ref`` works without it.
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401
    import mcp_types as _mcp_types  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError('MCP support needs the mcp SDK: pip install "pytest-toolnexus[mcp]"') from exc

from .._mcp_config import (
    DEFAULT_TIMEOUT,
    McpConfigError,
    ServerConfig,
    load_mcp_json,
    parse_mcp_config,
)
from .._secret import Secret, redact
from ._connection import ServerConnection, ServerStatus
from ._server import build_server, http_app, mcp_client, run_http, serve_stdio
from ._source import (
    McpSource,
    listed_servers,
    open_http,
    open_in_memory,
    open_mcp_json,
    open_servers,
    open_stdio,
    stdio_config,
)
from ._stdio import Launcher
from ._tool import McpTool, exposed_name

__all__ = [
    "Launcher",
    "DEFAULT_TIMEOUT",
    "McpConfigError",
    "McpSource",
    "McpTool",
    "Secret",
    "ServerConfig",
    "ServerConnection",
    "ServerStatus",
    "build_server",
    "exposed_name",
    "http_app",
    "listed_servers",
    "load_mcp_json",
    "mcp_client",
    "open_http",
    "open_in_memory",
    "open_mcp_json",
    "open_servers",
    "open_stdio",
    "parse_mcp_config",
    "redact",
    "run_http",
    "serve_stdio",
    "stdio_config",
]
