"""The ``mcp_client`` fixture: an in-memory MCP client session around a list of tools.

Imports only the standard library and pytest; the mcp SDK loads when a test asks
for the fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

__all__ = ["mcp_client"]

McpClientFactory = Callable[..., AbstractAsyncContextManager[Any]]


@pytest.fixture
def mcp_client() -> McpClientFactory:
    """Open an in-memory MCP client session around tools, in one line.

    ``async with mcp_client(tools) as client:`` serves ``tools`` (a Tool, a list
    or a toolkit) through a real MCP server object and yields a connected
    ``mcp.Client``; ``mode="legacy"`` speaks the pre-2026 ``initialize``
    handshake over JSON-RPC streams instead. Needs ``pytest-toolnexus[mcp]``.
    """
    try:
        from toolnexus_ref.mcp import mcp_client as factory
    except ImportError as exc:
        pytest.fail(str(exc), pytrace=False)
    return factory
