"""Agents served on loopback for the A2A tests, with the a2a SDK's own server components."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("a2a", reason="the A2A tests need the a2a extra")

from _a2a_agents import good_tools

from toolnexus_ref.a2a import LoopbackAgent, serve_loopback


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def good_agent() -> Iterator[LoopbackAgent]:
    with serve_loopback(good_tools(), name="helper agent") as agent:
        yield agent
