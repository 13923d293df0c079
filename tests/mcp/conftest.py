"""What the MCP tests share: the anyio backend (the SDK is anyio-based; we run it on
asyncio), and a background event loop for the checks that call servers from it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from toolnexus_conformance.live._loop import BackgroundLoop


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def loop() -> Iterator[BackgroundLoop]:
    """An event loop on a thread of its own, closed after the test."""
    owner = BackgroundLoop()
    yield owner
    owner.close()
