"""The anyio backend for the MCP tests (the SDK is anyio-based; we run it on asyncio)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
