"""Fixtures for the fake-LLM tests."""

from __future__ import annotations

import pytest
from _sample_tools import Add, Echo

from toolnexus_ref import BaseTool


@pytest.fixture
def tools() -> list[BaseTool]:
    return [Add(), Echo()]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
